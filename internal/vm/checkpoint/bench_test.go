//go:build bench

package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkJournalCheckpoint is the journal's cost per call: one file changed in a
// 10,000-file work tree (100 directories of 100), then a checkpoint (git add -A with
// the private index, write-tree, commit-tree, update-ref), in a clone's own repository
// and in a private one, and with the changed file named (as serve names a write's or an
// edit's), then through a Batch (the agent's way for named files). It reports the median and 90th percentile besides the mean, and the CPU time
// of git per checkpoint (what a loaded machine's wall clock hides).
//
//	go test -tags bench -run '^$' -bench JournalCheckpoint -benchtime 200x ./internal/vm/checkpoint
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
		name               string
		clone, only, batch bool
		changes            string // "watch" (inotify) or "scan" (stat): what names a command's changes
	}{
		{"clone/10k-files-1-changed", true, false, false, ""},
		{"private/10k-files-1-changed", false, false, false, ""},
		{"clone/10k-files-1-written", true, true, false, ""}, // a write or an edit: the host names the file
		// As the agent takes them: git's batch processes kept open between checkpoints,
		// and for a command's, named by nobody, the paths inotify saw change (or a scan
		// found, where inotify has no watch left).
		{"clone/10k-files-1-written-batch", true, true, true, ""},
		{"private/10k-files-1-written-batch", false, true, true, ""},
		{"clone/10k-files-1-changed-watch", true, false, true, "watch"},
		{"private/10k-files-1-changed-watch", false, false, true, "watch"},
		{"private/10k-files-1-changed-scan", false, false, true, "scan"}, // where inotify has no watch left
	} {
		clone := tc.clone
		b.Run(tc.name, func(b *testing.B) {
			j := journalFixture(b, clone, files)
			if tc.batch {
				j.Batch = &Batch{}
				defer j.Batch.Close()
			}
			var changes Changes
			switch tc.changes {
			case "watch":
				w, err := NewWatch(j.Root)
				if err != nil {
					b.Fatal(err)
				}
				defer w.Close()
				changes = w
			case "scan":
				changes = NewScan(j.Root)
			}
			ctx := context.Background()
			last, err := j.Take(ctx, "", "", "refs/pi-sbx/journal/0", "start")
			if err != nil {
				b.Fatal(err)
			}
			j.Changes = changes
			if tc.changes == "scan" { // its first look, which has nothing to compare with
				if last, err = j.Take(ctx, last.Commit, last.Tree, "refs/pi-sbx/journal/0", "start"); err != nil {
					b.Fatal(err)
				}
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
// 90th percentile and the CPU time op took, per op: this process's during op and its
// child processes' (git's runs, and the batch processes that outlive a checkpoint).
func measure(b *testing.B, setup func(i int), op func(i int) error) {
	times := make([]time.Duration, 0, b.N)
	var own time.Duration
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
	live := liveChildrenCPU()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		setup(i)
		b.StartTimer()
		ownBefore := selfCPU()
		start := time.Now()
		err := op(i)
		times = append(times, time.Since(start))
		own += selfCPU() - ownBefore
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) + own
	for pid, t := range liveChildrenCPU() {
		cpu += t - live[pid]
	}
	b.ReportMetric(float64((cpu/time.Duration(b.N)).Microseconds())/1000, "ms-cpu/op")
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "ms-p90")
}

// selfCPU is the CPU time this process has taken.
func selfCPU() time.Duration {
	var u syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// liveChildrenCPU is the CPU time each running child of this process has taken, read
// from /proc (a child's own is in RUSAGE_CHILDREN only once it has ended).
func liveChildrenCPU() map[int]time.Duration {
	out := map[int]time.Duration{}
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(field)
			if err != nil {
				continue
			}
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				continue
			}
			rest := stat[bytes.LastIndexByte(stat, ')')+2:] // the command may hold spaces
			f := strings.Fields(string(rest))
			if len(f) < 13 {
				continue
			}
			utime, _ := strconv.ParseInt(f[11], 10, 64) // fields 14 and 15: clock ticks
			stime, _ := strconv.ParseInt(f[12], 10, 64)
			out[pid] = time.Duration(utime+stime) * time.Second / 100 // USER_HZ, 100 on Linux
		}
	}
	return out
}

