package shell

import (
	"context"
	"sync"
	"testing"

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
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				lost []string
			)
			for range calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := Bash(context.Background(), dir, BashArgs{Command: command}, BashOptions{TempDir: tmp})
					got := ""
					switch {
					case err != nil:
						got = "error: " + err.Error()
					case len(r.Content) != 1:
						got = "no content"
					default:
						got = r.Content[0].Text
					}
					if got != "ok\n" || r.IsError {
						mu.Lock()
						lost = append(lost, got)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			t.Logf("%q: %d of %d calls lost output", command, len(lost), calls)
			assert.Empty(t, lost)
		})
	}
}
