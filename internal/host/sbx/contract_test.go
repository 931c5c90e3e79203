package sbx

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryArgvIsInTheContract: every command line the Client builds is valid per the
// contract table, at the oldest supported version and the newest seen; --pull appears
// only where the version has it.
func TestEveryArgvIsInTheContract(t *testing.T) {
	calls := []func(c *Client) error{
		func(c *Client) error { _, err := c.Ls(context.Background()); return err },
		func(c *Client) error { return c.Stop(context.Background(), "box") },
		func(c *Client) error { return c.Rm(context.Background(), "box") },
		func(c *Client) error { _, err := c.Ports(context.Background(), "box", "8080:3000"); return err },
		func(c *Client) error { _, err := c.ListPorts(context.Background(), "box"); return err },
		func(c *Client) error { _, err := c.Publish(context.Background(), "box", "3000"); return err },
		func(c *Client) error { return c.Unpublish(context.Background(), "box", "127.0.0.1:1:3000/tcp") },
		func(c *Client) error { return c.Cp(context.Background(), "/host/f", "box:/tmp/f") },
		func(c *Client) error {
			res := Resources{CPUs: "2", Memory: "1g", Template: "my/t:1"}
			return c.Create(context.Background(), "box", CreateOpts{Workspaces: []string{"/w", "/d:ro"}, Quiet: true, Resources: res})
		},
		func(c *Client) error {
			_, err := c.Exec(context.Background(), "box", []string{"sh", "-c", "x", "-e"},
				ExecOpts{Interactive: true, TTY: true, Env: []string{"PI_X=1"}, Workdir: "/w"})
			return err
		},
		func(c *Client) error {
			s, err := c.StartExec(context.Background(), "box", []string{"agent"}, ExecOpts{Interactive: true})
			if err == nil {
				err = s.Wait()
			}
			return err
		},
		func(c *Client) error { _, err := c.Versions(context.Background()); return err },
		func(c *Client) error {
			_, err := c.Lookup(context.Background(), "box")
			if errors.Is(err, ErrMissing) { // ls answered [] before 0.55
				err = nil
			}
			return err
		},
		func(c *Client) error { _, err := c.Setting(context.Background(), "proxy"); return err },
		func(c *Client) error {
			w, err := c.StartWatchdog(1<<22, "box", false, time.Hour, "", "", "")
			if err == nil {
				err = w.Stop()
			}
			return err
		},
	}
	for _, version := range []string{MinVersion, "0.45.9", PullSince, "0.53.0", V055} {
		t.Run(version, func(t *testing.T) {
			f := &fakeRunner{version: version, recordVersion: true, answer: func(_ context.Context, c Cmd) (int, string, string) {
				switch {
				case c.Args[0] == "version":
					return 0, "Client Version: v" + version + " x\n", ""
				case len(c.Args) > 2 && c.Args[1] == "inspect":
					return 0, `{"name":"box","status":"running"}`, ""
				case len(c.Args) > 0 && c.Args[0] == "-c": // the watchdog's shell
					return 0, "", ""
				}
				return 0, "[]", ""
			}}
			c := &Client{Bin: "sbx", Runner: f}
			for _, do := range calls {
				require.NoError(t, do(c))
			}
			sawCreate, noInput := false, CompareVersions(version, V055) >= 0
			for _, call := range f.calls {
				if call.Args[0] == "-c" {
					// The watchdog's script: its sbx flags are its last parameter.
					want := map[bool]string{true: "--no-input", false: ""}[noInput]
					assert.Equal(t, want, call.Args[len(call.Args)-1], "watchdog at v%s", version)
					continue
				}
				assert.NoError(t, ValidateArgv(call.Args, version), "%q", call.Args)
				if call.Args[0] != "version" {
					assert.Equal(t, noInput, call.Args[0] == "--no-input", "--no-input at v%s: %q", version, call.Args)
				}
				if call.Args[0] == "--no-input" {
					call.Args = call.Args[1:]
				}
				switch call.Args[0] {
				case "ports":
					assert.False(t, noInput, "ports at v%s where port exists: %q", version, call.Args)
				case "port", "inspect":
					assert.True(t, noInput, "%s before v%s: %q", call.Args[0], V055, call.Args)
				}
				if call.Args[0] == "create" {
					sawCreate = true
					hasPull := strings.Contains(strings.Join(call.Args, " "), "--pull missing")
					assert.Equal(t, CompareVersions(version, PullSince) >= 0, hasPull, "create at v%s: %q", version, call.Args)
				}
			}
			assert.True(t, sawCreate)
		})
	}
}

