package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// ToMCP maps pi's result onto an MCP tool result: content blocks as they are (images
// carry base64 data and a MIME type), details as structuredContent when it is a JSON
// object, isError as pi set it, and the outcome in _meta.
func ToMCP(r result.Result) (*mcp.CallToolResult, error) {
	out := &mcp.CallToolResult{Content: make([]mcp.Content, 0, len(r.Content)), IsError: r.IsError}
	switch o := r.Outcome; {
	case o.Thrown:
		out.Meta = mcp.Meta{result.ThrownMeta: true}
	case o.ExitCode != nil:
		out.Meta = mcp.Meta{result.ExitCodeMeta: *o.ExitCode}
	}
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
	out.Outcome, _ = outcomeOf(r.Meta) // Validate has checked it
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

// outcomeOf reads a result's outcome from its _meta: thrown a boolean, an exit code a
// whole number from 0 to 2^31-1 (an int where the result was built here, a float64
// where it was decoded).
func outcomeOf(m mcp.Meta) (result.Outcome, error) {
	var o result.Outcome
	if v, ok := m[result.ThrownMeta]; ok {
		b, ok := v.(bool)
		if !ok {
			return o, fmt.Errorf("%w: _meta %s is not a boolean", ErrInvalidResult, result.ThrownMeta)
		}
		o.Thrown = b
	}
	if v, ok := m[result.ExitCodeMeta]; ok {
		var code int
		switch n := v.(type) {
		case int:
			code = n
		case float64:
			code = int(n)
			if float64(code) != n {
				code = -1
			}
		default:
			code = -1
		}
		if code < 0 || code > math.MaxInt32 {
			return o, fmt.Errorf("%w: _meta %s is not an exit code", ErrInvalidResult, result.ExitCodeMeta)
		}
		o.ExitCode = &code
	}
	return o, nil
}

// Validate checks a result that came from the sandbox: only text and image blocks,
// images with an image MIME type and data, structured content a JSON object, an
// outcome of the right types.
func Validate(r *mcp.CallToolResult) error {
	if r == nil {
		return fmt.Errorf("%w: no result", ErrInvalidResult)
	}
	if _, err := outcomeOf(r.Meta); err != nil {
		return err
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

// AppendResult appends pi's result as the JSON of the MCP tool result ToMCP gives,
// byte for byte as the SDK encodes it (strings HTML-escaped as encoding/json does,
// images in canonical base64), with progress, if not zero, as its ProgressMeta.
func AppendResult(dst []byte, r result.Result, progress int) ([]byte, error) {
	dst = append(dst, '{')
	dst = appendMeta(dst, progress, r.Outcome)
	dst = append(dst, `"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch c.Type {
		case "text":
			dst = append(dst, `{"type":"text","text":`...)
			dst = jsonwire.AppendHTMLString(dst, c.Text)
		case "image":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				return nil, fmt.Errorf("image content: %w", err)
			}
			dst = append(dst, `{"type":"image","mimeType":`...)
			dst = jsonwire.AppendHTMLString(dst, c.MimeType)
			dst = append(dst, `,"data":"`...)
			dst = base64.StdEncoding.AppendEncode(dst, data)
			dst = append(dst, '"')
		default:
			return nil, fmt.Errorf("unknown content type %q", c.Type)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if r.Details != nil {
		raw, err := json.Marshal(r.Details)
		if err != nil {
			return nil, fmt.Errorf("details: %w", err)
		}
		if len(raw) > 0 && raw[0] == '{' {
			dst = append(dst, `,"structuredContent":`...)
			dst = append(dst, raw...)
		}
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), nil
}

// appendMeta appends a result's _meta member and its comma, if it has any: the keys
// in the order encoding/json sorts a map's.
func appendMeta(dst []byte, progress int, o result.Outcome) []byte {
	if progress <= 0 && !o.Thrown && o.ExitCode == nil {
		return dst
	}
	dst = append(dst, `"_meta":{`...)
	sep := ""
	if progress > 0 {
		dst = append(dst, `"`+ProgressMeta+`":`...)
		dst = strconv.AppendInt(dst, int64(progress), 10)
		sep = ","
	}
	if o.ExitCode != nil {
		dst = append(dst, sep+`"`+result.ExitCodeMeta+`":`...)
		dst = strconv.AppendInt(dst, int64(*o.ExitCode), 10)
		sep = ","
	}
	if o.Thrown {
		dst = append(dst, sep+`"`+result.ThrownMeta+`":true`...)
	}
	return append(dst, "},"...)
}

// CleanResult checks the JSON of a tool result that came from the sandbox, which is
// untrusted, as Validate checks a decoded one, and rebuilds it from what a result of
// pi's tools holds: text and image blocks (an image with an image MIME type and
// non-empty base64 data), structuredContent when it is an object, isError. Everything
// else is left out, as decoding into the SDK's types would, and strings that are not
// valid UTF-8 or hold an unpaired surrogate escape are re-encoded as a decoder reads
// them. The outcome in _meta is kept (checked as Validate checks it); the rest of _meta
// is the agent's own. It also returns the result's ProgressMeta total (0 if none). raw must be
// validated JSON, as the transport's reading leaves it; the result is appended to dst.
func CleanResult(dst, raw []byte) (clean []byte, progress float64, err error) {
	var content, structured []byte
	var outcome result.Outcome
	isError, bad := false, ""
	ok := jsonwire.Members(raw, func(key, val []byte) {
		switch string(key) {
		case "content":
			content = val
		case "structuredContent":
			structured = val
		case "isError":
			switch string(val) {
			case "true":
				isError = true
			case "false":
				isError = false
			default:
				bad = "isError is not a boolean"
			}
		case "_meta":
			if n := jsonwire.Member(val, ProgressMeta); n != nil {
				progress, _ = strconv.ParseFloat(string(n), 64)
			}
			switch v := string(jsonwire.Member(val, result.ThrownMeta)); v {
			case "", "false":
			case "true":
				outcome.Thrown = true
			default:
				bad = "_meta " + result.ThrownMeta + " is not a boolean"
			}
			if v := jsonwire.Member(val, result.ExitCodeMeta); v != nil {
				code, err := strconv.ParseInt(string(v), 10, 32)
				if err != nil || code < 0 {
					bad = "_meta " + result.ExitCodeMeta + " is not an exit code"
				}
				c := int(code)
				outcome.ExitCode = &c
			}
		}
	})
	switch {
	case !ok:
		return nil, 0, fmt.Errorf("%w: not a JSON object", ErrInvalidResult)
	case bad != "":
		return nil, 0, fmt.Errorf("%w: %s", ErrInvalidResult, bad)
	}
	dst = append(dst, '{')
	dst = appendMeta(dst, 0, outcome)
	dst = append(dst, `"content":[`...)
	if content != nil && string(content) != "null" {
		n := 0
		ok := jsonwire.Elements(content, func(block []byte) {
			if err != nil {
				return
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			dst, err = appendCleanBlock(dst, block)
			if err != nil {
				err = fmt.Errorf("%w: content[%d]: %w", ErrInvalidResult, n, err)
			}
			n++
		})
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			return nil, 0, fmt.Errorf("%w: content is not an array", ErrInvalidResult)
		}
	}
	dst = append(dst, ']')
	if structured != nil && string(structured) != "null" {
		if structured[0] != '{' {
			return nil, 0, fmt.Errorf("%w: structuredContent is not a JSON object", ErrInvalidResult)
		}
		dst = append(dst, `,"structuredContent":`...)
		if jsonwire.Exact(structured) {
			dst = append(dst, structured...)
		} else {
			var v any
			if err := json.Unmarshal(structured, &v); err != nil {
				return nil, 0, fmt.Errorf("%w: structuredContent: %w", ErrInvalidResult, err)
			}
			re, err := json.Marshal(v)
			if err != nil {
				return nil, 0, fmt.Errorf("%w: structuredContent: %w", ErrInvalidResult, err)
			}
			dst = append(dst, re...)
		}
	}
	if isError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), progress, nil
}

// appendCleanBlock appends one checked content block (see CleanResult).
func appendCleanBlock(dst, block []byte) ([]byte, error) {
	var typ, text, data, mime []byte
	if !jsonwire.Members(block, func(key, val []byte) {
		switch string(key) {
		case "type":
			typ = val
		case "text":
			text = val
		case "data":
			data = val
		case "mimeType":
			mime = val
		}
	}) {
		return nil, errors.New("not an object")
	}
	kind, _ := jsonwire.Unquote(typ)
	switch kind {
	case "text":
		if len(text) == 0 || text[0] != '"' {
			return nil, errors.New("text block without a text string")
		}
		dst = append(dst, `{"type":"text","text":`...)
		dst = appendCleanString(dst, text)
	case "image":
		m, _ := jsonwire.Unquote(mime)
		if !mimeRE.MatchString(m) {
			return nil, fmt.Errorf("image with MIME type %s", clip(mime))
		}
		d, ok := jsonwire.Unquote(data)
		if !ok || len(d) == 0 {
			return nil, errors.New("image without data")
		}
		decoded, err := base64.StdEncoding.DecodeString(d)
		if err != nil || len(decoded) == 0 {
			return nil, errors.New("image data is not base64")
		}
		dst = append(dst, `{"type":"image","mimeType":`...)
		dst = jsonwire.AppendString(dst, m)
		dst = append(dst, `,"data":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, decoded)
		dst = append(dst, '"')
	default:
		return nil, fmt.Errorf("type %s", clip(typ))
	}
	return append(dst, '}'), nil
}

// appendCleanString appends a validated JSON string as it is when it is exact, else as
// a decoder reads it.
func appendCleanString(dst, lit []byte) []byte {
	if jsonwire.Exact(lit) {
		return append(dst, lit...)
	}
	var s string
	_ = json.Unmarshal(lit, &s) // validated: it decodes, with U+FFFD where it is not exact
	return jsonwire.AppendString(dst, s)
}
