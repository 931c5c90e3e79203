package shell

import (
	"context"
	"testing"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/stretchr/testify/assert"
)

// Under load (hundreds of concurrent calls on a few cores) the reading goroutine can be
// scheduled late, after the shell has long exited. Every byte the command wrote must
// still be in the result: a lost "ok" with a success status is the worst failure an
// agent can get. Output is compared with what was written, call by call.
func TestBashNoOutputLostUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("500 concurrent shells")
	}
	for _, command := range []string{"echo ok", "sleep 2; echo ok"} {
		t.Run(command, func(t *testing.T) {
			const calls = 500
			dir, tmp := t.TempDir(), t.TempDir()
			lost := testbin.Lost(calls, "ok\n", func() string {
				r, err := Bash(context.Background(), dir, BashArgs{Command: command}, BashOptions{TempDir: tmp})
				switch {
				case err != nil:
					return "error: " + err.Error()
				case len(r.Content) != 1:
					return "no content"
				case r.IsError:
					return "isError: " + r.Content[0].Text
				}
				return r.Content[0].Text
			})
			t.Logf("%q: %d of %d calls lost output", command, len(lost), calls)
			assert.Empty(t, lost)
		})
	}
}
