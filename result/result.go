// Package result defines the shape every tool returns: pi's AgentToolResult as it
// crosses a process boundary (content blocks, details, isError).
package result

import "encoding/json"

// Content is one content block: text, or an image with base64 data.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// Result is what a tool call produces. Details is pi's tool-specific details object;
// nil means pi's `undefined` and is encoded as JSON null.
type Result struct {
	Content []Content `json:"content"`
	Details any       `json:"details"`
	IsError bool      `json:"isError"`
}

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
	return Result{Content: []Content{TextBlock(err.Error())}, Details: map[string]any{}, IsError: true}
}

// Decode parses a JSON-encoded Result, keeping details as raw JSON.
func Decode(data []byte) (Result, error) {
	var r struct {
		Content []Content       `json:"content"`
		Details json.RawMessage `json:"details"`
		IsError bool            `json:"isError"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return Result{}, err
	}
	out := Result{Content: r.Content, IsError: r.IsError}
	if len(r.Details) > 0 && string(r.Details) != "null" {
		out.Details = r.Details
	}
	return out, nil
}
