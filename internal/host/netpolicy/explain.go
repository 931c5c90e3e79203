// Package netpolicy makes sbx's network policy visible where it acts: a command whose
// connections the proxy denied gets one line saying which and why (Explain), allow and
// deny rules are added at the scope sbx can give them (Rules), and the policy is told in
// a word for status lines (Word).
package netpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// Log reads the proxy's decisions for a sandbox (sbx.Client.PolicyLog).
type Log func(ctx context.Context, sandbox string) ([]sbx.Decision, error)

// Explainer appends the denied-connections line to the results of the tools that run
// commands in the sandbox. The proxy's log costs an sbx process, so it is read only
// after a call that looks like it met the network and failed: an error result, or
// output with a network failure's words (the three shapes a denial takes, SBX#611: an
// HTTP 403, a name that does not resolve, a reset; and their common relatives). A call
// that succeeded quietly costs nothing.
type Explainer struct {
	Log Log
	// Sandbox names the session's sandbox ("" while there is none).
	Sandbox func() string
	// Timeout bounds the log read (5 s when zero): the result is never held up long.
	Timeout time.Duration

	mu       sync.Mutex
	reported time.Time // newest denial already named: a later call does not repeat it
}

// explained are the tools whose commands reach the network from the sandbox.
func explained(name string) bool {
	switch name {
	case "bash", tools.ExecCommandName, tools.WriteStdinName, tools.ReadOutputName, tools.PtyExecName:
		return true
	}
	return strings.HasPrefix(name, "docker_") && name != "docker_verify" && name != "docker_status"
}

// Routes wraps the routes of the tools that run commands.
func (e *Explainer) Routes(routes []mcpserver.Route) []mcpserver.Route {
	out := make([]mcpserver.Route, len(routes))
	for i, r := range routes {
		if explained(r.Tool.Name) {
			r.Caller = &explaining{Caller: r.Caller, e: e}
		}
		out[i] = r
	}
	return out
}

type explaining struct {
	mcpserver.Caller
	e *Explainer
}

// CallTool implements mcpserver.Caller.
func (x *explaining) CallTool(ctx context.Context, c mcpserver.Call) (json.RawMessage, error) {
	start := time.Now()
	res, err := x.Caller.CallTool(ctx, c)
	if err != nil || ctx.Err() != nil {
		return res, err
	}
	return x.e.explain(ctx, start, res), nil
}

// netFailure are the words of a connection that met the proxy's refusal (or its
// relatives): curl's, wget's, npm's, pip's, git's, Go's and Python's.
var netFailure = regexp.MustCompile(`(?i)\b403\b|forbidden|blocked by sandbox network policy|could not resolve|resolve host|` +
	`name resolution|name or service not known|no such host|getaddrinfo|ENOTFOUND|EAI_AGAIN|` +
	`connection reset|ECONNRESET|reset by peer|connection refused|ECONNREFUSED|failed to connect|` +
	`unable to connect|could not connect|network is unreachable|SSL_ERROR_SYSCALL|unexpected eof|` +
	`ETIMEDOUT|timed out`)

// explain appends the line to res when the call looks like it met a denial and the log
// has one since start.
func (e *Explainer) explain(ctx context.Context, start time.Time, res json.RawMessage) json.RawMessage {
	var r struct {
		Content []json.RawMessage `json:"content"`
		IsError bool              `json:"isError"`
	}
	if json.Unmarshal(res, &r) != nil {
		return res
	}
	var text strings.Builder
	for _, c := range r.Content {
		var t struct{ Text string }
		_ = json.Unmarshal(c, &t)
		text.WriteString(t.Text)
	}
	if !r.IsError && !netFailure.MatchString(text.String()) {
		return res
	}
	name := e.Sandbox()
	if name == "" {
		return res
	}
	timeout := e.Timeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	log, err := e.Log(lctx, name)
	if err != nil {
		return res // no policy (sbx < 0.55) or no log: the result as it was
	}
	e.mu.Lock()
	// The log's times may be whole seconds: a denial in the second the call began counts.
	since := start.Truncate(time.Second)
	if e.reported.After(since) || e.reported.Equal(since) {
		since = e.reported.Add(time.Nanosecond)
	}
	line := sbx.DeniedLine(log, name, since)
	for _, d := range log {
		if d.Decision == "deny" && d.Time.After(e.reported) {
			e.reported = d.Time
		}
	}
	e.mu.Unlock()
	if line == "" {
		return res
	}
	out, err := appendLine(res, line)
	if err != nil {
		return res
	}
	return out
}

// appendLine adds line to the last text content of an MCP result, or as a text content
// of its own when there is none; everything else stays as it was.
func appendLine(res json.RawMessage, line string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(res, &m); err != nil {
		return nil, err
	}
	var content []map[string]any
	if raw, ok := m["content"]; ok {
		if err := json.Unmarshal(raw, &content); err != nil {
			return nil, err
		}
	}
	last := -1
	for i, c := range content {
		if c["type"] == "text" {
			last = i
		}
	}
	if last < 0 {
		content = append(content, map[string]any{"type": "text", "text": line})
	} else {
		t, _ := content[last]["text"].(string)
		if t != "" && !strings.HasSuffix(t, "\n") {
			t += "\n"
		}
		content[last]["text"] = t + line
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	m["content"] = raw
	return json.Marshal(m)
}

// errNoSandbox is returned by the rules' callers when the session has no sandbox yet.
var errNoSandbox = errors.New("this session has no sandbox yet")
