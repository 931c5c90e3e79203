package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// awkward holds every byte class encoding/json treats specially.
const awkward = "plain <b>&amp;</b> \"q\" \\ \b\f\n\r\t \x00\x01\x1f\x7f é 😀 \u2028\u2029 bad:\xff\xfe end"

// TestAppendResultIsTheSDKsEncoding: pi's results encode byte for byte as the SDK
// encodes ToMCP's, for every byte class, images, details, errors and progress.
func TestAppendResultIsTheSDKsEncoding(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nfake"))
	type details struct {
		Path  string `json:"path"`
		Lines int    `json:"lines,omitempty"`
		Note  string `json:"note"`
	}
	for _, tc := range []struct {
		name     string
		r        result.Result
		progress int
	}{
		{"empty", result.Result{Content: []result.Content{}}, 0},
		{"empty text", result.Result{Content: []result.Content{result.TextBlock("")}}, 0},
		{"awkward text", result.Result{Content: []result.Content{result.TextBlock(awkward)}}, 0},
		{"two blocks and an image", result.Result{Content: []result.Content{result.TextBlock("a"), result.ImageBlock(png, "image/png"), result.TextBlock("<z>")}}, 0},
		{"details", result.Result{Content: []result.Content{result.TextBlock("x")}, Details: details{Path: "<p>", Note: awkward}}, 0},
		{"details not an object", result.Result{Content: []result.Content{result.TextBlock("x")}, Details: []int{1}}, 0},
		{"error", result.Result{Content: []result.Content{result.TextBlock("boom & bust")}, IsError: true}, 0},
		{"progress", result.Result{Content: []result.Content{result.TextBlock("out")}, Details: details{Lines: 3}}, 12345},
		{"long", result.Result{Content: []result.Content{result.TextBlock(strings.Repeat(awkward, 2000))}}, 0},
		{"thrown", result.Thrown(errors.New("ENOENT <x>")), 0},
		{"exit code 0", result.Result{Content: []result.Content{result.TextBlock("ok")}, Outcome: result.Exited(0)}, 0},
		{"exit code and progress", result.Result{Content: []result.Content{result.TextBlock("bad")}, IsError: true, Outcome: result.Exited(143)}, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ToMCP(tc.r)
			require.NoError(t, err)
			if tc.progress > 0 {
				if res.Meta == nil {
					res.Meta = mcp.Meta{}
				}
				res.Meta[ProgressMeta] = tc.progress
			}
			want, err := json.Marshal(res)
			require.NoError(t, err)
			got, err := AppendResult([]byte("prefix"), tc.r, tc.progress)
			require.NoError(t, err)
			assert.Equal(t, "prefix"+string(want), string(got))
		})
	}
	_, err := AppendResult(nil, result.Result{Content: []result.Content{{Type: "audio"}}}, 0)
	assert.ErrorContains(t, err, `unknown content type "audio"`)
	_, err = AppendResult(nil, result.Result{Content: []result.Content{result.ImageBlock("not base64!", "image/png")}}, 0)
	assert.ErrorContains(t, err, "image content")
}

