// Package result defines the shape every tool returns: pi's AgentToolResult as it
// crosses a process boundary (content blocks, details, isError).
package result

import (
	"bytes"
	"encoding/json"
)

// Content is one content block: text, or an image with base64 data.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// MarshalJSON encodes a block with exactly its kind's fields, each present even when
// empty: an MCP TextContent must carry "text" (pi's too: {"type":"text","text":""}), an
// ImageContent "data" and "mimeType". Other kinds keep only the fields they use.
func (c Content) MarshalJSON() ([]byte, error) {
	type plain Content // without this method
	var v any = plain(c)
	switch c.Type {
	case "text":
		v = struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{c.Type, c.Text}
	case "image":
		v = struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
		}{c.Type, c.Data, c.MimeType}
	}
	// Unescaped: the caller's encoder escapes HTML characters if it is set to.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// Result is what a tool call produces. Details is pi's tool-specific details object;
// nil means pi's `undefined` and is encoded as JSON null.
type Result struct {
	Content []Content `json:"content"`
	Details any       `json:"details"`
	IsError bool      `json:"isError"`
	// Outcome says as data what Content says as text, for clients that must act on it
	// (the pi package throws or returns as pi's tool did) without parsing pi's messages.
	Outcome Outcome `json:"_meta,omitzero"`
}

// Outcome is how a tool call ended, beyond isError, under keys of its own in an MCP
// result's _meta: whether pi's tool threw, and the exit code of a command that ran to
// one (bash, whose non-zero exits pi returns rather than throws).
type Outcome struct {
	Thrown   bool `json:"pi-sbx/thrown,omitempty"`
	ExitCode *int `json:"pi-sbx/exitCode,omitempty"`
}

// The _meta keys of an Outcome.
const (
	ThrownMeta   = "pi-sbx/thrown"
	ExitCodeMeta = "pi-sbx/exitCode"
)

// Exited returns the Outcome of a command that ran to exit code code.
func Exited(code int) Outcome { return Outcome{ExitCode: &code} }

// TextBlock returns a text content block.
func TextBlock(s string) Content { return Content{Type: "text", Text: s} }

// ImageBlock returns an image content block.
func ImageBlock(base64Data, mimeType string) Content {
	return Content{Type: "image", Data: base64Data, MimeType: mimeType}
}

// Text returns a successful result with one text block and the given details.
func Text(s string, details any) Result {
	return Result{Content: []Content{TextBlock(s)}, Details: details}
}

// Thrown is the result pi's agent loop makes of a tool that throws: the message as the
// only text block, empty details, isError set.
func Thrown(err error) Result {
	return Result{Content: []Content{TextBlock(err.Error())}, Details: map[string]any{}, IsError: true, Outcome: Outcome{Thrown: true}}
}

// Decode parses a JSON-encoded Result, keeping details as raw JSON.
func Decode(data []byte) (Result, error) {
	var r struct {
		Content []Content       `json:"content"`
		Details json.RawMessage `json:"details"`
		IsError bool            `json:"isError"`
		Outcome Outcome         `json:"_meta"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return Result{}, err
	}
	out := Result{Content: r.Content, IsError: r.IsError, Outcome: r.Outcome}
	if len(r.Details) > 0 && string(r.Details) != "null" {
		out.Details = r.Details
	}
	return out, nil
}
