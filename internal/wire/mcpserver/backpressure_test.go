//go:build linux

package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedWriter lets the first pass writes through and holds every later one until open
// is closed: a client that stops reading its replies.
type gatedWriter struct {
	mu     sync.Mutex
	pass   int
	open   chan struct{}
	lines  atomic.Int64
	target io.Writer
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	free := g.pass > 0
	if free {
		g.pass--
	}
	g.mu.Unlock()
	if !free {
		<-g.open
	}
	g.lines.Add(int64(strings.Count(string(p), "\n")))
	return g.target.Write(p)
}

// TestAClientThatStopsReadingStallsNewWork: with the replies unread, the transport
// takes no further calls once MaxUnsent answers wait to be written, instead of running
// every call it is sent and holding all their replies; once the client reads again,
// every call is answered.
func TestAClientThatStopsReadingStallsNewWork(t *testing.T) {
	const calls, maxUnsent = 2000, 8
	caller := &bigRaw{reply: json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 50<<10) + `"}]}`)}
	srv := newServer(t, caller, Options{})
	in, feed := io.Pipe()
	out := &gatedWriter{pass: 1, open: make(chan struct{}), target: io.Discard} // the initialize answer passes
	tr := srv.transport(&Transport{In: in, Out: out})
	tr.maxUnsent = maxUnsent
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), tr) }()
	go func() {
		io.WriteString(feed, initLines)
		for out.lines.Load() == 0 {
			time.Sleep(time.Millisecond) // calls after the handshake take the fast path
		}
		for i := range calls {
			fmt.Fprintf(feed, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read","arguments":{"path":"x"}}}`+"\n", i)
		}
		feed.Close()
	}()
	// The calls stop being taken: the count settles well below what was sent.
	var last int64 = -1
	require.Eventually(t, func() bool {
		n := caller.ran.Load()
		settled := n == last && n > 0
		last = n
		return settled
	}, 20*time.Second, 300*time.Millisecond)
	assert.LessOrEqual(t, last, int64(2*maxUnsent), "calls run while the client read nothing")

	close(out.open) // the client reads again
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("serving did not end after the client read again")
	}
	assert.Equal(t, int64(calls), caller.ran.Load(), "every call ran")
	assert.Equal(t, int64(calls+1), out.lines.Load(), "every call was answered (and initialize)")
}

// bigRaw answers every call with the same raw result, counting the calls it ran.
type bigRaw struct {
	reply json.RawMessage
	ran   atomic.Int64
}

func (b *bigRaw) CallTool(context.Context, Call) (json.RawMessage, error) {
	b.ran.Add(1)
	return b.reply, nil
}
