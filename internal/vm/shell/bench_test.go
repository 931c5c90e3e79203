//go:build bench

package shell

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gigabyte prints 1 GiB of 101-byte lines.
const gigabyte = `yes 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789 | head -c 1073741824`

// BenchmarkBash1GB runs a command printing 1 GiB through the bash tool and reports its
// throughput and the growth of peak RSS, next to references measured in the same run:
// the command writing to /dev/null (what the producer can do at all), the command piped
// into `cat > /dev/null` (a plain pipe reader), and the command's output drained from a
// pipe like the tool's (1 MiB) into io.Discard (the tool's reading path without
// counting, tail or file).
//
//	go test -tags bench -run '^$' -bench Bash1GB -benchtime 1x ./internal/vm/shell
func BenchmarkBash1GB(b *testing.B) {
	const size = 1 << 30
	tmp := b.TempDir()
	ref := throughput(b, size, func() { runTo(b, gigabyte+" > /dev/null", nil) })
	cat := throughput(b, size, func() { runTo(b, gigabyte+" | cat > /dev/null", nil) })
	drain := throughput(b, size, func() { runTo(b, gigabyte, io.Discard) })

	resetPeakRSS(b)
	base := procStatusKB(b, "VmRSS")
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		r, err := Bash(context.Background(), tmp, BashArgs{Command: gigabyte}, BashOptions{TempDir: tmp})
		if err != nil {
			b.Fatal(err)
		}
		d, ok := r.Details.(BashDetails)
		if !ok || d.Truncation.TotalBytes != size {
			b.Fatalf("unexpected result: %+v", r.Details)
		}
		b.StopTimer()
		if st, err := os.Stat(d.FullOutputPath); err != nil || st.Size() != size {
			b.Fatalf("full output file: %v %v", st, err)
		}
		os.Remove(d.FullOutputPath)
		b.StartTimer()
	}
	elapsed := time.Since(start)
	b.StopTimer()
	growth := float64(procStatusKB(b, "VmHWM")-base) / 1024

	mbps := float64(size) * float64(b.N) / elapsed.Seconds() / 1e6
	b.ReportMetric(mbps, "MB/s")
	b.ReportMetric(ref, "ref-devnull-MB/s")
	b.ReportMetric(cat, "ref-cat-MB/s")
	b.ReportMetric(drain, "ref-pipe-MB/s")
	b.ReportMetric(growth, "peak-RSS-growth-MB")
	if growth >= 64 {
		b.Errorf("peak RSS grew by %.1f MB (limit 64 MB)", growth)
	}
}

// throughput times f moving size bytes, in MB/s (10^6 bytes).
func throughput(b *testing.B, size int, f func()) float64 {
	start := time.Now()
	f()
	return float64(size) / time.Since(start).Seconds() / 1e6
}

// runTo runs command with bash -c, its stdout drained from a pipe sized like the
// tool's into w (nil: stdout is /dev/null).
func runTo(b *testing.B, command string, w io.Writer) {
	cmd := exec.Command("/bin/bash", "-c", command)
	// In a session of its own, as the tool runs commands: with the kernel's autogroup
	// scheduling a new session is a new scheduling group, which on a loaded machine
	// changes the share of CPU the command gets.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var pr *os.File
	if w != nil {
		r, pw, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		growPipe(pw)
		cmd.Stdout, pr = pw, r
		defer pr.Close()
		defer pw.Close()
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	if pr != nil {
		cmd.Stdout.(*os.File).Close()
		if _, err := io.CopyBuffer(w, pr, make([]byte, readChunk)); err != nil {
			b.Fatal(err)
		}
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
}

// resetPeakRSS resets VmHWM to the current RSS (Linux: "5" to clear_refs).
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Fatalf("resetting peak RSS: %v", err)
	}
}

// procStatusKB reads a "Key:  N kB" line of /proc/self/status.
func procStatusKB(b *testing.B, key string) int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), key+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("%s not in /proc/self/status", key)
	return 0
}
