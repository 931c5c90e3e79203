package netpolicy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

type fixed string

func (f fixed) CallTool(context.Context, mcpserver.Call) (json.RawMessage, error) {
	return json.RawMessage(f), nil
}

// TestExplain: the line is appended to a command's result only when the call looks like
// it met the network and failed and the log has a denial since the call began; it names
// each denied host:port once with what denied it; a quiet success never reads the log.
func TestExplain(t *testing.T) {
	now := time.Now()
	deny := func(host string, port int, reason string, at time.Time) sbx.Decision {
		return sbx.Decision{Time: at, Sandbox: "box", Host: host, Port: port, Decision: "deny", Reason: reason}
	}
	const fail = `{"content":[{"type":"text","text":"curl: (6) Could not resolve host: pkg.example.com\n\nCommand exited with code 6"}],"isError":true}`
	for _, tc := range []struct {
		name, tool, result string
		log                []sbx.Decision
		want               string // the appended line; "" none
		wantRead           bool
	}{
		{name: "quiet success", tool: "bash", result: `{"content":[{"type":"text","text":"ok"}]}`,
			log: []sbx.Decision{deny("a.example", 443, "preset balanced", now.Add(time.Second))}},
		{name: "denied", tool: "bash", result: fail, wantRead: true,
			log: []sbx.Decision{
				deny("old.example", 443, "preset balanced", now.Add(-time.Hour)),
				deny("pkg.example.com", 443, "preset balanced", now.Add(time.Second)),
				deny("pkg.example.com", 443, "preset balanced", now.Add(2*time.Second)),
				deny("api.test", 80, "rule r2: deny api.test", now.Add(2*time.Second)),
				{Time: now.Add(time.Second), Sandbox: "box", Host: "ok.test", Port: 443, Decision: "allow"},
			},
			want: "[sandbox network] denied: pkg.example.com:443 (preset balanced), api.test:80 (rule r2: deny api.test); " +
				"allow with: pi-sbx-backend allow pkg.example.com api.test"},
		{name: "failed, nothing denied", tool: tools.ExecCommandName, result: fail, wantRead: true,
			log: []sbx.Decision{deny("old.example", 443, "preset balanced", now.Add(-time.Hour))}},
		{name: "403 in a success", tool: tools.PtyExecName, wantRead: true,
			result: `{"content":[{"type":"text","text":"HTTP/1.1 403 Forbidden"}]}`,
			log:    []sbx.Decision{deny("x.test", 80, "preset deny-all", now.Add(time.Second))},
			want:   "[sandbox network] denied: x.test:80 (preset deny-all); allow with: pi-sbx-backend allow x.test"},
		{name: "not a command", tool: "read", result: fail,
			log: []sbx.Decision{deny("a.example", 443, "preset balanced", now.Add(time.Second))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := false
			e := &Explainer{Sandbox: func() string { return "box" }, Log: func(_ context.Context, name string) ([]sbx.Decision, error) {
				read = true
				assert.Equal(t, "box", name)
				return tc.log, nil
			}}
			routes := e.Routes([]mcpserver.Route{{Tool: &tools.Tool{Name: tc.tool}, Caller: fixed(tc.result)}})
			out, err := routes[0].Caller.CallTool(context.Background(), mcpserver.Call{Name: tc.tool})
			require.NoError(t, err)
			assert.Equal(t, tc.wantRead, read, "log read")
			if tc.want == "" {
				assert.JSONEq(t, tc.result, string(out))
				return
			}
			var r struct {
				Content []struct{ Type, Text string }
				IsError bool
			}
			require.NoError(t, json.Unmarshal(out, &r))
			require.Len(t, r.Content, 1)
			text := r.Content[0].Text
			assert.True(t, strings.HasSuffix(text, "\n"+tc.want), "%q", text)
			assert.Equal(t, 1, strings.Count(text, "[sandbox network]"))
			// The same denials are not named again by the next call.
			again, err := routes[0].Caller.CallTool(context.Background(), mcpserver.Call{Name: tc.tool})
			require.NoError(t, err)
			assert.JSONEq(t, tc.result, string(again))
		})
	}
}

// TestDeniedLineIsBounded: many denied destinations are named up to a bound, then
// counted.
func TestDeniedLineIsBounded(t *testing.T) {
	var log []sbx.Decision
	for i := 0; i < 12; i++ {
		log = append(log, sbx.Decision{Sandbox: "box", Host: "h" + string(rune('a'+i)) + ".test", Port: 443, Decision: "deny", Reason: "preset balanced"})
	}
	line := sbx.DeniedLine(log, "box", time.Time{})
	assert.Contains(t, line, "and 7 more")
	assert.Equal(t, 5, strings.Count(line, ":443"))
	assert.Empty(t, sbx.DeniedLine(log, "other", time.Time{}))
}
