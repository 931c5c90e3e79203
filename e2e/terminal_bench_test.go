//go:build e2e && bench

package e2e

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// BenchmarkTerminalExecVsBash: a short command through exec_command (a session made,
// waited on, rendered and kept) against the same command through pi's bash tool, one
// serve (persistent channel), alternating; reported as medians and their ratio.
//
//	go test -tags e2e,bench ./e2e -run '^$' -bench TerminalExecVsBash -benchtime 200x
func BenchmarkTerminalExecVsBash(b *testing.B) {
	w := benchWorld(b)
	cmd := exec.Command(backendBin, "serve", "--tools", "+terminal")
	cmd.Dir, cmd.Env = w.ws, w.env()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	calls := []*mcp.CallToolParams{
		{Name: tools.ExecCommandName, Arguments: map[string]any{"cmd": "echo hi"}},
		{Name: "bash", Arguments: map[string]any{"command": "echo hi"}},
	}
	run := func(c *mcp.CallToolParams) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(context.Background(), c)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", c.Name, err, res)
		}
		return time.Since(start)
	}
	run(calls[0]) // warm: sandbox, agent, session table
	run(calls[1])
	var ex, ba []time.Duration
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if n%2 == 0 { // alternate which goes first
			ex, ba = append(ex, run(calls[0])), append(ba, run(calls[1]))
		} else {
			ba, ex = append(ba, run(calls[1])), append(ex, run(calls[0]))
		}
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	e, s := med(ex), med(ba)
	b.ReportMetric(e, "exec_command-p50-ms")
	b.ReportMetric(s, "bash-p50-ms")
	b.ReportMetric(e/s, "ratio")
}
