package doctor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

func healthyLinux() Host {
	return Host{GOOS: "linux", GOARCH: "amd64", KVM: func() error { return nil }}
}

func check(t *testing.T, r Report, name string) Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, r.Checks)
	return Check{}
}

// TestSbxMissing: without sbx anywhere, one FAIL names every place searched and the
// install command; nothing else runs.
func TestSbxMissing(t *testing.T) {
	bin, err := sbx.FindBin("", "/usr/bin:/bin", sbx.Places{GOOS: "darwin", Dirs: []string{"/nonexistent/homebrew/bin"}})
	c := &sbx.Client{Bin: bin, Runner: sbx.ExecRunner{}, Missing: err}
	r := (&Doctor{Sbx: c, Host: healthyLinux()}).Run(context.Background())
	require.Len(t, r.Checks, 1)
	assert.Equal(t, Fail, r.Checks[0].Status)
	assert.Contains(t, r.Checks[0].Evidence, "PATH (/usr/bin:/bin)")
	assert.Contains(t, r.Checks[0].Evidence, "/nonexistent/homebrew/bin")
	assert.True(t, strings.HasPrefix(r.Summary(), "sbx not found: searched "), r.Summary())
	assert.True(t, strings.HasSuffix(r.Summary(), "— run "+sbx.InstallHint()), r.Summary())
}

// TestPIBinWrong: a PI_SBX_BIN that names no program fails the first check.
func TestPIBinWrong(t *testing.T) {
	c := sbx.NewClient("/nonexistent/sbx", "", nil, sbx.ExecRunner{})
	r := (&Doctor{Sbx: c, Host: healthyLinux()}).Run(context.Background())
	require.Len(t, r.Checks, 1)
	assert.Equal(t, Fail, r.Checks[0].Status)
	assert.Contains(t, r.Checks[0].Evidence, "PI_SBX_BIN=/nonexistent/sbx")
}

// TestPlatformChecks: without sbx diagnose's verdict, virtualization is probed per
// platform, and each probe can fail.
func TestPlatformChecks(t *testing.T) {
	tests := []struct {
		name string
		host Host
		want Status
		fix  string
	}{
		{"linux kvm", Host{GOOS: "linux", KVM: func() error { return nil }}, Pass, ""},
		{"linux no kvm", Host{GOOS: "linux", KVM: func() error { return errors.New("permission denied") }}, Fail, "usermod -aG kvm"},
		{"mac 14 arm", Host{GOOS: "darwin", GOARCH: "arm64", MacOSVersion: func(context.Context) (string, error) { return "14.5", nil }}, Pass, ""},
		{"mac 13", Host{GOOS: "darwin", GOARCH: "arm64", MacOSVersion: func(context.Context) (string, error) { return "13.6.1", nil }}, Fail, "softwareupdate"},
		{"intel mac", Host{GOOS: "darwin", GOARCH: "amd64"}, Fail, ""},
		{"windows off", Host{GOOS: "windows", Hypervisor: func(context.Context) (bool, error) { return false, nil }}, Fail, "HypervisorPlatform"},
		{"windows unknown", Host{GOOS: "windows", Hypervisor: hypervisorUnknown}, Warn, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := (&Doctor{Host: tc.host}).virtualization(context.Background(), nil)
			assert.Equal(t, tc.want, c.Status, "%+v", c)
			assert.Contains(t, c.Fix, tc.fix)
		})
	}
	// sbx diagnose's own verdict wins, failure included.
	c := (&Doctor{Host: healthyLinux()}).virtualization(context.Background(),
		[]sbx.DiagCheck{{Name: "Virtualization", Status: "fail", Message: "KVM is not available", Hint: "enable nested virtualization"}})
	assert.Equal(t, Check{Name: "virtualization", Status: Fail, Evidence: "KVM is not available [sbx diagnose]", Fix: "enable nested virtualization"}, c)
}

func TestSummary(t *testing.T) {
	r := Report{Checks: []Check{{Name: "sbx found", Status: Pass}, {Name: "signed in", Status: Fail, Evidence: "sbx is signed out", Fix: "sbx login"}}}
	assert.Equal(t, "sbx is signed out — run sbx login", r.Summary())
	assert.Contains(t, r.Text(), "fix: sbx login")
	assert.Equal(t, "", Report{Checks: []Check{{Status: Warn}}}.Summary())
}