func TestValidateArgvRejects(t *testing.T) {
	for _, argv := range [][]string{
		{"create", "--pull", "missing", "shell", "/w"}, // at 0.45: no --pull yet
		{"exec", "--bogus", "box", "true"},
		{"ls", "--all"},
		{"version", "--json"}, // fine at 0.42: see below
		{"frobnicate"},
		{"exec", "-e"},
		{"--no-input", "ls"},               // global flag of 0.55
		{"inspect", "box", "--json"},       // verb of 0.55
		{"port", "ls", "box", "--json"},    // verb of 0.55
		{"policy", "log", "box", "--json"}, // verb of 0.55
		{"--bogus", "ls"},
	} {
		err := ValidateArgv(argv, "0.45.0")
		if argv[0] == "version" {
			assert.NoError(t, err, "%q", argv)
			assert.Error(t, ValidateArgv(argv, "0.41.0"), "version --json before 0.42")
			continue
		}
		assert.Error(t, err, "%q", argv)
	}
	for _, argv := range [][]string{
		{"--no-input", "ls", "--json"},
		{"--no-input", "inspect", "box", "--json"},
		{"--no-input", "port", "publish", "box", "3000"},
		{"--no-input", "policy", "allow", "network", "--sandbox", "box", "a.example,b.example"},
		{"--no-input", "policy", "log", "box", "--json"},
		{"--no-input", "settings", "list", "--json"},
		{"-D", "--no-input", "rm", "--force", "box"},
	} {
		assert.NoError(t, ValidateArgv(argv, V055), "%q", argv)
	}
	// exec's own flags end at the sandbox name: the command's are its own.
	assert.NoError(t, ValidateArgv([]string{"exec", "-i", "box", "--", "ls", "--bogus"}, "0.45.0"))
	assert.NoError(t, ValidateArgv([]string{"exec", "box", "ls", "--bogus"}, "0.45.0"))
}

func TestBannerIsSkipped(t *testing.T) {
	banner := "Starting sandboxd daemon...\nDaemon started (PID 4242)\nLogs: /Users/me/.local/state/sandboxes/sandboxd/daemon.log\n"
	tests := []struct{ name, in, want string }{
		{"ls json after the banner", banner + `{"sandboxes":[]}` + "\n", `{"sandboxes":[]}` + "\n"},
		{"no banner", "aarch64\nabc  /tmp/x\n", "aarch64\nabc  /tmp/x\n"},
		{"banner only", banner, ""},
		{"a banner-like line later stays", "x\nStarting sandboxd daemon...\n", "x\nStarting sandboxd daemon...\n"},
		{"a prefix that is not a banner", "Logsmith\n", "Logsmith\n"},
		{"partial last line", "Daemon started (PID 1)\nDaemon", "Daemon"},
		{"crlf", "Starting sandboxd daemon...\r\nDaemon started (PID 7)\r\nok\r\n", "ok\r\n"},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Written whole, byte by byte, and read through the reader form.
			for _, chunk := range []int{len(tc.in) + 1, 1, 3} {
				var out bytes.Buffer
				w := &bannerSkipper{w: &out}
				for i := 0; i < len(tc.in); i += chunk {
					_, err := w.Write([]byte(tc.in[i:min(i+chunk, len(tc.in))]))
					require.NoError(t, err)
				}
				require.NoError(t, w.Flush())
				assert.Equal(t, tc.want, out.String(), "chunks of %d", chunk)
			}
			got, err := io.ReadAll(SkipBannerReader(iotest.OneByteReader(strings.NewReader(tc.in))))
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got), "reader")
		})
	}
}

// TestLsAfterTheBanner: the first command after a daemon start parses as usual.
func TestLsAfterTheBanner(t *testing.T) {
	f := &fakeRunner{answer: func(context.Context, Cmd) (int, string, string) {
		return 0, "Starting sandboxd daemon...\nDaemon started (PID 9)\nLogs: /x/daemon.log\n" + `{"sandboxes":[{"name":"box","status":"running"}]}`, ""
	}}
	list, err := (&Client{Bin: "sbx", Runner: f}).Ls(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []Sandbox{{Name: "box", Status: "running"}}, list)
}

