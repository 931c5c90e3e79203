package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// TestCloudTTLIsExtendedWhileOpen: while the session is open its cloud sandbox's time
// to live is extended, never past 24 h from its creation (the status says so then), and
// not at all once the session has ended.
func TestCloudTTLIsExtendedWhileOpen(t *testing.T) {
	f := &fakeRunner{version: sbx.V055, answer: func(context.Context, sbx.Cmd) (int, string, string) { return 0, "", "" }}
	c := (&sbx.Client{Bin: "sbx", Runner: f}).InCloud()
	ttls := func() int {
		n := 0
		for _, a := range f.argvs() {
			if strings.Contains(a, " ttl box +") {
				n++
			}
		}
		return n
	}
	s, err := NewSession(c, SessionOptions{Name: "box", Workspace: "/w", TTLEvery: 5 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	s.startTTL(ctx, time.Now())
	require.Eventually(t, func() bool { return ttls() >= 3 }, 5*time.Second, 5*time.Millisecond)
	assert.Contains(t, s.CloudLife().Status(), "extended while the session is open")
	cancel()
	time.Sleep(20 * time.Millisecond) // a tick under way ends
	n := ttls()
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, n, ttls(), "nothing extends it once the session has ended")

}

func TestCloudTTLNeverPastTheLimit(t *testing.T) {
	born := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	limit := born.Add(sbx.CloudMaxLife)
	for _, tc := range []struct {
		expires time.Time
		every   time.Duration
		want    time.Duration
		ok      bool
	}{
		{born.Add(sbx.CloudTTL), 20 * time.Minute, 20 * time.Minute, true},
		{born.Add(sbx.CloudTTL), 10 * time.Second, time.Minute, true}, // whole minutes
		{limit.Add(-7 * time.Minute), 20 * time.Minute, 7 * time.Minute, true},
		{limit.Add(-30 * time.Second), 20 * time.Minute, 0, false},
		{limit, 20 * time.Minute, 0, false},
	} {
		d, ok := CloudLife{Expires: tc.expires, Cap: limit}.next(tc.every)
		assert.Equal(t, tc.ok, ok, "%s", tc.expires)
		assert.Equal(t, tc.want, d, "%s", tc.expires)
	}
	l := CloudLife{Expires: limit, Cap: limit, Capped: true}
	assert.Contains(t, l.Status(), "24 h limit")
}
