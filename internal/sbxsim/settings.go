//go:build linux

package sbxsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// sshForwarding is real sbx's setting for SSH agent forwarding, on by default
// (DD concepts/isolation/isolation.md).
const sshForwarding = "ssh.agentForwardingEnabled"

// sshAgentPath is where a sandbox finds the forwarded SSH agent (SSH_AUTH_SOCK).
const sshAgentPath = "/run/host-services/ssh-auth.sock"

// defaultSettings are a fresh state's settings.
var defaultSettings = map[string]string{sshForwarding: "true"}

func (st Store) settingsFile() string { return filepath.Join(st.Root, "settings.json") }

// Settings returns the simulated sbx settings.
func (st Store) Settings() map[string]string {
	out := map[string]string{}
	for k, v := range defaultSettings {
		out[k] = v
	}
	b, err := os.ReadFile(st.settingsFile())
	if err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// settings is `settings get KEY | set KEY VALUE | list`.
func (c *cli) settings(_ context.Context, args []string) error {
	fs, err := parseFlags(c.flagsOf("settings"), args, true)
	if err != nil {
		return err
	}
	all := c.m.Store.Settings()
	switch {
	case len(fs.args) == 2 && fs.args[0] == "get":
		v, ok := all[fs.args[1]]
		if !ok {
			return fmt.Errorf("unknown setting %q", fs.args[1])
		}
		fmt.Fprintln(c.env.Stdout, v)
		return nil
	case len(fs.args) == 3 && fs.args[0] == "set":
		if _, ok := defaultSettings[fs.args[1]]; !ok {
			return fmt.Errorf("unknown setting %q", fs.args[1])
		}
		if v := fs.args[2]; v != "true" && v != "false" {
			return fmt.Errorf("invalid value %q for %s: want true or false", v, fs.args[1])
		}
		all[fs.args[1]] = fs.args[2]
		b, _ := json.Marshal(all)
		if err := c.ensureStateRoot(); err != nil {
			return err
		}
		return os.WriteFile(c.m.Store.settingsFile(), b, 0o600)
	case len(fs.args) == 1 && fs.args[0] == "list":
		keys := make([]string, 0, len(all))
		for k := range all {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(c.env.Stdout, "%s=%s\n", k, all[k])
		}
		return nil
	}
	return errors.New(`usage: sbx settings get KEY | set KEY VALUE | list`)
}

// sshAgentSocket is the SSH agent a new sandbox gets while forwarding is on: the
// creator's SSH_AUTH_SOCK when it is a socket (real sbx's daemon forwards the user's).
func (c *cli) sshAgentSocket() string {
	if c.m.Store.Settings()[sshForwarding] != "true" {
		return ""
	}
	p, _ := c.env.LookupEnv("SSH_AUTH_SOCK")
	if fi, err := os.Stat(p); p == "" || err != nil || fi.Mode()&os.ModeSocket == 0 {
		return ""
	}
	return p
}
