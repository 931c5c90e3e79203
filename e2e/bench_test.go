//go:build e2e && bench

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/testsim"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/vmagent"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

var benchCalls = []struct{ name, args string }{
	{"read", `{"path":"README.md"}`},
	{"ls", `{"path":"src"}`},
	{"grep", `{"pattern":"hello","path":"src"}`},
	{"write", `{"path":"out/bench.txt","content":"` + strings.Repeat(`line of text \"quoted\"\n`, 80) + `"}`},
}

// BenchmarkCall measures one small call's latency through serve with the persistent
// agent channel, through serve with --transport per-call, as `tool --local` (a process
// per call, on the host) and, for the floor, the tool called in-process; it reports p50
// and p99 in milliseconds.
//
//	go test -tags e2e,bench -run '^$' -bench BenchmarkCall -benchtime 200x ./e2e
func BenchmarkCall(b *testing.B) {
	for _, transport := range []string{"inprocess", "local", "persistent", "per-call"} {
		for _, c := range benchCalls {
			b.Run(transport+"/"+c.name, func(b *testing.B) {
				bw := benchWorld(b)
				timeWarmCalls(b, bw.caller(b, transport, c.name, c.args))
			})
		}
	}
}

// BenchmarkConcurrent200 measures 200 concurrent small reads through one serve (one
// agent channel), per batch.
//
//	go test -tags e2e,bench -run '^$' -bench BenchmarkConcurrent200 -benchtime 20x ./e2e
func BenchmarkConcurrent200(b *testing.B) {
	w := benchWorld(b)
	cmd := exec.Command(backendBin, "serve")
	cmd.Dir, cmd.Env = w.ws, w.env()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	params := &mcp.CallToolParams{Name: "read", Arguments: json.RawMessage(`{"path":"README.md"}`)}
	if _, err := cs.CallTool(context.Background(), params); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		var failed atomic.Int64
		for j := 0; j < 200; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
					failed.Add(1)
				}
			}()
		}
		wg.Wait()
		if n := failed.Load(); n > 0 {
			b.Fatalf("%d of 200 concurrent calls failed", n)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/200-calls")
}

// timeWarmCalls makes one call to warm up (the sandbox created, the agent installed and
// started), then times b.N calls one after another and reports their percentiles.
func timeWarmCalls(b *testing.B, do func()) {
	do()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		do()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		i := int(p * float64(len(lat)-1))
		return float64(lat[i].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// benchWorld is a world for a benchmark (newWorld wants a *testing.T for its checks).
func benchWorld(b *testing.B) *world {
	// testsim removes the sandboxes at the end (the world's sandbox listing needs it too).
	sims := testsim.New(b, simBin, false)
	w := &world{t: b, sims: sims, state: sims.State, ws: b.TempDir(), decoy: "/nonexistent/decoy.sock"}
	writeFixture(b, w.ws)
	return w
}

func (w *world) caller(b *testing.B, transport, name, args string) func() {
	if transport == "inprocess" {
		reg := vmagent.Default()
		return func() {
			if _, err := reg.Call(context.Background(), w.ws, name, []byte(args), tools.Env{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	if transport == "local" {
		return func() {
			cmd := exec.Command(backendBin, "tool", "--local", "--cwd", w.ws, name, args)
			if out, err := cmd.Output(); err != nil {
				b.Fatalf("tool --local: %v %s", err, out)
			}
		}
	}
	cmd := exec.Command(backendBin, "serve", "--transport", transport)
	cmd.Dir, cmd.Env = w.ws, w.env()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	params := &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)}
	return func() {
		res, err := cs.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", name, err, res)
		}
	}
}

// BenchmarkServeIdleRSS reports serve's resident set once the agent channel is up and
// 50 calls were made (target: under 30 MB), and `tool --local`'s peak RSS for the same
// read as the reference: one process doing the work, without MCP or the channel.
//
//	go test -tags e2e,bench -run '^$' -bench BenchmarkServeIdleRSS -benchtime 1x ./e2e
func BenchmarkServeIdleRSS(b *testing.B) {
	for i := 0; i < b.N; i++ {
		w := benchWorld(b)
		cmd := exec.Command(backendBin, "serve")
		cmd.Dir, cmd.Env = w.ws, w.env()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		params := &mcp.CallToolParams{Name: "read", Arguments: json.RawMessage(`{"path":"README.md"}`)}
		for j := 0; j < 50; j++ {
			if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
				b.Fatalf("read: %v %v", err, res)
			}
		}
		serveKB := rssKB(b, cmd.Process.Pid)
		cs.Close()

		ref := exec.Command(backendBin, "tool", "--local", "--cwd", w.ws, "read", `{"path":"README.md"}`)
		if out, err := ref.Output(); err != nil {
			b.Fatalf("tool --local: %v %s", err, out)
		}
		refKB := ref.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
		b.ReportMetric(float64(serveKB)/1024, "serve-RSS-MB")
		b.ReportMetric(float64(refKB)/1024, "tool-local-RSS-MB")
		b.ReportMetric(float64(serveKB)/float64(refKB), "serve/local")
	}
}

func rssKB(t testing.TB, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
