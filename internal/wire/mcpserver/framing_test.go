package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
)

// readAll reads a connection's messages until its first error.
func readAll(t *testing.T, c interface {
	Read(context.Context) (jsonrpc.Message, error)
}) ([]jsonrpc.Message, error) {
	t.Helper()
	var msgs []jsonrpc.Message
	for {
		msg, err := c.Read(context.Background())
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, msg)
	}
}

// TestTransportFramesOnly: a Transport's connection gives the messages it reads and
// writes the ones it is given, and does nothing else: a request is passed on however
// many times its id was used, nothing answers a line that is not a message (it ends the
// connection), and a line-size announcement is taken by the framing alone (the server's
// end takes it the same way: TestServeTakesLineSizes).
func TestTransportFramesOnly(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ls","arguments":{}}}`
	hint := fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":{"bytes":%d}}`, LineSizeMethod, 4096)
	in := strings.Join([]string{call, "", hint, call, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "not json", call}, "\n") + "\n"
	var out testbin.SyncBuffer
	mc, err := (&Transport{In: strings.NewReader(in), Out: &out}).Connect(context.Background())
	require.NoError(t, err)
	defer mc.Close()
	msgs, err := readAll(t, mc)
	require.Len(t, msgs, 3, "both calls and the notification; the announcement is the framing's")
	assert.Equal(t, "notifications/initialized", msgs[2].(*jsonrpc.Request).Method)
	require.Error(t, err)
	assert.NotErrorIs(t, err, io.EOF, "the undecodable line ends the connection")
	assert.Contains(t, err.Error(), "undecodable message")
	assert.Empty(t, out.String(), "nothing is answered by the framing")

	id, _ := jsonrpc.MakeID(float64(1))
	require.NoError(t, mc.Write(context.Background(), &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"content":[]}`)}))
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`+"\n", out.String())
	require.NoError(t, mc.Close())
	assert.ErrorIs(t, mc.Write(context.Background(), &jsonrpc.Response{ID: id}), io.ErrClosedPipe)
}

// TestTransportEndsOnAnOverlongLine: without a server's end to answer it, a line over
// MaxLine ends the connection.
func TestTransportEndsOnAnOverlongLine(t *testing.T) {
	in := `{"jsonrpc":"2.0","method":"a"}` + "\n" + strings.Repeat("x", 500) + "\n" + `{"jsonrpc":"2.0","method":"b"}` + "\n"
	mc, err := (&Transport{In: strings.NewReader(in), Out: io.Discard, MaxLine: 100}).Connect(context.Background())
	require.NoError(t, err)
	defer mc.Close()
	msgs, err := readAll(t, mc)
	assert.Len(t, msgs, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a message longer than 100 bytes")
}
