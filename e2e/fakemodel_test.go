//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A scripted model for real third-party clients: a small HTTP server on loopback that
// speaks the client's own API (Anthropic Messages for Claude Code, OpenAI Responses for
// Codex), both streamed as server-sent events. Every request carries the whole
// conversation, so the model is stateless: the number of tool results in a request says
// which step comes next. It answers with a call of one of serve's tools, under the name
// the client gave it (mcp__<server>__<tool>, or a namespace), and once the script is
// done with a final text. What the client sent back is recorded for the test to check.

// modelStep is one tool call of the script: serve's tool name and its arguments, made
// from the results received so far (a session id, say).
type modelStep struct {
	tool string
	args func(prev []toolResult) string
}

// toolResult is what the client returned to the model for one call.
type toolResult struct {
	Text    string
	IsError bool
}

// scriptedModel is the script and what happened to it.
type scriptedModel struct {
	server string // the MCP server's name in the client's configuration
	steps  []modelStep
	final  string

	mu       sync.Mutex
	results  []toolResult // the tool results of the latest main-loop request
	requests int          // main-loop requests answered
	side     int          // other requests (titles, summaries) answered with plain text
	problems []string     // what the model could not do (a tool missing from the list)
}

// next returns the step to take after results, or nil when the script is done.
func (m *scriptedModel) next(results []toolResult) *modelStep {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests++
	m.results = append([]toolResult(nil), results...)
	if len(results) >= len(m.steps) {
		return nil
	}
	return &m.steps[len(results)]
}

func (m *scriptedModel) problem(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.problems = append(m.problems, fmt.Sprintf(format, args...))
}

// Received returns the tool results the model got, in order.
func (m *scriptedModel) Received() []toolResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]toolResult(nil), m.results...)
}

