// Package testbin is what the project's tests share: building the programs once per
// test binary (serve, sbxsim), a buffer concurrent output can go to, load checks and
// file trees.
package testbin

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Root is the module's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// Main builds each of progs — the path to set, keyed to the package to build, relative
// to the module root ("./cmd/sbxsim") — statically (as a release is built; a dynamically
// linked sbxsim is also slower to start), runs the tests and removes what it built. If the variable
// keepEnv (when not "") names a directory, the programs are built there and kept, so
// that a profiler finds their symbols after the run. A failed build ends the test
// binary with the compiler's output.
func Main(m *testing.M, keepEnv string, progs map[*string]string) {
	dir, keep := "", false
	if keepEnv != "" {
		dir = os.Getenv(keepEnv)
		keep = dir != ""
	}
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "pi-sbx-test-bin-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	for path, pkg := range progs {
		*path = filepath.Join(dir, filepath.Base(pkg))
		cmd := exec.Command("go", "build", "-o", *path, pkg)
		cmd.Dir = Root()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	if !keep {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers (a process's stdout and
// stderr, a session's goroutines).
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lost makes n calls at once and returns what those whose output was not want gave
// instead: under load, output lost with a success status is the worst failure an agent
// can meet, and the load tests of each layer look for it the same way.
func Lost(n int, want string, call func() string) []string {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		lost []string
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := call(); got != want {
				mu.Lock()
				lost = append(lost, got)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return lost
}

// Tree creates files (empty) and directories (names ending in "/") under a new
// temporary directory and returns it.
func Tree(t testing.TB, files ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, "/") {
			continue
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