// BenchmarkJournalGoSrc is the same cost on a copy of Go's own src (some 11,500 files
// in a real tree's shape, a clone's repository listing them all), with 1 and with 100
// files changed per call, beside a `git status` of the same tree.
//
//	go test -tags bench -run '^$' -bench JournalGoSrc -benchtime 10x ./internal/vm/checkpoint
func BenchmarkJournalGoSrc(b *testing.B) {
	b.Run("reference/git-status", func(b *testing.B) {
		j, _ := goSrcFixture(b)
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
		changed int
		watch   bool
	}{{1, false}, {100, false}, {1, true}, {100, true}} {
		changed, name := tc.changed, fmt.Sprintf("clone/%d-changed", tc.changed)
		if tc.watch {
			name += "-watch" // as the agent takes them: the paths inotify saw, through a Batch
		}
		b.Run(name, func(b *testing.B) {
			j, goFiles := goSrcFixture(b)
			var w *Watch
			if tc.watch {
				j.Batch = &Batch{}
				defer j.Batch.Close()
				var err error
				if w, err = NewWatch(j.Root); err != nil {
					b.Fatal(err)
				}
				defer w.Close()
			}
			last := takeChanged(b, j, Checkpoint{}, 0)
			if w != nil {
				j.Changes = w // after checkpoint 0, which looks at all of the tree
			}
			measure(b, func(i int) {
				for _, f := range goFiles[:changed] {
					appendLine(b, f, i)
				}
			}, func(i int) error { last = takeChanged(b, j, last, i+1); return nil })
		})
	}
}

// BenchmarkJournalSize is what the journal takes on disk after 1,000 calls that each
// change one file of Go's src (its repository's growth per checkpoint, loose objects as
// git leaves them). Each iteration is the whole 1,000 calls:
//
//	go test -tags bench -run '^$' -bench JournalSize -benchtime 1x ./internal/vm/checkpoint
func BenchmarkJournalSize(b *testing.B) {
	for range b.N {
		j, goFiles := goSrcFixture(b)
		// The tree's own objects in a pack, so that what is loose after the calls is
		// what the journal wrote.
		gitIn(b, j.Root, "repack", "-adq")
		before := countObjects(b, j.Root)
		last := takeChanged(b, j, Checkpoint{}, 0)
		const calls = 1000
		for i := range calls {
			f := goFiles[i%len(goFiles)]
			appendLine(b, f, i)
			last = takeChanged(b, j, last, i+1, f) // named, as a write's or an edit's: the same objects, sooner
		}
		after := countObjects(b, j.Root)
		gitIn(b, j.Root, "repack", "-dq") // the loose objects (the journal's) into a pack of their own
		packed := countObjects(b, j.Root)
		b.ReportMetric(float64(after["count"])/calls, "objects/checkpoint")
		b.ReportMetric(float64(after["size"])/calls, "KiB-loose/checkpoint")
		b.ReportMetric(float64(packed["size-pack"]-before["size-pack"])/calls, "KiB-packed/checkpoint")
	}
}

// goSrcFixture is a clone of a copy of Go's src, and 100 of its .go files to change.
func goSrcFixture(b *testing.B) (Journal, []string) {
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skipf("no Go source tree at %s", src)
	}
	root, priv := b.TempDir(), b.TempDir()
	if out, err := exec.Command("cp", "-a", src+"/.", root).CombinedOutput(); err != nil {
		b.Fatalf("copying %s: %v: %s", src, err, out)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "start"}} {
		// No gc in the background (commit starts one): the tree's objects stay as they are.
		if out, err := exec.Command("git", append([]string{"-C", root, "-c", "gc.auto=0"}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %s: %v: %s", args[0], err, out)
		}
	}
	var goFiles []string
	_ = filepath.WalkDir(filepath.Join(root, "net"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".go" && len(goFiles) < 100 {
			goFiles = append(goFiles, p)
		}
		return nil
	})
	if len(goFiles) < 100 {
		b.Fatalf("found %d .go files under net/", len(goFiles))
	}
	return Journal{Root: root, GitDir: filepath.Join(root, ".git"), Index: filepath.Join(priv, "index")}, goFiles
}

// takeChanged takes checkpoint n after last (the first when last is zero) and fails
// unless something changed.
func takeChanged(b *testing.B, j Journal, last Checkpoint, n int, only ...string) Checkpoint {
	cp, err := j.Take(context.Background(), last.Commit, last.Tree, "refs/pi-sbx/journal/"+strconv.Itoa(n), "call", only...)
	if err != nil {
		b.Fatal(err)
	}
	if !cp.Changed {
		b.Fatalf("checkpoint %d: nothing changed", n)
	}
	return cp
}

func appendLine(b *testing.B, path string, i int) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "// change %d\n", i); err != nil {
		b.Fatal(err)
	}
}

func gitIn(b *testing.B, dir string, args ...string) string {
	out, err := exec.Command("git", append([]string{"-C", dir, "-c", "gc.auto=0"}, args...)...).Output()
	if err != nil {
		b.Fatalf("git %s: %v", args[0], err)
	}
	return string(out)
}

// countObjects is git count-objects -v: count (loose objects), size (their KiB on
// disk), size-pack (KiB of packs).
func countObjects(b *testing.B, dir string) map[string]int64 {
	m := map[string]int64{}
	for _, line := range strings.Split(gitIn(b, dir, "count-objects", "-v"), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			m[k], _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return m
}
