//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedServe writes a stand-in for pi-sbx-backend that runs the real one, except that
// `serve` first records its pid, waits until the gate file exists and, while the fail
// file exists, exits with a reason on stderr instead.
func gatedServe(t *testing.T) (bin, pidFile, gate, fail string) {
	dir := t.TempDir()
	bin, pidFile, gate, fail = filepath.Join(dir, "pi-sbx-backend"), filepath.Join(dir, "pid"), filepath.Join(dir, "gate"), filepath.Join(dir, "fail")
	script := "#!/bin/sh\n" +
		`if [ "$1" = serve ]; then` + "\n" +
		"  echo $$ > " + pidFile + ".new && mv " + pidFile + ".new " + pidFile + "\n" +
		"  while [ ! -f " + gate + " ]; do sleep 0.05; done\n" +
		"  if [ -f " + fail + " ]; then echo 'hrel: cannot start: the disk is on fire' >&2; exit 3; fi\n" +
		"fi\n" +
		"exec " + backendBin + ` "$@"` + "\n"
	require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
	return bin, pidFile, gate, fail
}

// statusLine is the pi status line the package sets: the screen's last line.
func statusLine(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// expectStatus waits until pi's status line matches want (a regular expression of the
// whole line) and returns its submatches.
func (p *piTUI) expectStatus(want string, within time.Duration) []string {
	p.t.Helper()
	re := regexp.MustCompile("^(?:" + want + ")$")
	deadline := time.Now().Add(within)
	for {
		p.screen = p.tmux("capture-pane", "-p", "-t", "t")
		got := statusLine(p.screen)
		if m := re.FindStringSubmatch(got); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the status line never matched %q within %s (now %q):\n%s", want, within, got, p.screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPiStatusLineAtEveryStep: pi's status line, captured in tmux, shows the current
// truth at each step of a session: serve starting, the sandbox ready (by the name that
// exists), serve killed and starting again, ready again under the new serve's sandbox,
// the sandbox removed from outside and made again, and a restart that fails, with its
// reason.
func TestPiStatusLineAtEveryStep(t *testing.T) {
	w := newWorld(t)
	bin, pidFile, gate, fail := gatedServe(t)
	p := startPiTUIWith(t, w, w.ws, "scripted", "PI_SBX_BACKEND="+bin)
	open := func() { require.NoError(t, os.WriteFile(gate, nil, 0o644)) }
	killServe := func() {
		b, err := os.ReadFile(pidFile)
		require.NoError(t, err)
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		require.NoError(t, err)
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		require.Eventually(t, func() bool { return syscall.Kill(pid, 0) == syscall.ESRCH }, 10*time.Second, 20*time.Millisecond)
	}
	ready := func() string {
		t.Helper()
		// net: open is the tests' simulator's allow-all preset, in a word.
		name := p.expectStatus(`sandbox: (pi-sbx-[0-9a-z-]+) \(rw\), net: open`, time.Minute)[1]
		require.Eventually(t, func() bool { return strings.Join(w.sandboxes(), " ") == name }, 30*time.Second, 50*time.Millisecond,
			"the status line names the one sandbox there is: %q vs %v", name, w.sandboxes())
		return name
	}
	turn := 0
	prompt := func() {
		t.Helper()
		turn++
		p.send("go")
		p.expect("turn "+strconv.Itoa(turn)+" done", time.Minute)
	}

	p.expectStatus(`sandbox: starting pi-sbx-backend serve…`, 10*time.Second)
	open()
	first := ready()
	prompt()
	assert.Equal(t, "sandbox: "+first+" (rw), net: open", statusLine(p.screen), "a call leaves it as it was")

	// serve killed: the next call starts it again, and says so until it is back.
	require.NoError(t, os.Remove(gate))
	killServe()
	p.send("go")
	turn++
	p.expectStatus(`sandbox: serve exited; starting it again…`, time.Minute)
	open()
	p.expect("turn "+strconv.Itoa(turn)+" done", time.Minute)
	second := ready()
	assert.NotEqual(t, first, second, "the new serve's own sandbox, not the killed one's")

	// The sandbox removed from outside: made again under its name, which the line keeps.
	out, code := w.sim("rm", "-f", second)
	require.Zero(t, code, out)
	prompt()
	assert.Contains(t, p.screen, "was removed from outside")
	assert.Equal(t, second, ready())

	// A restart that fails: the line says why.
	require.NoError(t, os.WriteFile(fail, nil, 0o644))
	killServe()
	p.send("go")
	p.expectStatus(`sandbox: pi-sbx-backend serve exited with code 3 at start.*the disk is on fire.*`, time.Minute)

	p.tmux("send-keys", "-t", "t", "C-d")
	p.expect("PI-EXIT=0", 30*time.Second)
}
