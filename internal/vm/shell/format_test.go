package shell

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/truncate"
)

// TestFormat covers endings a real process cannot easily produce on demand; the
// texts are pi 1.6.0's (bash.ts formatOutput/appendStatus).
func TestFormat(t *testing.T) {
	lines := "lines"
	short := snapshot{truncation: truncate.Result{Content: "out\n", TotalLines: 1, OutputLines: 1, TotalBytes: 4, OutputBytes: 4}}
	empty := snapshot{}
	cut := snapshot{
		truncation: truncate.Result{Content: "2\n3", Truncated: true, TruncatedBy: &lines, TotalLines: 3, OutputLines: 2},
		path:       "/tmp/pi-bash-0123456789abcdef.log",
	}
	partial := snapshot{
		truncation: truncate.Result{Content: "zz", Truncated: true, TruncatedBy: &lines, TotalLines: 4, OutputLines: 1, OutputBytes: 51200, LastLinePartial: true},
		path:       "/tmp/f.log",
	}
	secs := func(v float64) *float64 { return &v }
	tests := []struct {
		name    string
		snap    snapshot
		end     ending
		timeout *float64
		want    string
		thrown  bool
		isError bool
	}{
		{name: "ok", snap: short, end: ending{hasCode: true}, want: "out\n"},
		{name: "no output", snap: empty, end: ending{hasCode: true}, want: "(no output)"},
		{name: "no exit code", snap: empty, end: ending{}, want: "(no output)\n\nCommand terminated without an exit code", thrown: true},
		{name: "aborted, nothing printed", snap: empty, end: ending{aborted: true, hasCode: true, code: 137}, want: "Command aborted", thrown: true},
		{name: "aborted wins over timeout", snap: short, end: ending{aborted: true, timedOut: true}, timeout: secs(1), want: "out\n\n\nCommand aborted", thrown: true},
		{name: "timeout", snap: empty, end: ending{timedOut: true}, timeout: secs(2.5), want: "Command timed out after 2.5 seconds", thrown: true},
		{name: "timeout after shell exit", snap: short, end: ending{timedOut: true, shellExited: true, hasCode: true, code: 2, exitedAfter: 1250 * time.Millisecond}, timeout: secs(3),
			want: "out\n\n\nCommand timed out after 3 seconds. The shell exited with code 2 after 1.3 seconds, but background processes it started kept writing output until the timeout.", thrown: true},
		{name: "exit code with truncation", snap: cut, end: ending{hasCode: true, code: 1},
			want: "2\n3\n\n[Showing lines 2-3 of 3. Full output: /tmp/pi-bash-0123456789abcdef.log]\n\nCommand exited with code 1", isError: true},
		{name: "last line partial", snap: partial, end: ending{hasCode: true},
			want: "zz\n\n[Showing last 50.0KB of line 4 (line is 97.7KB). Full output: /tmp/f.log]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := format(tt.snap, 100000, tt.end, tt.timeout)
			if tt.thrown {
				require.Error(t, err)
				assert.Equal(t, tt.want, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []result.Content{result.TextBlock(tt.want)}, r.Content)
			assert.Equal(t, tt.isError, r.IsError)
			require.NotNil(t, r.Outcome.ExitCode, "a returned result carries its exit code")
			assert.Equal(t, tt.end.code, *r.Outcome.ExitCode)
			assert.False(t, r.Outcome.Thrown)
			if tt.snap.truncation.Truncated {
				assert.Equal(t, BashDetails{Truncation: &tt.snap.truncation, FullOutputPath: tt.snap.path}, r.Details)
			} else {
				assert.Nil(t, r.Details)
			}
		})
	}
}
