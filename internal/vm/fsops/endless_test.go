package fsops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops/internal/fileio"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
)

// endlessChildEnv names the case a re-executed test binary runs under its memory limit.
const endlessChildEnv = "FSOPS_ENDLESS_CASE"

// endlessAddressSpace is the child's RLIMIT_AS: a tool that loads an endless file whole
// dies of it within seconds instead of taking the machine's memory (the unfixed grep grew
// at ~300 MB/s to 24 GB). A Go program reserves about 1.2 GB of address space at start.
const endlessAddressSpace = 3 << 30

// endlessPeakRSS is the ceiling asserted on a child's peak RSS (VmHWM): StreamCap of
// content, what the search allocates beside it, and the test binary itself.
const endlessPeakRSS = 4 * fileio.StreamCap

// endlessCases are calls on files without end, each with what it must answer.
var endlessCases = []struct {
	name string
	run  func(ctx context.Context, dir string) (result.Result, error)
	want string // the result's text, or the error's
}{
	{"grep /dev/zero symlink", func(ctx context.Context, dir string) (result.Result, error) {
		return Grep(ctx, dir, GrepArgs{Pattern: "x", Path: "zero"})
	}, (&fileio.StreamTooLongError{Path: "DIR/zero"}).Error()},
	{"grep endless FIFO, no match", func(ctx context.Context, dir string) (result.Result, error) {
		return Grep(ctx, dir, GrepArgs{Pattern: "zzz", Path: "fifo"})
	}, (&fileio.StreamTooLongError{Path: "DIR/fifo"}).Error()},
	{"grep endless FIFO, limit met", func(ctx context.Context, dir string) (result.Result, error) {
		return Grep(ctx, dir, GrepArgs{Pattern: "y", Path: "fifo", Limit: ptr(3)})
	}, "fifo:1: y\nfifo:2: y\nfifo:3: y\n\n[3 matches limit reached. Use limit=6 for more, or refine pattern]"},
	{"edit /dev/zero symlink", func(ctx context.Context, dir string) (result.Result, error) {
		return Edit(ctx, dir, EditArgs{Path: "zero", Edits: []Replacement{{OldText: "a", NewText: "b"}}}, nil)
	}, (&fileio.StreamTooLongError{Path: "DIR/zero"}).Error()},
	{"read /dev/zero symlink, cancelled", func(ctx context.Context, dir string) (result.Result, error) {
		// pi streams it until it ends, as we do: memory stays flat, and only cancelling
		// ends the call.
		ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		return Read(ctx, dir, ReadArgs{Path: "zero"})
	}, "Operation aborted"},
}

func ptr(f float64) *float64 { return &f }

// TestEndlessFilesStayBounded runs each call on /dev/zero or an endless FIFO in a child
// process whose address space is limited, so that a regression fails the test instead of
// exhausting the machine, and asserts its answer and its peak RSS.
func TestEndlessFilesStayBounded(t *testing.T) {
	if name := os.Getenv(endlessChildEnv); name != "" {
		runEndlessChild(name)
		return
	}
	for _, tc := range endlessCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestEndlessFilesStayBounded$")
			cmd.Env = append(os.Environ(), endlessChildEnv+"="+tc.name, "FSOPS_ENDLESS_DIR="+dir)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "child: %s", out)
			got, hwm, ok := strings.Cut(string(out), "\x00")
			require.True(t, ok, "child printed no answer: %s", out)
			assert.Equal(t, strings.ReplaceAll(tc.want, "DIR", dir), got)
			var kb int64
			_, err = fmt.Sscanf(hwm, "%d", &kb)
			require.NoError(t, err, "child's peak RSS: %q", hwm)
			t.Logf("peak RSS %d MB", kb>>10)
			ceiling := int64(endlessPeakRSS)
			if raceDetector {
				ceiling *= 2 // the detector's own memory; still far from unbounded growth
			}
			assert.Less(t, kb<<10, ceiling, "peak RSS")
		})
	}
}

// runEndlessChild runs one case under RLIMIT_AS and prints its answer then a NUL.
func runEndlessChild(name string) {
	dir := os.Getenv("FSOPS_ENDLESS_DIR")
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: endlessAddressSpace, Max: endlessAddressSpace}); err != nil {
		fail(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
		fail(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		fail(err)
	}
	go feedForever(fifo, []byte(strings.Repeat("y\n", 4096)))
	for _, tc := range endlessCases {
		if tc.name != name {
			continue
		}
		r, err := tc.run(context.Background(), dir)
		if err != nil {
			fmt.Print(err.Error() + "\x00")
		} else {
			fmt.Print(r.Content[0].Text + "\x00")
		}
		fmt.Print(peakRSSKB())
		os.Exit(0)
	}
	fail(errors.New("no case " + name))
}

// feedForever writes chunk to the FIFO until its reader goes away (EPIPE).
func feedForever(fifo string, chunk []byte) {
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer f.Close()
	for {
		if _, err := f.Write(chunk); err != nil {
			return
		}
	}
}

// peakRSSKB is this process's VmHWM (peak resident set) in kB, as /proc/self/status has it.
func peakRSSKB() string {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err.Error()
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
		}
	}
	return "no VmHWM"
}
