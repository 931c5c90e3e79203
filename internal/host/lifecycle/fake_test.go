package lifecycle

import (
	"context"
	"io"
	"strings"
	"sync"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// fakeRunner answers sbx invocations from a script function and records them: the
// door's own fake (internal/host/sbx/fake_test.go), for the sessions built on it.
type fakeRunner struct {
	// version is what `sbx version` answers ("" = v0.53.0); those calls are answered
	// here and not recorded, unless recordVersion.
	version       string
	recordVersion bool
	mu            sync.Mutex
	calls         []sbx.Cmd
	bins          []string
	ctxs          []context.Context
	answer        func(ctx context.Context, c sbx.Cmd) (code int, stdout, stderr string)
}

func (f *fakeRunner) Start(ctx context.Context, bin string, c sbx.Cmd) (sbx.Process, error) {
	if len(c.Args) > 0 && c.Args[0] == "version" && !f.recordVersion {
		v := f.version
		if v == "" {
			v = "0.53.0"
		}
		io.WriteString(c.Stdout, "Client Version: v"+v+" abc123\nServer Version: v"+v+" abc123\n")
		return doneProcess(0), nil
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.bins = append(f.bins, bin)
	f.ctxs = append(f.ctxs, ctx)
	f.mu.Unlock()
	code, out, errs := f.answer(ctx, c)
	if c.Stdout != nil {
		io.WriteString(c.Stdout, out)
	}
	if c.Stderr != nil {
		io.WriteString(c.Stderr, errs)
	}
	return doneProcess(code), nil
}

func (f *fakeRunner) argvs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for i, c := range f.calls {
		if f.bins[i] == "/bin/sh" { // the watchdog: its parameters after the script
			out = append(out, strings.TrimRight("watchdog "+strings.Join(c.Args[3:], " "), " "))
			continue
		}
		out = append(out, strings.Join(c.Args, " "))
	}
	return out
}

type doneProcess int

func (d doneProcess) Wait() (int, error) { return int(d), nil }
