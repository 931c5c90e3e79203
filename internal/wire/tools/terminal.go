package tools

import (
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// The terminal tools: commands that keep running between calls (dev servers, watchers,
// REPLs, prompts), run by the agent in the VM. Names and parameters follow codex's
// unified exec (exec_command, write_stdin) where they overlap, so models already know
// them. serve offers them only to clients that ask (`serve --tools +terminal`).
const (
	ExecCommandName    = "exec_command"
	WriteStdinName     = "write_stdin"
	ReadOutputName     = "read_output"
	KillSessionName    = "kill_session"
	ListSessionsName   = "list_sessions"
	TerminalResizeName = "pi_sbx_terminal_resize"
)

// Yield and wait bounds of the terminal tools, in milliseconds.
const (
	ExecYieldDefault  = 10_000
	WriteYieldDefault = 250
	YieldMin          = 250
	YieldMax          = 30_000
	ReadWaitMax       = 300_000
	ReadWaitUntil     = 30_000 // read_output's wait_ms when until_regex is given without one
)

// ExecCommandArgs are exec_command's arguments.
type ExecCommandArgs struct {
	Cmd             string            `json:"cmd"`
	Workdir         string            `json:"workdir,omitempty"`
	Env             map[string]string `json:"env,omitempty"`
	TTY             bool              `json:"tty,omitempty"`
	Cols            uint16            `json:"cols,omitempty"`
	Rows            uint16            `json:"rows,omitempty"`
	YieldTimeMs     *int              `json:"yield_time_ms,omitempty"`
	MaxOutputTokens *int              `json:"max_output_tokens,omitempty"`
	TimeoutS        *float64          `json:"timeout_s,omitempty"`
}

// WriteStdinArgs are write_stdin's arguments.
type WriteStdinArgs struct {
	SessionID       int    `json:"session_id"`
	Chars           string `json:"chars"`
	YieldTimeMs     *int   `json:"yield_time_ms,omitempty"`
	MaxOutputTokens *int   `json:"max_output_tokens,omitempty"`
}

// ReadOutputArgs are read_output's arguments.
type ReadOutputArgs struct {
	SessionID       int    `json:"session_id"`
	WaitMs          *int   `json:"wait_ms,omitempty"`
	UntilRegex      string `json:"until_regex,omitempty"`
	SinceOffset     *int64 `json:"since_offset,omitempty"`
	TailLines       *int   `json:"tail_lines,omitempty"`
	MaxOutputTokens *int   `json:"max_output_tokens,omitempty"`
}

// KillSessionArgs are kill_session's arguments.
type KillSessionArgs struct {
	SessionID int    `json:"session_id"`
	Signal    string `json:"signal,omitempty"`
}

// TerminalResizeArgs are pi_sbx_terminal_resize's arguments.
type TerminalResizeArgs struct {
	SessionID int    `json:"session_id"`
	Cols      uint16 `json:"cols"`
	Rows      uint16 `json:"rows"`
}

// Session returns the session the call names.
func (a WriteStdinArgs) Session() int { return a.SessionID }

// Session returns the session the call names.
func (a ReadOutputArgs) Session() int { return a.SessionID }

// Session returns the session the call names.
func (a KillSessionArgs) Session() int { return a.SessionID }

// Session returns the session the call names.
func (a TerminalResizeArgs) Session() int { return a.SessionID }

// Signals are the names kill_session takes.
var Signals = []string{"TERM", "KILL", "INT", "HUP", "QUIT", "USR1", "USR2", "STOP", "CONT"}

func sessionID() *jsonschema.Schema {
	return Integer("The session_id an exec_command reply gave")
}

func maxOutputTokens() *jsonschema.Schema {
	return Integer("Cap on the output text returned, in tokens of about 4 bytes (default and most: pi's 50KB or 2000 lines, the newest kept)")
}

// Terminal returns the descriptions of the terminal tools offered to models.
func Terminal() []*Tool {
	return []*Tool{ExecCommand(), WriteStdin(), ReadOutput(), KillSession(), ListSessions()}
}

// ExecCommand describes exec_command.
func ExecCommand() *Tool {
	return &Tool{
		Name: ExecCommandName,
		Description: "Run a shell command in the sandbox (bash -c) and return its output so far: the exit code if it finished " +
			"within yield_time_ms, else a session_id while it keeps running (a dev server, a watcher, a test run, a REPL). " +
			"Continue with read_output (wait until a pattern such as 'listening on' appears, or until it exits), write_stdin " +
			"(type into it; needs tty:true) and kill_session. Without tty, stdin is /dev/null, so a command that reads stdin " +
			"gets end-of-file instead of hanging. Output is shown as the terminal showed it (colours stripped, progress bars " +
			"collapsed to their last state), the newest 50KB or 2000 lines; the raw log stays in the sandbox at the path the reply names.",
		Schema: inOrder([]string{"cmd", "workdir", "env", "tty", "cols", "rows", "yield_time_ms", "max_output_tokens", "timeout_s"},
			Object([]string{"cmd"}, map[string]*jsonschema.Schema{
				"cmd":     String("Shell command to execute"),
				"workdir": String("Working directory (default: the session's working directory; relative to it)"),
				"env": {Type: "object", Description: "Extra environment variables for the command",
					AdditionalProperties: &jsonschema.Schema{Type: "string"}},
				"tty":               Boolean("Run on a pseudo-terminal (stdin, stdout, stderr), so that write_stdin can type into it and programs behave interactively (default: false: pipes, stdin /dev/null)"),
				"cols":              termSize("Terminal width in columns with tty (default 80)"),
				"rows":              termSize("Terminal height in rows with tty (default 24)"),
				"yield_time_ms":     Integer(fmt.Sprintf("How long to wait for the command to finish before returning its session_id (default %d; clamped to %d-%d)", ExecYieldDefault, YieldMin, YieldMax)),
				"max_output_tokens": maxOutputTokens(),
				"timeout_s":         Number("Kill the command's process group after this many seconds (default: no timeout; it runs until it exits or kill_session)"),
			})),
	}
}

// WriteStdin describes write_stdin.
func WriteStdin() *Tool {
	return &Tool{
		Name: WriteStdinName,
		Description: "Type characters into a running exec_command session started with tty:true (\"\\n\" is Enter, " +
			"\"\\u0003\" Ctrl-C, \"\\u0004\" Ctrl-D), then wait yield_time_ms and return the new output and the exit code if " +
			"it finished. Empty chars only polls for new output.",
		Schema: inOrder([]string{"session_id", "chars", "yield_time_ms", "max_output_tokens"},
			Object([]string{"session_id"}, map[string]*jsonschema.Schema{
				"session_id":        sessionID(),
				"chars":             String("Characters to type (may be empty to poll)"),
				"yield_time_ms":     Integer(fmt.Sprintf("How long to wait for output after writing (default %d; clamped to %d-%d)", WriteYieldDefault, YieldMin, YieldMax)),
				"max_output_tokens": maxOutputTokens(),
			})),
	}
}

// ReadOutput describes read_output.
func ReadOutput() *Tool {
	return &Tool{
		Name: ReadOutputName,
		Description: "Read an exec_command session's output since the last read (or since_offset), waiting up to wait_ms: " +
			"the wait ends as soon as until_regex matches the output (e.g. 'listening on|ready in') or the command exits, " +
			"so one call replaces a polling loop. Works on finished sessions too (kept 10 minutes after they exit).",
		Schema: inOrder([]string{"session_id", "wait_ms", "until_regex", "since_offset", "tail_lines", "max_output_tokens"},
			Object([]string{"session_id"}, map[string]*jsonschema.Schema{
				"session_id":        sessionID(),
				"wait_ms":           Integer(fmt.Sprintf("How long to wait at most, in ms (default 0, or %d with until_regex; at most %d)", ReadWaitUntil, ReadWaitMax)),
				"until_regex":       String("Return as soon as the output since the read's start matches this regular expression (RE2 syntax, matched line by line)"),
				"since_offset":      Integer("Byte offset in the raw output to read from (a reply's next_offset; 0: from the start, as far as memory holds it)"),
				"tail_lines":        Integer("Return only the last N lines"),
				"max_output_tokens": maxOutputTokens(),
			})),
	}
}

// KillSession describes kill_session.
func KillSession() *Tool {
	return &Tool{
		Name: KillSessionName,
		Description: "Signal an exec_command session's whole process group (the command and everything it started). " +
			"Without signal: TERM, then KILL after 2 seconds if it is still running. Returns the last output and the exit code.",
		Schema: inOrder([]string{"session_id", "signal"},
			Object([]string{"session_id"}, map[string]*jsonschema.Schema{
				"session_id": sessionID(),
				"signal":     enum("Signal to send (default: TERM, then KILL)", Signals...),
			})),
	}
}

// ListSessions describes list_sessions.
func ListSessions() *Tool {
	return &Tool{
		Name:        ListSessionsName,
		Description: "List the exec_command sessions in the sandbox: id, command, running or exit code, output size, log path.",
		Schema:      noArgs(),
	}
}

// TerminalResize describes pi_sbx_terminal_resize, a serve method for editors showing a
// session's terminal (not offered to models).
func TerminalResize() *Tool {
	return &Tool{
		Name: TerminalResizeName,
		Description: "Resize the terminal of an exec_command session started with tty:true: its command gets SIGWINCH. " +
			"Not offered in tools/list.",
		Schema: Object([]string{"session_id", "cols", "rows"}, map[string]*jsonschema.Schema{
			"session_id": sessionID(),
			"cols":       termSize("Terminal width in columns"),
			"rows":       termSize("Terminal height in rows"),
		}),
	}
}