// listen serves h on a loopback port for the test's life and returns its base URL.
func listen(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// sse writes server-sent events, one JSON object each.
type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

func (s sse) event(name string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// anthropicAPI is the Messages API (POST /v1/messages), as Claude Code calls it with
// ANTHROPIC_BASE_URL pointing here.
func (m *scriptedModel) anthropicAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not here"}}`, http.StatusNotFound)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Stream   bool   `json:"stream"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		prefix := "mcp__" + m.server + "__"
		ours := false
		names := map[string]bool{}
		for _, tool := range req.Tools {
			names[tool.Name] = true
			ours = ours || strings.HasPrefix(tool.Name, prefix)
		}
		var reply func(s sse)
		if !ours {
			// A side request (a title, a summary): plain text, not part of the script.
			m.mu.Lock()
			m.side++
			m.mu.Unlock()
			if len(names) > 0 {
				// The main loop (it offers tools) without serve's: the client did not
				// connect to serve as configured.
				var offered []string
				for n := range names {
					offered = append(offered, n)
				}
				m.problem("claude offered no tool of MCP server %s: %s", m.server, strings.Join(offered, " "))
			}
			reply = func(s sse) { anthropicText(s, req.Model, "ok") }
		} else {
			var results []toolResult
			for _, msg := range req.Messages {
				var blocks []struct {
					Type    string          `json:"type"`
					Content json.RawMessage `json:"content"`
					IsError bool            `json:"is_error"`
				}
				if msg.Role != "user" || json.Unmarshal(msg.Content, &blocks) != nil {
					continue
				}
				for _, b := range blocks {
					if b.Type == "tool_result" {
						results = append(results, toolResult{Text: resultText(b.Content), IsError: b.IsError})
					}
				}
			}
			step := m.next(results)
			switch {
			case step == nil:
				reply = func(s sse) { anthropicText(s, req.Model, m.final) }
			case !names[prefix+step.tool]:
				m.problem("claude offered no tool %s%s (it offered %d tools)", prefix, step.tool, len(names))
				reply = func(s sse) { anthropicText(s, req.Model, "the tool I need is missing") }
			default:
				id := fmt.Sprintf("toolu_%02d", len(results)+1)
				name, args := prefix+step.tool, step.args(results)
				reply = func(s sse) { anthropicToolUse(s, req.Model, id, name, args) }
			}
		}
		if !req.Stream {
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"this fake model streams only"}}`, http.StatusBadRequest)
			return
		}
		reply(newSSE(w))
	})
}

// resultText joins a tool result's content as both APIs send it: a string, or a list of
// blocks (Anthropic's tool_result content, a Responses function_call_output) whose text
// fields are joined; blocks without text (images) add nothing.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, blk := range blocks {
		b.WriteString(blk.Text)
	}
	return b.String()
}

func anthropicStart(s sse, model string) {
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
}

func anthropicStop(s sse, reason string) {
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": reason, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

func anthropicText(s sse, model, text string) {
	anthropicStart(s, model)
	s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
		"content_block": map[string]any{"type": "text", "text": ""}})
	s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
		"delta": map[string]any{"type": "text_delta", "text": text}})
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	anthropicStop(s, "end_turn")
}

func anthropicToolUse(s sse, model, id, name, args string) {
	anthropicStart(s, model)
	s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
		"content_block": map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}})
	// The arguments in two pieces, as a model streams them.
	half := len(args) / 2
	for _, part := range []string{args[:half], args[half:]} {
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	anthropicStop(s, "tool_use")
}

// responsesAPI is the OpenAI Responses API (POST /v1/responses), as Codex calls it
// through a model provider whose base_url points here.
func (m *scriptedModel) responsesAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
			http.Error(w, `{"error":{"message":"not here","type":"invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		var req struct {
			Input []json.RawMessage `json:"input"`
			Tools []struct {
				Type  string `json:"type"`
				Name  string `json:"name"`
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"tools"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// Codex offers an MCP server's tools as a namespace mcp__<server> (its name with
		// '-' as '_'), each tool by its own name.
		namespace := "mcp__" + strings.ReplaceAll(m.server, "-", "_")
		names := map[string]bool{}
		for _, tool := range req.Tools {
			if tool.Type == "namespace" && tool.Name == namespace {
				for _, inner := range tool.Tools {
					names[inner.Name] = true
				}
			}
		}
		var results []toolResult
		for _, raw := range req.Input {
			var item struct {
				Type   string          `json:"type"`
				Output json.RawMessage `json:"output"`
			}
			if json.Unmarshal(raw, &item) == nil && item.Type == "function_call_output" {
				results = append(results, toolResult{Text: resultText(item.Output)})
			}
		}
		s := newSSE(w)
		s.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_fake"}})
		step := m.next(results)
		var item map[string]any
		switch {
		case step == nil:
			item = responsesMessage(m.final)
		case !names[step.tool]:
			m.problem("codex offered no tool %s in namespace %s (it offered %d tools there)", step.tool, namespace, len(names))
			item = responsesMessage("the tool I need is missing")
		default:
			item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%02d", len(results)+1),
				"call_id": fmt.Sprintf("call_%02d", len(results)+1), "namespace": namespace, "name": step.tool,
				"arguments": step.args(results)}
		}
		s.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
		s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
		s.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
			"id": "resp_fake", "usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
				"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}})
	})
}

func responsesMessage(text string) map[string]any {
	return map[string]any{"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
}

// egress is a proxy that refuses everything and remembers what was tried: the clients
// get it as HTTP(S)_PROXY, so a request meant for the internet (telemetry, updates,
// feature flags) shows up here instead of leaving the machine.
type egress struct {
	mu    sync.Mutex
	tried []string
}

func (e *egress) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.tried = append(e.tried, r.Method+" "+r.Host+r.URL.Path)
	e.mu.Unlock()
	http.Error(w, "no internet in this test", http.StatusForbidden)
}

func (e *egress) Tried() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.tried...)
}
