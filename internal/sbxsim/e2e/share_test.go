//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shareEnv is the environment of a sandbox whose workspaces come over the FUSE share.
func shareEnv(cache string) []string {
	return []string{"SBXSIM_SHARE=fuse", "SBXSIM_SHARE_CACHE=" + cache, "SBXSIM_SHARE_LATENCY=50us"}
}

// TestShareKeepsTheMountRules: over the share the workspace is where it is on the host,
// its owner is agent inside (and agent's files are the owner's outside), :ro holds, and
// the mount is a FUSE file system served by the host, not a bind.
func TestShareKeepsTheMountRules(t *testing.T) {
	for _, cache := range []string{"none", "auto", "always"} {
		t.Run(cache, func(t *testing.T) {
			s := newSim(t, false)
			ws, ro := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(ws, "from-host"), []byte("host says hi\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			name := s.name("share")
			if r := s.runWith(shareEnv(cache), "", "create", "-q", "--name", name, "shell", ws, ro+":ro"); r.code != 0 {
				t.Fatalf("create over the share: %s", r)
			}
			mounts := s.must("exec", name, "cat", "/proc/self/mounts")
			for _, dir := range []string{ws, ro} {
				if !strings.Contains(mounts, " "+dir+" fuse.virtiofs ") {
					t.Errorf("%s is not mounted over the share:\n%s", dir, mounts)
				}
			}
			if got := s.must("exec", name, "pwd"); got != ws+"\n" {
				t.Errorf("pwd = %q, want %q", got, ws+"\n")
			}
			if got := s.must("exec", name, "stat", "-c", "%u:%g", filepath.Join(ws, "from-host")); got != "1000:1000\n" {
				t.Errorf("the owner's file seen inside as %q, want agent's 1000:1000", got)
			}
			s.must("exec", name, "sh", "-c", "echo sandbox says hi > from-sandbox")
			var st syscall.Stat_t
			if err := syscall.Stat(filepath.Join(ws, "from-sandbox"), &st); err != nil {
				t.Fatal(err)
			}
			var own syscall.Stat_t
			_ = syscall.Stat(ws, &own)
			if st.Uid != own.Uid || st.Gid != own.Gid {
				t.Errorf("agent's file is %d:%d on the host, want the owner's %d:%d", st.Uid, st.Gid, own.Uid, own.Gid)
			}
			// A file without a name (O_TMPFILE) cannot be made over the share, as over a
			// Mac's, whose host has no such thing: writers fall back to a named file.
			r := s.run("exec", name, "python3", "-c", "import os; os.open('.', os.O_TMPFILE|os.O_WRONLY)")
			if r.code == 0 || !strings.Contains(r.stderr, "Operation not supported") {
				t.Errorf("O_TMPFILE over the share: %s", r)
			}
			r = s.run("exec", name, "sh", "-c", "echo x > "+filepath.Join(ro, "new"))
			if r.code == 0 || !strings.Contains(r.stderr, "Read-only file system") {
				t.Errorf("write to :ro workspace over the share: %s", r)
			}
			// The host's mount of the share is gone: the sandbox's mount alone keeps it.
			host, _ := os.ReadFile("/proc/self/mounts")
			if strings.Contains(string(host), s.state) {
				t.Errorf("the share is still mounted on the host:\n%s", host)
			}
			// Its server ends with the sandbox, and a start serves it again.
			s.must("stop", name)
			if out := psLines(t, s.state); strings.Contains(out, "__share") {
				t.Errorf("a share server outlived stop:\n%s", out)
			}
			if got := s.must("exec", name, "cat", filepath.Join(ws, "from-sandbox")); got != "sandbox says hi\n" {
				t.Errorf("after a restart, read over the share = %q", got)
			}
		})
	}
}

// TestShareCacheIsReal: a host change is seen at once without a cache, after the
// attribute timeout with auto, and not at all (within the test) with always — the
// staleness a Mac's virtiofs cache has.
func TestShareCacheIsReal(t *testing.T) {
	cases := []struct {
		cache string
		wait  time.Duration // after the host's change, before reading again
		fresh bool
	}{
		{"none", 0, true},
		{"auto", 1500 * time.Millisecond, true}, // past auto's 1 s timeouts
		{"always", 1500 * time.Millisecond, false},
	}
	for _, tc := range cases {
		t.Run(tc.cache, func(t *testing.T) {
			s := newSim(t, false)
			ws := t.TempDir()
			f := filepath.Join(ws, "f")
			if err := os.WriteFile(f, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			name := s.name("cache")
			if r := s.runWith(shareEnv(tc.cache), "", "create", "-q", "--name", name, "shell", ws); r.code != 0 {
				t.Fatalf("create: %s", r)
			}
			// Twice: the second read is the one served from the guest's cache.
			for range 2 {
				if got := s.must("exec", name, "cat", f); got != "old\n" {
					t.Fatalf("read before the change = %q", got)
				}
			}
			if err := os.WriteFile(f, []byte("new!\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			time.Sleep(tc.wait)
			got := s.must("exec", name, "cat", f)
			if fresh := got == "new!\n"; fresh != tc.fresh {
				t.Errorf("read after the host's change = %q; want fresh=%v", got, tc.fresh)
			}
		})
	}
}

func TestShareSettingsAreChecked(t *testing.T) {
	s := newSim(t, false)
	ws := t.TempDir()
	for _, env := range [][]string{
		{"SBXSIM_SHARE=nfs"},
		{"SBXSIM_SHARE=fuse", "SBXSIM_SHARE_CACHE=sometimes"},
		{"SBXSIM_SHARE=fuse", "SBXSIM_SHARE_LATENCY=slow"},
	} {
		r := s.runWith(env, "", "create", "-q", "--name", s.name("bad"), "shell", ws)
		bad := strings.SplitN(env[len(env)-1], "=", 2)[0]
		if r.code == 0 || !strings.Contains(r.stderr, bad) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: %s; want a one-line error naming %s", env, r, bad)
		}
	}
}