// TestCleanResult: a result from the sandbox is passed on only in the shape of pi's
// results, rebuilt from what it may hold; anything else is refused with what is wrong.
func TestCleanResult(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG"))
	for _, tc := range []struct {
		name, in, want string
		progress       float64
		err            string
	}{
		{name: "text", in: `{"content":[{"type":"text","text":"hi"}]}`, want: `{"content":[{"type":"text","text":"hi"}]}`},
		{name: "all members", in: `{"_meta":{"pi-sbx-backend/progress":42,"x":1},"content":[{"type":"text","text":"a"},{"type":"image","mimeType":"image/png","data":"` + png + `"}],"structuredContent":{"k":[1,"\u003c"]},"isError":true}`,
			want: `{"content":[{"type":"text","text":"a"},{"type":"image","mimeType":"image/png","data":"` + png + `"}],"structuredContent":{"k":[1,"\u003c"]},"isError":true}`, progress: 42},
		{name: "whitespace and unknown members dropped", in: " { \"content\" : [ { \"type\" : \"text\" , \"text\" : \"a\" , \"annotations\" : {\"x\":1} } ] , \"resultType\":\"complete\", \"isError\": false } ",
			want: `{"content":[{"type":"text","text":"a"}]}`},
		{name: "no content", in: `{}`, want: `{"content":[]}`},
		{name: "null content and structure", in: `{"content":null,"structuredContent":null}`, want: `{"content":[]}`},
		{name: "invalid UTF-8 re-encoded", in: "{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}", want: "{\"content\":[{\"type\":\"text\",\"text\":\"a\ufffdb\"}]}"},
		{name: "lone surrogate re-encoded", in: `{"content":[{"type":"text","text":"a\ud800b"}]}`, want: "{\"content\":[{\"type\":\"text\",\"text\":\"a\ufffdb\"}]}"},
		{name: "surrogate pair kept", in: `{"content":[{"type":"text","text":"\ud83d\ude00"}]}`, want: `{"content":[{"type":"text","text":"\ud83d\ude00"}]}`},
		{name: "escaped backslash before u kept", in: `{"content":[{"type":"text","text":"\\ud800"}]}`, want: `{"content":[{"type":"text","text":"\\ud800"}]}`},
		{name: "structured lone surrogate re-encoded", in: `{"content":[],"structuredContent":{"b":"\udc00","a":1}}`, want: `{"content":[],"structuredContent":{"a":1,"b":"�"}}`},
		{name: "not an object", in: `[1]`, err: "not a JSON object"},
		{name: "content not an array", in: `{"content":{"type":"text"}}`, err: "content is not an array"},
		{name: "block not an object", in: `{"content":["text"]}`, err: "content[0]: not an object"},
		{name: "audio", in: `{"content":[{"type":"text","text":"a"},{"type":"audio","data":"AA==","mimeType":"audio/wav"}]}`, err: `content[1]: type "audio"`},
		{name: "resource", in: `{"content":[{"type":"resource","resource":{}}]}`, err: `content[0]: type "resource"`},
		{name: "text without text", in: `{"content":[{"type":"text"}]}`, err: "text block without a text string"},
		{name: "text not a string", in: `{"content":[{"type":"text","text":5}]}`, err: "text block without a text string"},
		{name: "image MIME type", in: `{"content":[{"type":"image","mimeType":"text/html","data":"` + png + `"}]}`, err: `image with MIME type "text/html"`},
		{name: "image without data", in: `{"content":[{"type":"image","mimeType":"image/png","data":""}]}`, err: "image without data"},
		{name: "image data not base64", in: `{"content":[{"type":"image","mimeType":"image/png","data":"%%%"}]}`, err: "not base64"},
		{name: "structured not an object", in: `{"content":[],"structuredContent":[1]}`, err: "structuredContent is not a JSON object"},
		{name: "isError not a boolean", in: `{"content":[],"isError":"yes"}`, err: "isError is not a boolean"},
		{name: "outcome kept, progress dropped", in: `{"_meta":{"pi-sbx-backend/progress":9,"pi-sbx/exitCode":3,"pi-sbx/thrown":false},"content":[],"isError":true}`,
			want: `{"_meta":{"pi-sbx/exitCode":3},"content":[],"isError":true}`, progress: 9},
		{name: "thrown kept", in: `{"_meta":{"pi-sbx/thrown":true},"content":[{"type":"text","text":"boom"}],"isError":true}`,
			want: `{"_meta":{"pi-sbx/thrown":true},"content":[{"type":"text","text":"boom"}],"isError":true}`},
		{name: "thrown not a boolean", in: `{"_meta":{"pi-sbx/thrown":1},"content":[]}`, err: "pi-sbx/thrown is not a boolean"},
		{name: "exit code negative", in: `{"_meta":{"pi-sbx/exitCode":-1},"content":[]}`, err: "pi-sbx/exitCode is not an exit code"},
		{name: "exit code fractional", in: `{"_meta":{"pi-sbx/exitCode":1.5},"content":[]}`, err: "pi-sbx/exitCode is not an exit code"},
		{name: "exit code a string", in: `{"_meta":{"pi-sbx/exitCode":"3"},"content":[]}`, err: "pi-sbx/exitCode is not an exit code"},
		{name: "exit code too large", in: `{"_meta":{"pi-sbx/exitCode":99999999999},"content":[]}`, err: "pi-sbx/exitCode is not an exit code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseEnvelope([]byte(`{"result":` + tc.in + `}`))
			require.NoError(t, err, "the test's input is valid JSON")
			got, progress, err := CleanResult([]byte("pre"), []byte(strings.TrimSpace(tc.in)))
			if tc.err != "" {
				require.ErrorIs(t, err, ErrInvalidResult)
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "pre"+tc.want, string(got))
			assert.Equal(t, tc.progress, progress)
			var res mcp.CallToolResult
			require.NoError(t, json.Unmarshal(got[3:], &res), "the SDK decodes it")
			assert.NoError(t, Validate(&res))
		})
	}
}

// TestOutcomeRoundTrip: the outcome survives ToMCP, the SDK's encoding and decoding,
// and FromMCP; a decoded one of the wrong type is refused.
func TestOutcomeRoundTrip(t *testing.T) {
	for _, r := range []result.Result{
		result.Thrown(errors.New("boom")),
		{Content: []result.Content{result.TextBlock("x")}, Outcome: result.Exited(0)},
		{Content: []result.Content{result.TextBlock("x")}, IsError: true, Outcome: result.Exited(255)},
		{Content: []result.Content{result.TextBlock("x")}},
	} {
		res, err := ToMCP(r)
		require.NoError(t, err)
		raw, err := json.Marshal(res)
		require.NoError(t, err)
		var back mcp.CallToolResult
		require.NoError(t, json.Unmarshal(raw, &back))
		got, err := FromMCP(&back)
		require.NoError(t, err)
		assert.Equal(t, r.Outcome, got.Outcome, "%s", raw)
	}
	for _, meta := range []mcp.Meta{{result.ThrownMeta: "yes"}, {result.ExitCodeMeta: -3.0}, {result.ExitCodeMeta: 2.5}, {result.ExitCodeMeta: "0"}} {
		_, err := FromMCP(&mcp.CallToolResult{Meta: meta, Content: []mcp.Content{}})
		assert.ErrorIs(t, err, ErrInvalidResult, "%v", meta)
	}
}
