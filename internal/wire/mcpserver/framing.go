package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"
)

// MaxRequestLine bounds one inbound JSON-RPC message (a line); longer lines are answered
// with an error and skipped without being held in memory. A 30 MB file of source code is
// some 35 MB as a JSON string.
const MaxRequestLine = 64 << 20

// Transport is an mcp.Transport over newline-delimited JSON-RPC (MCP's stdio framing),
// and framing only, as the SDK's Connection contract has it: Read gives the next
// message, Write writes one.
//   - one validating pass per line finds the envelope; parameters are handed on as a
//     slice of the line, and messages are written without re-encoding the JSON the SDK
//     produced (the SDK's own stdio transport decodes each line twice);
//   - a pi-sbx/lineSize announcement sizes the reader's next long line and is not
//     passed on (LineSizeMethod);
//   - a line that is not one JSON-RPC message ends the connection with an error.
//
// It is a client's side. A server's side is Serve's, which reads and writes with the
// same framing and keeps serving through malformed lines (conn.go).
type Transport struct {
	In  io.Reader
	Out io.Writer
	// Closer, if set, is closed with the connection (the pipes of a child process).
	Closer io.Closer
	// MaxLine bounds one inbound line (MaxRequestLine when zero).
	MaxLine int
	// Validated: every line was validated by its writer (see Options.ValidatedInput).
	Validated bool
}

// Connect implements mcp.Transport.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	c := &frameConn{f: t.framer(), inbox: newInbox()}
	go c.readLoop()
	return c, nil
}

// framer reads and writes the lines of one connection: the framing both a Transport's
// connection and Serve's use.
type framer struct {
	reader    *jsonwire.LineReader // used by one goroutine at a time
	out       io.Writer
	closer    io.Closer
	maxLine   int
	validated bool

	wmu  sync.Mutex
	wbuf []byte // reused for small messages
}

func (t *Transport) framer() *framer {
	maxLine := t.MaxLine
	if maxLine <= 0 {
		maxLine = MaxRequestLine
	}
	return &framer{reader: jsonwire.NewLineReader(t.In), out: t.Out, closer: t.Closer, maxLine: maxLine, validated: t.Validated}
}

// readLine returns the next line (with its newline), or the rest of the input before
// the error that ends it; tooLong: a line longer than maxLine was skipped.
func (f *framer) readLine() (line []byte, tooLong bool, err error) {
	return f.reader.ReadLine(f.maxLine)
}

// tooLongReason words a skipped line's error.
func (f *framer) tooLongReason() string {
	return fmt.Sprintf("message longer than %d bytes", f.maxLine)
}

// decode is decodeLine, by walking the line when its writer validated it.
func (f *framer) decode(line []byte) (msg jsonrpc.Message, id []byte, code int64, reason string) {
	if f.validated {
		if env, ok := walkEnvelope(line); ok {
			if msg, err := toMessage(env); err == nil {
				return msg, nil, 0, ""
			}
		}
	}
	return decodeLine(line)
}

// announcement reports whether m is a line-size announcement, and takes it: it sizes
// the reader's next long line, and no one else sees it.
func (f *framer) announcement(m *jsonrpc.Request) bool {
	if m.IsCall() || m.Method != LineSizeMethod {
		return false
	}
	if n, err := strconv.Atoi(string(jsonwire.Member(m.Params, "bytes"))); err == nil && n > 0 {
		f.reader.Announce(n)
	}
	return true
}

// write writes one message as a line.
func (f *framer) write(msg jsonrpc.Message) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	buf := f.wbuf[:0]
	if n := messageSize(msg); n > cap(buf) {
		buf = make([]byte, 0, n)
	}
	buf, err := encodeMessage(buf, msg)
	if err != nil {
		return err
	}
	if cap(buf) <= 64<<10 {
		f.wbuf = buf
	}
	_, err = f.out.Write(buf)
	return err
}

// writeLine writes a line already encoded.
func (f *framer) writeLine(line []byte) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	_, err := f.out.Write(line)
	return err
}

func (f *framer) close() error {
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

func messageSize(msg jsonrpc.Message) int {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		return len(m.Params) + len(m.Method) + 128
	case *jsonrpc.Response:
		return len(m.Result) + 256
	}
	return 256
}

type item struct {
	msg jsonrpc.Message
	err error
}

// inbox is the read side of a connection: Read takes what a reading goroutine
// delivers, so that it can end with its context, until the connection closes.
type inbox struct {
	incoming chan item
	closed   chan struct{}
}

func newInbox() inbox { return inbox{incoming: make(chan item), closed: make(chan struct{})} }

// Read implements mcp.Connection.
func (b *inbox) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case it := <-b.incoming:
		return it.msg, it.err
	case <-b.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver hands it to Read; false once the connection closed.
func (b *inbox) deliver(it item) bool {
	select {
	case b.incoming <- it:
		return true
	case <-b.closed:
		return false
	}
}

// frameConn is a Transport's connection: one goroutine reads the lines, so that Read
// can end with its context.
type frameConn struct {
	f *framer
	inbox
	once     sync.Once
	closeErr error
}

// SessionID implements mcp.Connection (stdio has no session id).
func (c *frameConn) SessionID() string { return "" }

// Write implements mcp.Connection.
func (c *frameConn) Write(_ context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.closed:
		return fmt.Errorf("writing to a closed connection: %w", io.ErrClosedPipe)
	default:
	}
	return c.f.write(msg)
}

// Close implements mcp.Connection.
func (c *frameConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.closeErr = c.f.close()
	})
	return c.closeErr
}

func (c *frameConn) readLoop() {
	for {
		line, tooLong, err := c.f.readLine()
		if tooLong {
			c.deliver(item{err: fmt.Errorf("a %s", c.f.tooLongReason())})
			return
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			msg, _, code, reason := c.f.decode(line)
			if code != 0 {
				c.deliver(item{err: fmt.Errorf("undecodable message: %s", reason)})
				return
			}
			if m, ok := msg.(*jsonrpc.Request); !ok || !c.f.announcement(m) {
				if !c.deliver(item{msg: msg}) {
					return
				}
			}
		}
		if err != nil {
			c.deliver(item{err: err})
			return
		}
	}
}
