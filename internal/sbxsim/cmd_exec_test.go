//go:build linux

package sbxsim

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseExec(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(envFile, []byte("# c\n  A=from-file\nFROM_CALLER\nUNSET_IN_CALLER\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	caller := map[string]string{"FROM_CALLER": "c", "BY_NAME": "n", "SECRET": "s"}
	c := &cli{env: Env{LookupEnv: func(k string) (string, bool) { v, ok := caller[k]; return v, ok }}}
	tests := []struct {
		name    string
		args    []string
		want    execRequest
		wantErr string
	}{
		{"plain", []string{"box", "ls", "-l"}, execRequest{name: "box", argv: []string{"ls", "-l"}}, ""},
		{"dash dash", []string{"-it", "box", "--", "sh", "-c", "x"}, execRequest{name: "box", argv: []string{"sh", "-c", "x"}, interactive: true, tty: true}, ""},
		{"env layering", []string{"--env-file", envFile, "-e", "A=flag", "-e", "BY_NAME", "-e", "NOPE", "-u", "1:2", "-w", "/w", "box", "env"},
			execRequest{name: "box", argv: []string{"env"}, env: []string{"A=flag", "FROM_CALLER=c", "BY_NAME=n"}, user: "1:2", workdir: "/w"}, ""},
		{"detach", []string{"-d", "box", "true"}, execRequest{}, errDetach.Error()},
		{"no command", []string{"box", "--"}, execRequest{}, "\"sbx exec\" requires a command to run"},
		{"relative workdir", []string{"-w", "rel", "box", "true"}, execRequest{}, "the working directory \"rel\" is not an absolute path"},
		{"empty key", []string{"-e", "=v", "box", "true"}, execRequest{}, "invalid environment variable \"=v\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.parseExec(tt.args)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	tests := []struct {
		spec     string
		uid, gid int
		home     string
		bad      bool
	}{
		{spec: "", uid: 1000, gid: 1000, home: "/home/agent"},
		{spec: "agent", uid: 1000, gid: 1000, home: "/home/agent"},
		{spec: "root", uid: 0, gid: 0, home: "/root"},
		{spec: "0:0", uid: 0, gid: 0, home: "/root"},
		{spec: "4321", uid: 4321, gid: 4321, home: "/"},
		{spec: "4321:99", uid: 4321, gid: 99, home: "/"},
		{spec: "no-such-user-xyz", bad: true},
		{spec: "root:no-such-group-xyz", bad: true},
	}
	for _, tt := range tests {
		uid, gid, home, err := credentials(tt.spec)
		if tt.bad != (err != nil) || !tt.bad && (uid != tt.uid || gid != tt.gid || home != tt.home) {
			t.Errorf("credentials(%q) = %d, %d, %q, %v", tt.spec, uid, gid, home, err)
		}
	}
}

func TestSplitCpArg(t *testing.T) {
	tests := []struct{ in, name, path string }{
		{"box:/tmp/x", "box", "/tmp/x"},
		{"/host/path", "", "/host/path"},
		{"./a:b", "", "./a:b"},
		{"rel/dir:x", "", "rel/dir:x"},
		{":/x", "", ":/x"},
	}
	for _, tt := range tests {
		if n, p := splitCpArg(tt.in); n != tt.name || p != tt.path {
			t.Errorf("splitCpArg(%q) = %q, %q", tt.in, n, p)
		}
	}
}
