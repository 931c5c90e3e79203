package sbx

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHungSbxIsToldApart: a call still running when sbx no longer answers `sbx version`
// ends as ErrHung naming sbx and what to try, long before its own timeout; a slow call
// while sbx answers goes on to succeed; a quick call never probes.
func TestHungSbxIsToldApart(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	for _, tc := range []struct {
		name      string
		hang      func(args []string) bool // which calls block until cancelled
		slow      bool                     // the call itself takes a while, then succeeds
		wantHung  bool
		wantProbe bool
	}{
		{name: "every command hangs", hang: func([]string) bool { return true }, wantHung: true, wantProbe: true},
		{name: "exec hangs", hang: func(a []string) bool { return slices.Contains(a, "exec") }, wantHung: true, wantProbe: true},
		{name: "slow but alive", hang: func([]string) bool { return false }, slow: true, wantProbe: true},
		{name: "quick", hang: func([]string) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			probes := 0
			f := &fakeRunner{recordVersion: true, answer: func(ctx context.Context, c Cmd) (int, string, string) {
				if c.Args[0] == "version" || slices.Contains(c.Args, "true") {
					mu.Lock()
					probes++
					mu.Unlock()
				}
				if tc.hang(c.Args) {
					<-ctx.Done()
					return -1, "", ""
				}
				if c.Args[0] == "version" {
					return 0, "Client Version: v0.55.0 x\n", ""
				}
				if tc.slow && slices.Contains(c.Args, "work") {
					select { // well past the probe, well before the call's own timeout
					case <-time.After(300 * time.Millisecond):
					case <-ctx.Done():
						return -1, "", ""
					}
				}
				return 0, "ok", ""
			}}
			c := &Client{Bin: "sbx", Runner: f, Timeout: time.Hour, ProbeAfter: 20 * time.Millisecond, ProbeTimeout: 50 * time.Millisecond}
			// The version is known (as in a session): the call itself is what is slow.
			c.versions = &Versions{Client: "0.55.0"}
			res, err := c.Exec(context.Background(), "box", []string{"work"}, ExecOpts{})
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, tc.wantProbe, probes > 0, "probed")
			if !tc.wantHung {
				require.NoError(t, err)
				assert.Equal(t, "ok", string(res.Stdout))
				return
			}
			require.ErrorIs(t, err, ErrHung)
			assert.False(t, errors.Is(err, ErrTimeout), "told apart from the call's own timeout")
			for _, want := range []string{"sbx exec box", "sbx --no-input exec box -- true", "sbx daemon restart", "sbx daemon logs"} {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

// TestSlowCreateIsNotAHang: a create that takes long (a template pull) while sbx answers
// `sbx version` succeeds.
func TestSlowCreateIsNotAHang(t *testing.T) {
	f := &fakeRunner{recordVersion: true, answer: func(ctx context.Context, c Cmd) (int, string, string) {
		if c.Args[0] == "version" {
			return 0, "Client Version: v0.55.0 x\n", ""
		}
		if slices.Contains(c.Args, "create") {
			select {
			case <-time.After(300 * time.Millisecond):
			case <-ctx.Done():
				return -1, "", ""
			}
		}
		return 0, "", ""
	}}
	c := &Client{Bin: "sbx", Runner: f, ProbeAfter: 20 * time.Millisecond, ProbeTimeout: 50 * time.Millisecond}
	require.NoError(t, c.Create(context.Background(), "box", CreateOpts{Workspaces: []string{"/w"}}))
	versions := 0
	for _, call := range f.calls {
		if call.Args[0] == "version" {
			versions++
		}
	}
	assert.Equal(t, 2, versions, "the version learnt, then one probe")
}

// TestProbe: Probe is nil when sbx answers, even with a failure of its own, and ErrHung
// when it does not answer in time.
func TestProbe(t *testing.T) {
	for _, tc := range []struct {
		name string
		code int
		hang bool
		hung bool
	}{{"answers", 0, false, false}, {"fails quickly", 1, false, false}, {"hangs", 0, true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRunner{recordVersion: true, answer: func(ctx context.Context, c Cmd) (int, string, string) {
				if tc.hang {
					<-ctx.Done()
					return -1, "", ""
				}
				return tc.code, "Client Version: v0.55.0 x\n", ""
			}}
			err := (&Client{Bin: "sbx", Runner: f, ProbeTimeout: 30 * time.Millisecond}).Probe(context.Background())
			if !tc.hung {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrHung)
			assert.True(t, strings.Contains(err.Error(), "sbx daemon restart"), "%v", err)
		})
	}
}

// TestNoInputRefusalsAreClassified: under --no-input, a command that needed an answer
// fails with sbx's error naming what to run; the network preset's is its own error with
// the fix, others are ErrNeedsInput; a command's own output saying the words is not.
func TestNoInputRefusalsAreClassified(t *testing.T) {
	for _, tc := range []struct {
		op, stderr string
		code       int
		want       error
	}{
		{"create", "ERROR: no network policy chosen; run `sbx policy init balanced|allow-all|deny-all` or rerun without --no-input", 1, ErrNoPreset},
		{"run", "Error: a network preset is needed: sbx policy init balanced", 1, ErrNoPreset},
		{"rm", "ERROR: confirmation needed: rerun with --force (--no-input)", 1, ErrNeedsInput},
		{"secret rm", "Error: stdin is not a terminal; use --force", 1, ErrNeedsInput},
		{"exec", "grep: sbx policy init balanced: no such file", 2, nil},
		{"exec", "ERROR: no network policy chosen; run `sbx policy init balanced`", 1, ErrNoPreset},
		{"ls", "some other failure", 1, ErrFailed},
	} {
		got := classify(tc.op, tc.code, tc.stderr)
		if tc.want == nil {
			assert.NoError(t, got, "%s: %q", tc.op, tc.stderr)
			continue
		}
		assert.ErrorIs(t, got, tc.want, "%s: %q", tc.op, tc.stderr)
	}
	assert.Contains(t, ErrNoPreset.Error(), "sbx policy init balanced")
}
