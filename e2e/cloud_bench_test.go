//go:build e2e && bench

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/testsim"
)

// BenchmarkCloudCall measures a warm small call (read) through serve to a cloud sandbox
// (sbxsim --cloud) at a round trip of 0, 40 and 100 ms on every exec stream and cp,
// over the persistent agent channel and, for comparison, per call; p50 and p99 in ms.
//
//	go test -tags e2e,bench -run '^$' -bench BenchmarkCloudCall -benchtime 50x ./e2e
func BenchmarkCloudCall(b *testing.B) {
	for _, rtt := range []string{"0ms", "40ms", "100ms"} {
		for _, transport := range []string{"persistent", "per-call"} {
			b.Run("rtt="+rtt+"/"+transport, func(b *testing.B) {
				w := cloudBenchWorld(b)
				cs := w.cloudServe(b, rtt, "--transport", transport)
				params := &mcp.CallToolParams{Name: "read", Arguments: json.RawMessage(`{"path":"README.md"}`)}
				do := func() {
					if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
						b.Fatalf("read: %v %v", err, res)
					}
				}
				timeWarmCalls(b, do) // the warm-up also ships the workspace
			})
		}
	}
}

// BenchmarkCloudStart measures a cloud session's start on this project's own tree (a
// clone of it: a git workspace, its history shipped with it) at a 40 ms round trip:
// from serve's start to its first answer, the sandbox created, the workspace shipped
// and the agent installed and running.
//
//	go test -tags e2e,bench -run '^$' -bench BenchmarkCloudStart -benchtime 3x ./e2e
func BenchmarkCloudStart(b *testing.B) {
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Dir(filepath.Dir(file))
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		w := cloudBenchWorld(b)
		w.ws = filepath.Join(b.TempDir(), "pi-sbx-backend")
		if out, err := exec.Command("git", "clone", "-q", "--no-hardlinks", repo, w.ws).CombinedOutput(); err != nil {
			b.Fatalf("git clone: %v %s", err, out)
		}
		b.StartTimer()
		start := time.Now()
		cs := w.cloudServe(b, "40ms")
		if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "pi_sbx_status", Arguments: json.RawMessage(`{}`)}); err != nil || res.IsError {
			b.Fatalf("pi_sbx_status: %v %v", err, res)
		}
		b.ReportMetric(time.Since(start).Seconds(), "start-s")
		b.StopTimer()
		cs.Close()
		b.StartTimer()
	}
}

// cloudServe starts serve on w's workspace with PI_SBX_CLOUD=1 at round trip rtt.
func (w *world) cloudServe(b *testing.B, rtt string, args ...string) *mcp.ClientSession {
	cmd := exec.Command(backendBin, append([]string{"serve"}, args...)...)
	cmd.Dir = w.ws
	cmd.Env = w.env(append(cloudEnv(b.TempDir(), "SBXSIM_CLOUD_RTT="+rtt), "DOCKER_SANDBOX_TEARDOWN_FORCE=1")...)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// cloudBenchWorld is a world for a cloud benchmark: its own simulator state (whose
// sandboxes testsim removes at the end) and the fixture.
func cloudBenchWorld(b *testing.B) *world {
	sims := testsim.New(b, simBin, false)
	w := &world{t: b, sims: sims, state: sims.State, ws: b.TempDir(), decoy: "/nonexistent/decoy.sock"}
	writeFixture(b, w.ws)
	return w
}

// BenchmarkCloudParallel runs ten serve sessions at once, each with its own cloud
// sandbox (sbxsim --cloud, 40 ms round trip), each making 100 small calls in turn: it
// reports the calls that failed, each serve's resident set after its calls (the
// largest), and the host CPU time the serves spent per call.
//
//	go test -tags e2e,bench -run '^$' -bench BenchmarkCloudParallel -benchtime 1x ./e2e
func BenchmarkCloudParallel(b *testing.B) {
	// One session beside ten: the host's cost per session and per call should not grow.
	for _, sessions := range []int{1, 10} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) { cloudParallel(b, sessions) })
	}
}

func cloudParallel(b *testing.B, sessions int) {
	const calls = 100
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		w := cloudBenchWorld(b)
		type one struct {
			cs  *mcp.ClientSession
			cmd *exec.Cmd
		}
		all := make([]one, sessions)
		for j := range all {
			ws := filepath.Join(b.TempDir(), "ws")
			writeFixture(b, ws)
			cmd := exec.Command(backendBin, "serve")
			cmd.Dir = ws
			cmd.Env = w.env(append(cloudEnv(b.TempDir(), "SBXSIM_CLOUD_RTT=40ms"), "DOCKER_SANDBOX_TEARDOWN_FORCE=1")...)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { cs.Close() })
			all[j] = one{cs, cmd}
		}
		params := &mcp.CallToolParams{Name: "read", Arguments: json.RawMessage(`{"path":"README.md"}`)}
		var failed atomic.Int64
		var wg sync.WaitGroup
		b.StartTimer()
		start := time.Now()
		for _, s := range all {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; k < calls; k++ {
					if res, err := s.cs.CallTool(context.Background(), params); err != nil || res.IsError {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		b.StopTimer()
		maxKB, cpu := 0, time.Duration(0)
		for _, s := range all {
			maxKB = max(maxKB, rssKB(b, s.cmd.Process.Pid))
			cpu += cpuTime(b, s.cmd.Process.Pid)
		}
		b.ReportMetric(float64(failed.Load()), "failed-calls")
		b.ReportMetric(float64(maxKB)/1024, "max-serve-RSS-MB")
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(sessions*calls), "serve-CPU-ms/call")
		b.ReportMetric(elapsed.Seconds(), "wall-s")
		for _, s := range all {
			s.cs.Close()
		}
	}
}
