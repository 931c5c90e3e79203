package mcpserver

// LineSizeMethod is a notification a client may send just before a long line: its
// params {"bytes": N} give that line's length, its newline included, so that the reader
// takes the line's memory whole and at once, instead of in pieces it then joins (for a
// 30 MB write, 30 MB copied and as much memory touched again). It is never answered; a
// size that is wrong, or above the line limit, costs only the pieces. agentlink.Client
// and the pi package's client send it before every line of LineSizeMin bytes or more.
const LineSizeMethod = "pi-sbx/lineSize"

// LineSizeMin is the length from which a client announces a line.
const LineSizeMin = 1 << 20
