//go:build e2e && bench

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/agentlink"
)

// BenchmarkPeakRSS reports the peak resident sets (VmHWM) of serve and of the in-VM agent
// (sbxsim, persistent channel) under loads that once grew without bound:
// a grep of /dev/zero through a symlink, a client that sends 20,000 calls with 50 KB
// replies and reads none of them until serve stops taking work, and 1000 concurrent
// mixed calls. Figures, not assertions: every call must still be answered.
//
//	go test -tags e2e,bench ./e2e -run '^$' -bench BenchmarkPeakRSS -benchtime 1x
func BenchmarkPeakRSS(b *testing.B) {
	b.Run("grep-dev-zero", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			w := benchWorld(b)
			if err := os.Symlink("/dev/zero", filepath.Join(w.ws, "zero")); err != nil {
				b.Fatal(err)
			}
			s := startPeakServe(b, w)
			c := s.dial(b)
			raw, err := c.CallTool(context.Background(), "grep", json.RawMessage(`{"pattern":"x","path":"zero"}`), nil, "")
			if err != nil {
				b.Fatalf("grep: %v", err)
			}
			b.Logf("grep of /dev/zero: %.200s", raw)
			s.findAgent(b, w) // started by the grep: its VmHWM covers it
			s.report(b)
			c.Close()
			s.end()
		}
	})
	b.Run("unread-20k-50KB", func(b *testing.B) {
		const calls = 20000
		for i := 0; i < b.N; i++ {
			w := benchWorld(b)
			line := strings.Repeat("x", 49) + "\n"
			if err := os.WriteFile(filepath.Join(w.ws, "50k.txt"), []byte(strings.Repeat(line, 1000)), 0o644); err != nil {
				b.Fatal(err)
			}
			s := startPeakServe(b, w)
			out := bufio.NewReaderSize(s.stdout, 1<<20)
			send := func(l string) {
				if _, err := io.WriteString(s.stdin, l+"\n"); err != nil {
					b.Fatal(err)
				}
			}
			send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
			if _, err := out.ReadString('\n'); err != nil {
				b.Fatal(err)
			}
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ls","arguments":{}}}`)
			if _, err := out.ReadString('\n'); err != nil { // the agent started
				b.Fatal(err)
			}
			s.findAgent(b, w)
			var sent atomic.Int64
			go func() {
				for k := 0; k < calls; k++ {
					if _, err := fmt.Fprintf(s.stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read","arguments":{"path":"50k.txt"}}}`+"\n", k+2); err != nil {
						return
					}
					sent.Add(1)
				}
			}()
			// Nothing is read until the writes stall (serve took no more work and the
			// pipe to it is full) or all were taken.
			for last := int64(-1); ; {
				time.Sleep(time.Second)
				n := sent.Load()
				if n == last || n == calls {
					break
				}
				last = n
			}
			b.ReportMetric(float64(sent.Load()), "requests-written-unread")
			serveUnread, agentUnread := s.peaks(b)
			b.ReportMetric(serveUnread, "serve-unread-peak-MB")
			b.ReportMetric(agentUnread, "agent-unread-peak-MB")
			for got := 0; got < calls; {
				l, err := out.ReadString('\n')
				if err != nil {
					b.Fatalf("after %d replies: %v", got, err)
				}
				if strings.Contains(l, `"result"`) {
					got++
				}
			}
			s.report(b)
			s.end()
		}
	})
	b.Run("1000-concurrent-mixed", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			w := benchWorld(b)
			for k := 0; k < 1000; k++ {
				if err := os.WriteFile(filepath.Join(w.ws, fmt.Sprintf("e%d.txt", k)), []byte("alpha\nbeta\n"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			s := startPeakServe(b, w)
			c := s.dial(b)
			callOK(b, c, "ls", json.RawMessage(`{}`))
			s.findAgent(b, w)
			mixed := func(k int) (string, string) {
				switch k % 7 {
				case 0:
					return "read", `{"path":"README.md"}`
				case 1:
					return "write", fmt.Sprintf(`{"path":"w/%d.txt","content":"call %d\n"}`, k, k)
				case 2:
					return "edit", fmt.Sprintf(`{"path":"e%d.txt","edits":[{"oldText":"beta","newText":"beta %d"}]}`, k, k)
				case 3:
					return "grep", `{"pattern":"hello"}`
				case 4:
					return "find", `{"pattern":"**/*.md"}`
				case 5:
					return "ls", `{"path":"src"}`
				default:
					return "bash", fmt.Sprintf(`{"command":"echo call-%d"}`, k)
				}
			}
			var wg sync.WaitGroup
			var failed atomic.Int64
			for k := 0; k < 1000; k++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					name, args := mixed(k)
					raw, err := c.CallTool(context.Background(), name, json.RawMessage(args), nil, "")
					if err != nil || strings.Contains(string(raw), `"isError":true`) {
						failed.Add(1)
						b.Logf("%s %s: %v %.200s", name, args, err, raw)
					}
				}()
			}
			wg.Wait()
			if failed.Load() != 0 {
				b.Fatalf("%d of 1000 calls failed", failed.Load())
			}
			s.report(b)
			c.Close()
			s.end()
		}
	})
}

// peakServe is a serve started by a BenchmarkPeakRSS case, and its agent once found.
type peakServe struct {
	*servePipes
	agent int
}

// startPeakServe starts serve in the workspace (world.startServe: its stdin is closed and
// it is waited for when the benchmark ends, even one that failed midway).
func startPeakServe(b *testing.B, w *world) *peakServe {
	b.Helper()
	return &peakServe{servePipes: w.startServe(b, w.ws, nil)}
}

// dial speaks MCP to serve with the project's client and makes the agent start.
func (s *peakServe) dial(b *testing.B) *agentlink.Client {
	b.Helper()
	c, err := agentlink.Dial(context.Background(), s.stdout, s.stdin, s.stdin, agentlink.ClientOptions{Name: "bench", MaxLine: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func (s *peakServe) findAgent(b *testing.B, w *world) { s.agent = findAgent(b, w) }

// peaks are serve's and the agent's VmHWM so far, in MB.
func (s *peakServe) peaks(b *testing.B) (serve, agent float64) {
	if s.agent == 0 {
		b.Fatal("the agent was not found")
	}
	return float64(statusKB(b, s.cmd.Process.Pid, "VmHWM:")) / 1024, float64(statusKB(b, s.agent, "VmHWM:")) / 1024
}

func (s *peakServe) report(b *testing.B) {
	serve, agent := s.peaks(b)
	b.ReportMetric(serve, "serve-peak-MB")
	b.ReportMetric(agent, "agent-peak-MB")
}

// end closes serve's stdin (it tears its sandbox down) and waits for it.
func (s *peakServe) end() {
	s.stdin.Close()
	<-s.exited
}
