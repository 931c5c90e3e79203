//go:build bench

package fsops_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/fsops"
)

// The benchmarks compare our grep and find with ripgrep and fd on one generated tree
// (20,480 files, about 215 MB, cached under /tmp between runs), each round running ours
// in-process and the reference tool as pi runs it, and report the time ratios:
//
//	go test -tags bench ./internal/vm/fsops -run '^$' -bench 'Grep|Find' -benchtime 5x
//
// ns/op covers both tools; ours-ns/op is ours alone, rg-ns/op or fd-ns/op the
// reference, x-rg / x-fd is ours divided by the reference (wall time), and
// x-rg-cpu / x-fd-cpu the same for CPU time.

const benchTreeVersion = "v1"

// benchTree returns the cached benchmark tree, generating it on first use.
func benchTree(b *testing.B) string {
	b.Helper()
	root := filepath.Join(os.TempDir(), "pi-sbx-bench-tree-"+benchTreeVersion)
	done := filepath.Join(root, ".complete")
	if _, err := os.Stat(done); err == nil {
		return root
	}
	b.Logf("generating %s", root)
	os.RemoveAll(root)
	if err := generateBenchTree(root); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v %s", err, out)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return root
}

// generateBenchTree writes 32×32 directories of 20 source-like files each, with a
// .gitignore, rare needle lines and a few handler functions to find.
func generateBenchTree(root string) error {
	rng := rand.New(rand.NewSource(1))
	words := strings.Fields("the of and to in is for on that by this with from value result error " +
		"return func var const type struct interface map slice string int bool context buffer " +
		"reader writer handler server client request response config option parse format")
	pool := make([]string, 4096)
	for i := range pool {
		n := 3 + rng.Intn(12)
		parts := make([]string, n)
		for j := range parts {
			parts[j] = words[rng.Intn(len(words))]
		}
		indent := strings.Repeat("\t", rng.Intn(3))
		pool[i] = indent + strings.Join(parts, " ")
	}
	exts := []string{".go", ".ts", ".py", ".txt", ".md", ".min.js"}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.min.js\n/tmp*/\n"), 0o644); err != nil {
		return err
	}
	var sb strings.Builder
	for d1 := 0; d1 < 32; d1++ {
		for d2 := 0; d2 < 32; d2++ {
			dir := filepath.Join(root, fmt.Sprintf("pkg%02d", d1), fmt.Sprintf("mod%02d", d2))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			for f := 0; f < 20; f++ {
				sb.Reset()
				size := 1000 + rng.Intn(20000)
				for sb.Len() < size {
					switch r := rng.Intn(20000); {
					case r == 0:
						sb.WriteString("\t// needle_in_haystack marker\n")
					case r < 8:
						fmt.Fprintf(&sb, "func %s_handler(w Writer) error {\n", words[rng.Intn(len(words))])
					default:
						sb.WriteString(pool[rng.Intn(len(pool))])
						sb.WriteByte('\n')
					}
				}
				name := fmt.Sprintf("file%02d%s", f, exts[f%len(exts)])
				if err := os.WriteFile(filepath.Join(dir, name), []byte(sb.String()), 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// benchVsTool runs ours and the reference command alternately and reports both wall
// times and both CPU times (user+system): on a shared machine the CPU ratio is the
// steadier figure.
func benchVsTool(b *testing.B, unit string, ours func() error, ref *exec.Cmd) {
	if _, err := exec.LookPath(ref.Path); err != nil && !filepath.IsAbs(ref.Path) {
		b.Skipf("%s not installed", ref.Path)
	}
	benchVsFunc(b, unit, ours, func() (time.Duration, error) {
		cmd := exec.Command(ref.Path, ref.Args[1:]...)
		cmd.Dir = ref.Dir
		if out, err := cmd.Output(); err != nil && len(out) == 0 {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 1 {
				return 0, fmt.Errorf("%s: %w", ref.Path, err)
			}
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
	})
}

// selfCPU is this process's user+system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkGrep(b *testing.B) {
	root := benchTree(b)
	cases := []struct {
		name    string
		args    fsops.GrepArgs
		rgFlags []string
	}{
		{"literal", fsops.GrepArgs{Pattern: "needle_in_haystack"}, nil},
		{"literal-fixed", fsops.GrepArgs{Pattern: "needle_in_haystack", Literal: true}, []string{"--fixed-strings"}},
		{"regex", fsops.GrepArgs{Pattern: `func [a-z]+_handler\(`}, nil},
		{"regex-no-literal", fsops.GrepArgs{Pattern: `[A-Z][a-z]+[0-9]{2,}`}, nil},
		{"alternation", fsops.GrepArgs{Pattern: "needle_in_haystack|not_in_the_tree"}, nil},
		{"ignore-case", fsops.GrepArgs{Pattern: "NEEDLE_in_HAYSTACK", IgnoreCase: true}, []string{"--ignore-case"}},
		{"glob", fsops.GrepArgs{Pattern: "needle_in_haystack", Glob: "*.go"}, []string{"--glob", "*.go"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			args := append([]string{"rg", "--no-config", "--json", "--line-number", "--color=never", "--hidden"}, c.rgFlags...)
			args = append(args, "--", c.args.Pattern, ".")
			ref := exec.Command(args[0], args[1:]...)
			ref.Dir = root
			limit := 1e6
			c.args.Limit = &limit
			benchVsTool(b, "rg", func() error {
				r, err := fsops.Grep(context.Background(), root, c.args)
				if err == nil && len(r.Content) != 1 {
					err = fmt.Errorf("unexpected result %+v", r)
				}
				return err
			}, ref)
		})
	}
}

func BenchmarkFind(b *testing.B) {
	root := benchTree(b)
	cases := []struct {
		name    string
		pattern string
		fdArgs  []string
	}{
		{"basename", "*.go", []string{"*.go", root}},
		{"all", "*", []string{"*", root}},
		{"path", "pkg1*/**/file0?.py", []string{"--full-path", "--ignore-case", root + "/pkg1*/**/file0?.py", root}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			args := append([]string{"fdfind", "--color=never", "--hidden", "--glob", "--max-results", "1000001"}, c.fdArgs[:len(c.fdArgs)-1]...)
			args = append(args, "--", c.fdArgs[len(c.fdArgs)-1])
			// fd takes "-- PATTERN PATH": rebuild so the pattern follows "--".
			args = append(args[:6], append(c.fdArgs[:len(c.fdArgs)-2], "--", c.fdArgs[len(c.fdArgs)-2], root)...)
			ref := exec.Command(args[0], args[1:]...)
			limit := 1e6
			benchVsTool(b, "fd", func() error {
				_, err := fsops.Find(context.Background(), root, fsops.FindArgs{Pattern: c.pattern, Limit: &limit})
				return err
			}, ref)
		})
	}
}

// goTree returns a copy of Go's own source tree ($GOROOT/src, about 11,000 files and
// 157 MB) as a git repository, cached under /tmp between runs: a real tree for the
// grep classes the benchmarks below compare.
func goTree(b *testing.B) string {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	root := filepath.Join(os.TempDir(), "pi-sbx-bench-gosrc-v1")
	done := filepath.Join(root, ".complete")
	if _, err := os.Stat(done); err == nil {
		return root
	}
	os.RemoveAll(root)
	if out, err := exec.Command("cp", "-a", src, root).CombinedOutput(); err != nil {
		b.Fatalf("copying %s: %v %s", src, err, out)
	}
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v %s", err, out)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return root
}

// piRg runs ripgrep as pi's grep tool does — same flags, reading its JSON events and
// killing it once pi's match limit is proven (the limit-th match, then one more) — and
// returns when ripgrep has exited: the time pi's grep waits for ripgrep.
func piRg(dir string, limit int, flags ...string) func() (time.Duration, error) {
	return func() (time.Duration, error) {
		args := append([]string{"--no-config", "--json", "--line-number", "--color=never", "--hidden"}, flags...)
		cmd := exec.Command("rg", append(args, ".")...)
		cmd.Dir = dir
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return 0, err
		}
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<30)
		matches := 0
		for sc.Scan() {
			if bytes.HasPrefix(sc.Bytes(), []byte(`{"type":"match"`)) {
				if matches++; matches > limit {
					cmd.Process.Kill()
					break
				}
			}
		}
		io.Copy(io.Discard, stdout)
		cmd.Wait()
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
	}
}

// BenchmarkGrepGoTree compares our grep with ripgrep run as pi runs it, on a copy of
// Go's source tree, for these classes: many matches under the default limit,
// limit 1, case-insensitive patterns with ".*", and full scans of literal, class and
// anchored patterns (a folded literal with k or s, which fold beyond ASCII; a class run
// with no literal; a class before "$"; every empty line):
//
//	go test -tags bench ./internal/vm/fsops -run '^$' -bench GrepGoTree -benchtime 10x
func BenchmarkGrepGoTree(b *testing.B) {
	root := goTree(b)
	type c struct {
		name  string
		args  fsops.GrepArgs
		flags []string
	}
	lim := func(n float64) *float64 { return &n }
	cases := []c{
		{"many-matches-limit-100", fsops.GrepArgs{Pattern: "if err != nil"}, nil},
		{"many-matches-limit-1", fsops.GrepArgs{Pattern: "if err != nil", Limit: lim(1)}, nil},
		{"ignore-case-dot-star", fsops.GrepArgs{Pattern: "func.*zzq", IgnoreCase: true}, []string{"--ignore-case"}},
		{"ignore-case-dot-star-hits", fsops.GrepArgs{Pattern: "func.*error", IgnoreCase: true}, []string{"--ignore-case"}},
		{"ignore-case-literal", fsops.GrepArgs{Pattern: "NEWREADER", IgnoreCase: true, Limit: lim(1e6)}, []string{"--ignore-case"}},
		{"dot-star", fsops.GrepArgs{Pattern: "func.*zzq"}, nil},
		{"literal-rare", fsops.GrepArgs{Pattern: "zzq_not_there"}, nil},
		{"regex-class", fsops.GrepArgs{Pattern: `[A-Z][a-z]+Error\(`, Limit: lim(1e6)}, nil},
		{"word-class-no-literal", fsops.GrepArgs{Pattern: `\w+_\d{3}\b`, Limit: lim(1e6)}, nil},
		{"ignore-case-literal-k-s", fsops.GrepArgs{Pattern: "StackTrace", IgnoreCase: true, Limit: lim(1e6)}, []string{"--ignore-case"}},
		{"class-run-no-literal", fsops.GrepArgs{Pattern: `[0-9a-f]{32}`, Limit: lim(1e6)}, nil},
		{"end-anchored-class", fsops.GrepArgs{Pattern: `\s+$`, Limit: lim(1e6)}, nil},
		{"empty-lines-all", fsops.GrepArgs{Pattern: `^$`, Limit: lim(1e6)}, nil},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			limit := 100
			if c.args.Limit != nil {
				limit = int(*c.args.Limit)
			}
			ref := piRg(root, limit, append(c.flags, "--", c.args.Pattern)...)
			benchVsFunc(b, "rg", func() error {
				r, err := fsops.Grep(context.Background(), root, c.args)
				if err == nil && len(r.Content) != 1 {
					err = fmt.Errorf("unexpected result %+v", r)
				}
				return err
			}, ref)
		})
	}
}

// benchVsFunc is benchVsTool for a reference that runs itself and reports its CPU time.
func benchVsFunc(b *testing.B, unit string, ours func() error, ref func() (time.Duration, error)) {
	var oursWall, refWall, oursCPU, refCPU time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0 := selfCPU()
		t0 := time.Now()
		if err := ours(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		oursCPU += selfCPU() - c0
		cpu, err := ref()
		if err != nil {
			b.Fatal(err)
		}
		refWall += time.Since(t1)
		oursWall += t1.Sub(t0)
		refCPU += cpu
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(oursWall.Nanoseconds())/n, "ours-ns/op")
	b.ReportMetric(float64(refWall.Nanoseconds())/n, unit+"-ns/op")
	b.ReportMetric(float64(oursWall)/float64(refWall), "x-"+unit)
	b.ReportMetric(float64(oursCPU)/float64(refCPU), "x-"+unit+"-cpu")
}
