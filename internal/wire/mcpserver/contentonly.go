package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/jsonwire"
)

// Claude Code and Codex (and other clients) give the model a result's structuredContent
// instead of its content whenever there is one, as MCP lets a client do for a tool with
// structured output. pi's details are not that: pi shows them to the user and gives the
// model only the content. For such a client, serve's routes are content-only: results
// keep their content, _meta and isError, and leave structuredContent out, so the model
// sees what pi's model sees.

// ContentOnly returns the routes with ContentOnly set on the listed ones, the model's
// tools; unlisted routes are methods for clients that know serve (pi_sbx_status answers
// in its structuredContent) and stay as they are.
func ContentOnly(routes []Route) []Route {
	out := make([]Route, len(routes))
	for i, r := range routes {
		r.ContentOnly = !r.Unlisted
		out[i] = r
	}
	return out
}

// withoutStructured returns the result JSON raw (an object: CleanResult's or Local's)
// without its structuredContent member; raw itself when it has none.
func withoutStructured(raw json.RawMessage) (json.RawMessage, error) {
	if jsonwire.Member(raw, "structuredContent") == nil {
		return raw, nil
	}
	out := make([]byte, 0, len(raw))
	out = append(out, '{')
	ok := jsonwire.Members(raw, func(key, val []byte) {
		if string(key) == "structuredContent" {
			return
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, '"'), key...), '"', ':')
		out = append(out, val...)
	})
	if !ok {
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalidResult)
	}
	return append(out, '}'), nil
}
