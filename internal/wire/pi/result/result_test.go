package result

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every block carries its kind's fields even when empty: an MCP TextContent without
// "text" is invalid, and pi prints {"type":"text","text":""}.
func TestContentJSON(t *testing.T) {
	tests := []struct {
		name string
		in   Content
		want string
	}{
		{"empty text", TextBlock(""), `{"type":"text","text":""}`},
		{"text", TextBlock("a<b>&c"), `{"type":"text","text":"a<b>&c"}`},
		{"image", ImageBlock("AAAA", "image/png"), `{"type":"image","data":"AAAA","mimeType":"image/png"}`},
		{"empty image", ImageBlock("", ""), `{"type":"image","data":"","mimeType":""}`},
		{"other kind", Content{Type: "resource", Text: "x"}, `{"type":"resource","text":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			require.NoError(t, enc.Encode(Result{Content: []Content{tt.in}}))
			assert.Equal(t, `{"content":[`+tt.want+`],"details":null,"isError":false}`+"\n", b.String())
			r, err := Decode(b.Bytes())
			require.NoError(t, err)
			assert.Equal(t, []Content{tt.in}, r.Content, "round trip")
		})
	}
	// With the default encoder HTML characters are escaped as for any other field.
	b, err := json.Marshal(TextBlock("<"))
	require.NoError(t, err)
	assert.Equal(t, `{"type":"text","text":"\u003c"}`, string(b))
}
