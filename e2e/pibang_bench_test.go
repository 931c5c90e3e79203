//go:build e2e && bench

package e2e

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkPiBangSeq times `!seq 1 300000` in pi's TUI, from Enter until the line after
// it shows, with the extension (the command on a pty in the sandbox, its output streamed
// through serve) and in plain pi (a pipe on the host), alternating run by run in the
// same session each, and reports the ratio extension/plain of the medians.
// `go test -tags e2e,bench ./e2e -run '^$' -bench BenchmarkPiBangSeq -benchtime 3x`.
func BenchmarkPiBangSeq(b *testing.B) {
	w := newWorld(b)
	gitInit(b, w.ws)
	ext := startTUI(b, w, w.ws, false, "sandbox: pi-sbx-")
	plain := startTUI(b, w, w.ws, true, "scripted")
	run := func(p *piTUI, i int) time.Duration {
		// The command line shows `$((40+2))`; only its output shows 42.
		tag := fmt.Sprintf("SEQ%d-DONE-", i)
		start := time.Now()
		p.send("!seq 1 300000; echo " + tag + "$((40+2))")
		p.expect(tag+"42", 5*time.Minute)
		return time.Since(start)
	}
	var withExt, withPlain []time.Duration
	for i := 0; i < b.N; i++ {
		withExt = append(withExt, run(ext, i))
		withPlain = append(withPlain, run(plain, i))
	}
	me, mp := median(withExt), median(withPlain)
	b.ReportMetric(me.Seconds(), "ext-s")
	b.ReportMetric(mp.Seconds(), "plain-s")
	b.ReportMetric(me.Seconds()/mp.Seconds(), "ext/plain")
}
