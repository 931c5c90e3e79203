//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	goexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/agentlink"
)

func command(bin string, env []string, args ...string) *goexec.Cmd {
	cmd := goexec.Command(bin, args...)
	cmd.Env = env
	return cmd
}

func exitCode(err error) int {
	var ee *goexec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func stderrOf(err error) string {
	var ee *goexec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// rawServe starts serve in dir and connects the project's own small MCP client
// (agentlink.Client), which reads results without decoding them: what is timed is serve
// and the sandbox, not a client's decoding (the Go SDK's client spent more CPU per call
// than serve did).
func rawServe(b testing.TB, w *world, dir string) *agentlink.Client {
	p := w.startServe(b, dir, []string{"--cwd", dir})
	c, err := agentlink.Dial(context.Background(), p.stdout, p.stdin, p.stdin, agentlink.ClientOptions{Name: "bench", MaxLine: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// findAgent returns the pid of the in-VM agent process (`…/pi-sbx-agent-… agent`) of the
// one sandbox in w's state, found among that sandbox's processes (those in its PID
// namespace): other tests' sandboxes and agents on the machine never count.
func findAgent(b testing.TB, w *world) int {
	b.Helper()
	states, _ := filepath.Glob(filepath.Join(w.state, "sandboxes", "*", "state.json"))
	if len(states) != 1 {
		b.Fatalf("want one sandbox in %s, have %d", w.state, len(states))
	}
	data, err := os.ReadFile(states[0])
	if err != nil {
		b.Fatal(err)
	}
	var st struct {
		Init struct {
			Pid int `json:"pid"`
		} `json:"init"`
	}
	if err := json.Unmarshal(data, &st); err != nil || st.Init.Pid == 0 {
		b.Fatalf("%s: no init process (%v)", states[0], err)
	}
	// sbx exec enters the sandbox's namespaces (nsenter): its processes are not the
	// init's children, but they share its PID namespace, which names the sandbox.
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", st.Init.Pid))
	if err != nil {
		b.Fatal(err)
	}
	found := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if theirs, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); theirs != ns {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		argv := strings.Split(string(cmdline), "\x00")
		if len(argv) > 1 && strings.Contains(argv[0], "pi-sbx-agent-") && argv[1] == "agent" {
			if found != 0 {
				b.Fatal("more than one agent process runs in the sandbox")
			}
			found = pid
		}
	}
	if found == 0 {
		b.Fatal("no agent process in the sandbox")
	}
	return found
}
