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

// setting is one key sbxsim knows: its default, whether it is a boolean, and the
// variable that overrode it before 0.55 ("" = none).
type setting struct {
	def     string
	boolean bool
	retired string
}

// knownSettings are the simulated settings. Six keys replaced DOCKER_SANDBOXES_*
// variables that sbx 0.55 no longer reads (docs/sbxsim.md; the key names are
// assumed), and proxy.sandbox replaced DOCKER_SANDBOXES_PROXY.
var knownSettings = map[string]setting{
	sshForwarding:          {def: "true", boolean: true},
	"proxy":                {},
	"proxy.sandbox":        {retired: "DOCKER_SANDBOXES_PROXY"},
	"proxy.daemon":         {},
	"no_proxy":             {},
	"clipboard.imagePaste": {def: "true", boolean: true, retired: "DOCKER_SANDBOXES_CLIPBOARD_IMAGE_PASTE"},
	"modelProviders":       {retired: "DOCKER_SANDBOXES_MODEL_PROVIDERS"},
	"ssh.autoCreate":       {def: "false", boolean: true, retired: "DOCKER_SANDBOXES_SSH_AUTO_CREATE"},
	"ssh.defaultAgent":     {retired: "DOCKER_SANDBOXES_SSH_DEFAULT_AGENT"},
	"ssh.defaultTemplate":  {retired: "DOCKER_SANDBOXES_SSH_DEFAULT_TEMPLATE"},
	"ssh.workspaceRoot":    {retired: "DOCKER_SANDBOXES_SSH_WORKSPACE_ROOT"},
}

func (st Store) settingsFile() string { return filepath.Join(st.Root, "settings.json") }

// overrides are the values set with `settings set`.
func (st Store) overrides() map[string]string {
	out := map[string]string{}
	if b, err := os.ReadFile(st.settingsFile()); err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// Settings returns the simulated sbx settings as the daemon sees them (no caller
// environment).
func (st Store) Settings() map[string]string {
	out := map[string]string{}
	for k, s := range knownSettings {
		out[k] = s.def
	}
	for k, v := range st.overrides() {
		if _, ok := knownSettings[k]; ok {
			out[k] = v
		}
	}
	return out
}

// settingValue is one setting in `settings get|list --json` (shape assumed).
type settingValue struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"` // env, override or default
}

// resolveSetting applies sbx's precedence: environment (only the retired variables,
// and only before 0.55), then an override, then the default.
func (c *cli) resolveSetting(key string, overrides map[string]string) settingValue {
	s := knownSettings[key]
	if s.retired != "" && !c.atLeast(V055) {
		if v, ok := c.env.LookupEnv(s.retired); ok {
			return settingValue{key, v, "env"}
		}
	}
	if v, ok := overrides[key]; ok {
		return settingValue{key, v, "override"}
	}
	return settingValue{key, s.def, "default"}
}

// settings is `settings get KEY | set KEY VALUE | unset KEY | list`.
func (c *cli) settings(ctx context.Context, args []string) error {
	fs, err := parseFlags(c.flagsOf("settings"), args, true)
	if err != nil {
		return err
	}
	overrides := c.m.Store.overrides()
	known := func(k string) error {
		if _, ok := knownSettings[k]; !ok {
			return fmt.Errorf("unknown setting %q", k)
		}
		return nil
	}
	save := func() error {
		if err := c.ensureStateRoot(); err != nil {
			return err
		}
		return writeJSON(c.m.Store.settingsFile(), overrides)
	}
	switch {
	case len(fs.args) == 2 && fs.args[0] == "get":
		if err := known(fs.args[1]); err != nil {
			return err
		}
		v := c.resolveSetting(fs.args[1], overrides)
		if fs.has("json") {
			return c.printJSON(v)
		}
		fmt.Fprintln(c.env.Stdout, v.Value)
		return nil
	case len(fs.args) == 3 && fs.args[0] == "set":
		if err := known(fs.args[1]); err != nil {
			return err
		}
		if v := fs.args[2]; knownSettings[fs.args[1]].boolean && v != "true" && v != "false" {
			return fmt.Errorf("invalid value %q for %s: want true or false", v, fs.args[1])
		}
		overrides[fs.args[1]] = fs.args[2]
		return save()
	case len(fs.args) == 2 && fs.args[0] == "unset" && c.atLeast(V055):
		if err := known(fs.args[1]); err != nil {
			return err
		}
		delete(overrides, fs.args[1])
		return save()
	case len(fs.args) == 1 && fs.args[0] == "list":
		keys := make([]string, 0, len(knownSettings))
		for k := range knownSettings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		all := []settingValue{}
		for _, k := range keys {
			all = append(all, c.resolveSetting(k, overrides))
		}
		if fs.has("json") {
			return c.printJSON(struct {
				Settings []settingValue `json:"settings"`
			}{all})
		}
		for _, v := range all {
			fmt.Fprintf(c.env.Stdout, "%s=%s\n", v.Key, v.Value)
		}
		return nil
	}
	if c.atLeast(V055) {
		return errors.New(`usage: sbx settings get KEY | set KEY VALUE | unset KEY | list`)
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
