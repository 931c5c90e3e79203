//go:build bench

package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkJournalCheckpoint is the journal's cost per call: one file changed in a
// 10,000-file work tree (100 directories of 100), then a checkpoint (git add -A with
// the private index, write-tree, commit-tree, update-ref), in a clone's own repository
// and in a private one, and with the changed file named (as serve names a write's or an
// edit's). It reports the median and 90th percentile besides the mean, and the CPU time
// of git per checkpoint (what a loaded machine's wall clock hides).
//
//	go test -tags bench -run '^$' -bench JournalCheckpoint -benchtime 200x ./internal/vm/shell
func BenchmarkJournalCheckpoint(b *testing.B) {
	files := map[string]string{}
	for d := range 100 {
		for f := range 100 {
			files[fmt.Sprintf("d%03d/f%03d.txt", d, f)] = fmt.Sprintf("file %d of directory %d\n", f, d)
		}
	}
	// The reference, in the same run: one `git status` of the same tree (its index
	// listing every file), what any git user pays on it (a loaded machine slows both
	// alike).
	b.Run("reference/git-status", func(b *testing.B) {
		j := journalFixture(b, true, files)
		if out, err := exec.Command("git", "-C", j.Root, "add", "-A").CombinedOutput(); err != nil {
			b.Fatalf("git add: %v: %s", err, out) // an index that lists the tree, as a clone's does
		}
		status := func() {
			cmd := exec.Command("git", "-C", j.Root, "-c", "core.untrackedCache=true", "status", "--porcelain")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git status: %v: %s", err, out)
			}
		}
		status()
		measure(b, func(int) {}, func(int) error { status(); return nil })
	})
	for _, tc := range []struct {
		name        string
		clone, only bool
	}{
		{"clone/10k-files-1-changed", true, false},
		{"private/10k-files-1-changed", false, false},
		{"clone/10k-files-1-written", true, true}, // a write or an edit: the host names the file
	} {
		clone := tc.clone
		b.Run(tc.name, func(b *testing.B) {
			j := journalFixture(b, clone, files)
			ctx := context.Background()
			last, err := j.Take(ctx, "", "", "refs/pi-sbx/journal/0", "start")
			if err != nil {
				b.Fatal(err)
			}
			target := filepath.Join(j.Root, "d050", "f050.txt")
			var only []string
			if tc.only {
				only = []string{target}
			}
			measure(b, func(i int) {
				if err := os.WriteFile(target, []byte("change "+strconv.Itoa(i)+"\n"), 0o644); err != nil {
					b.Fatal(err)
				}
			}, func(i int) error {
				cp, err := j.Take(ctx, last.Commit, last.Tree, "refs/pi-sbx/journal/"+strconv.Itoa(i+1), "call", only...)
				if err == nil && !cp.Changed {
					err = fmt.Errorf("checkpoint %d: nothing changed", i)
				}
				last = cp
				return err
			})
		})
	}
}

// measure runs op b.N times, each after an untimed setup, and reports the median, the
// 90th percentile and the CPU time of the processes op started, per op.
func measure(b *testing.B, setup func(i int), op func(i int) error) {
	times := make([]time.Duration, 0, b.N)
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		setup(i)
		b.StartTimer()
		start := time.Now()
		err := op(i)
		times = append(times, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) / time.Duration(b.N)
	b.ReportMetric(float64(cpu.Microseconds())/1000, "ms-cpu/op")
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "ms-p90")
}
