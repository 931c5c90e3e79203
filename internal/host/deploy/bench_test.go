//go:build e2e && bench

package deploy

import (
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"

	"context"
	"testing"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// BenchmarkDeploy measures docker_ps through the deployer against the reference of the
// same docker command run with a bare `sbx exec` (sbxsim), in the same run: the ratio is
// what deploy/ adds (validation, output capping, the sbx ports lookup ps does). It also
// reports the time of one whole docker_verify audit.
//
//	go test -tags e2e,bench -run XXX -bench . -benchtime 20x ./internal/host/deploy
func BenchmarkDeploy(b *testing.B) {
	w := newSimWorld(b)
	w.create("deploy-bench")
	d := w.deployer("deploy-bench", w.environ())
	ctx := context.Background()
	// Alternating calls, so that warm-up and the machine's load hit both alike.
	b.Run("docker_ps vs sbx exec docker ps", func(b *testing.B) {
		var ref, tool time.Duration
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			res, err := d.Sbx.Exec(ctx, "deploy-bench", []string{"docker", "-H", Pin, "ps"}, sbx.ExecOpts{})
			if err != nil || res.ExitCode != 0 {
				b.Fatal(err, res.Stderr)
			}
			t1 := time.Now()
			r, err := d.CallTool(ctx, mcpserver.Call{Name: "docker_ps", Args: []byte(`{}`)})
			if err != nil || r.IsError {
				b.Fatal(err, r)
			}
			ref, tool = ref+t1.Sub(t0), tool+time.Since(t1)
		}
		b.ReportMetric(float64(ref.Milliseconds())/float64(b.N), "ms/ref")
		b.ReportMetric(float64(tool.Milliseconds())/float64(b.N), "ms/docker_ps")
		b.ReportMetric(float64(tool)/float64(ref), "ratio")
	})
	b.Run("docker_verify", func(b *testing.B) {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			r, err := d.Verify(ctx)
			if err != nil || !r.Passed() {
				b.Fatal(err, r.String())
			}
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/audit")
	})
}
