//go:build linux

package sbxsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestComposePlugin: the setting wins, "none" turns the plugin off, an unusable setting
// is an error naming the variable, and without a setting the plugin beside the binary
// comes before setup.sh's cache relative to it.
func TestComposePlugin(t *testing.T) {
	root := t.TempDir()
	binDir := filepath.Join(root, "bin")
	self := filepath.Join(binDir, "sbxsim")
	cached := filepath.Join(root, ".cache", "compose", ComposeVersion, "docker-compose")
	beside := filepath.Join(binDir, "docker-compose")
	explicit := filepath.Join(root, "my-compose")
	notExec := filepath.Join(root, "plain")
	write := func(p string, mode os.FileMode) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(self, 0o755)
	write(explicit, 0o755)
	write(notExec, 0o644)
	link := filepath.Join(root, "link")
	if err := os.Symlink(explicit, link); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		setting string // "" = unset
		files   []string
		want    string
		wantErr string
	}{
		{"nothing anywhere", "", nil, "", ""},
		{"setup.sh cache", "", []string{cached}, cached, ""},
		{"beside the binary first", "", []string{cached, beside}, beside, ""},
		{"setting", explicit, []string{beside}, explicit, ""},
		{"setting through a symlink", link, nil, explicit, ""},
		{"none", "none", []string{beside}, "", ""},
		{"missing", filepath.Join(root, "nope"), nil, "", "SBXSIM_COMPOSE_PLUGIN: " + filepath.Join(root, "nope") + ": no such file or directory"},
		{"not executable", notExec, nil, "", "is not an executable file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, f := range []string{cached, beside} {
				os.Remove(f)
			}
			for _, f := range tt.files {
				write(f, 0o755)
			}
			c := &cli{env: Env{Self: self, LookupEnv: func(k string) (string, bool) {
				if k == composePluginEnv && tt.setting != "" {
					return tt.setting, true
				}
				return "", false
			}}}
			got, err := c.composePlugin()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("composePlugin() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