func TestSignedOutAndMissingAreClassified(t *testing.T) {
	tests := []struct {
		op, stderr string
		code       int
		want       error // nil: the command's own status
	}{
		{"ls", "ERROR: Not authenticated to Docker", 1, ErrSignedOut},
		{"exec", "ERROR: You are not authenticated to Docker. Run 'sbx login' to sign in", 1, ErrSignedOut},
		{"exec", "Error: You are not authenticated to Docker", 1, ErrSignedOut},
		{"exec", "grep: Not authenticated to Docker is what the file says", 1, nil},
		{"exec", "some tool: error\nmore", 1, nil},
		{"exec", "ERROR: no sandbox named 'box'", 1, ErrMissing},
		{"stop", "Error: sandbox 'box' not found", 1, ErrMissing},
		{"ports", "ERROR: sandbox 'box' not found", 1, ErrMissing},
	}
	for _, tc := range tests {
		got := classify(tc.op, tc.code, tc.stderr)
		if tc.want == nil {
			assert.NoError(t, got, "%s %q", tc.op, tc.stderr)
			continue
		}
		assert.ErrorIs(t, got, tc.want, "%s %q", tc.op, tc.stderr)
	}
	// Through a call: one error that names sbx login.
	f := &fakeRunner{answer: func(context.Context, Cmd) (int, string, string) {
		return 1, "", "ERROR: You are not authenticated to Docker. Run 'sbx login' to sign in\n"
	}}
	_, err := (&Client{Bin: "sbx", Runner: f}).Exec(context.Background(), "box", []string{"true"}, ExecOpts{})
	require.ErrorIs(t, err, ErrSignedOut)
	assert.Contains(t, err.Error(), "sbx login")
}

func TestParseVersions(t *testing.T) {
	tests := []struct {
		in   string
		want Versions
		bad  bool
	}{
		{"Client Version: v0.53.0 1a2b3c\nServer Version: v0.52.1 4d5e6f\n", Versions{"0.53.0", "0.52.1"}, false},
		{"Starting sandboxd daemon...\nClient Version: v0.42.1 x\n", Versions{"0.42.1", ""}, false},
		{"Client Version: v0.42.0-rc5 x\n", Versions{"0.42.0-rc5", ""}, false},
		{"sbx version 0.39.0\n", Versions{"0.39.0", ""}, false},
		{"nothing here", Versions{}, true},
	}
	for _, tc := range tests {
		got, err := ParseVersions(tc.in)
		if tc.bad {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got)
	}
	assert.Equal(t, -1, CompareVersions("0.41.9", "0.42.0"))
	assert.Equal(t, 0, CompareVersions("v0.42.0-rc5", "0.42.0"))
	assert.Equal(t, 1, CompareVersions("0.100.0", "0.53.0"))
}

func TestTooOldIsRefused(t *testing.T) {
	err := CheckMinVersion("0.40.1")
	require.ErrorIs(t, err, ErrTooOld)
	assert.Contains(t, err.Error(), "v0.40.1")
	assert.Contains(t, err.Error(), "v"+MinVersion)
	assert.NoError(t, CheckMinVersion(MinVersion))
}

func TestFindBin(t *testing.T) {
	dir := t.TempDir()
	mk := func(p string) string {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
		return p
	}
	onPath := mk(filepath.Join(dir, "path", "sbx"))
	brew := mk(filepath.Join(dir, "opt", "homebrew", "bin", "sbx"))
	local := mk(filepath.Join(dir, "home", ".local", "bin", "sbx"))
	winget := mk(filepath.Join(dir, "lad", "Microsoft", "WinGet", "Packages", "Docker.sbx_abc", "sbx.exe"))
	darwin := Places{GOOS: "darwin", Dirs: []string{filepath.Dir(brew), filepath.Join(dir, "usr-local-bin"), filepath.Dir(local)}}
	tests := []struct {
		name string
		bin  string
		path string
		p    Places
		want string
		err  []string // substrings of the error
	}{
		{"PI_SBX_BIN path wins", "/x/sim", filepath.Dir(onPath), darwin, "/x/sim", nil},
		{"PATH", "", "/nowhere:" + filepath.Dir(onPath), darwin, onPath, nil},
		{"launcher PATH: homebrew", "", "/usr/bin:/bin:/usr/sbin:/sbin", darwin, brew, nil},
		{"~/.local/bin", "", "", Places{GOOS: "linux", Dirs: []string{filepath.Dir(local)}}, local, nil},
		{"winget", "", "", PlacesFor("windows", "", filepath.Join(dir, "lad")), winget, nil},
		{"missing names everything searched", "", "/usr/bin:/bin", Places{GOOS: "darwin", Dirs: []string{"/nope/bin"}}, "sbx",
			[]string{"PI_SBX_BIN (unset)", "PATH (/usr/bin:/bin)", "/nope/bin", "brew install docker/tap/sbx"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FindBin(tc.bin, tc.path, tc.p)
			assert.Equal(t, tc.want, got)
			if tc.err == nil {
				require.NoError(t, err)
				return
			}
			require.True(t, errors.Is(err, ErrNotFound), "%v", err)
			for _, s := range tc.err {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
	p := PlacesFor("darwin", "/Users/me", "")
	assert.Equal(t, []string{"/opt/homebrew/bin", "/usr/local/bin", "/Users/me/.local/bin"}, p.Dirs)
}
