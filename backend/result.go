package backend

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/result"
)

// ToMCP maps pi's result onto an MCP tool result: content blocks as they are (images
// carry base64 data and a MIME type), details as structuredContent when it is a JSON
// object, isError as pi set it.
func ToMCP(r result.Result) (*mcp.CallToolResult, error) {
	out := &mcp.CallToolResult{Content: make([]mcp.Content, 0, len(r.Content)), IsError: r.IsError}
	for _, c := range r.Content {
		switch c.Type {
		case "text":
			out.Content = append(out.Content, &mcp.TextContent{Text: c.Text})
		case "image":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				return nil, fmt.Errorf("image content: %w", err)
			}
			out.Content = append(out.Content, &mcp.ImageContent{Data: data, MIMEType: c.MimeType})
		default:
			return nil, fmt.Errorf("unknown content type %q", c.Type)
		}
	}
	if r.Details != nil {
		raw, err := json.Marshal(r.Details)
		if err != nil {
			return nil, fmt.Errorf("details: %w", err)
		}
		if len(raw) > 0 && raw[0] == '{' {
			out.StructuredContent = json.RawMessage(raw)
		}
	}
	return out, nil
}

// FromMCP maps an MCP tool result back onto pi's shape (the inverse of ToMCP), after
// Validate.
func FromMCP(r *mcp.CallToolResult) (result.Result, error) {
	if err := Validate(r); err != nil {
		return result.Result{}, err
	}
	out := result.Result{Content: make([]result.Content, 0, len(r.Content)), IsError: r.IsError}
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			out.Content = append(out.Content, result.TextBlock(c.Text))
		case *mcp.ImageContent:
			out.Content = append(out.Content, result.ImageBlock(base64.StdEncoding.EncodeToString(c.Data), c.MIMEType))
		}
	}
	if r.StructuredContent != nil {
		raw, err := json.Marshal(r.StructuredContent)
		if err != nil {
			return result.Result{}, err
		}
		out.Details = json.RawMessage(raw)
	}
	return out, nil
}

// ErrInvalidResult marks a tool result that did not come back in the shape pi's tools
// produce; it is never passed on.
var ErrInvalidResult = errors.New("invalid tool result from the sandbox")

var mimeRE = regexp.MustCompile(`^image/[a-z0-9.+-]{1,64}$`)

// Validate checks a result that came from the sandbox: only text and image blocks,
// images with an image MIME type and data, structured content a JSON object.
func Validate(r *mcp.CallToolResult) error {
	if r == nil {
		return fmt.Errorf("%w: no result", ErrInvalidResult)
	}
	for i, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
		case *mcp.ImageContent:
			if !mimeRE.MatchString(c.MIMEType) || len(c.Data) == 0 {
				return fmt.Errorf("%w: content[%d]: image with MIME type %q and %d bytes", ErrInvalidResult, i, c.MIMEType, len(c.Data))
			}
		default:
			return fmt.Errorf("%w: content[%d] has type %T", ErrInvalidResult, i, c)
		}
	}
	if r.StructuredContent != nil {
		raw, err := json.Marshal(r.StructuredContent)
		if err != nil || len(raw) == 0 || raw[0] != '{' {
			return fmt.Errorf("%w: structuredContent is not a JSON object", ErrInvalidResult)
		}
	}
	return nil
}
