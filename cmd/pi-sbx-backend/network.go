package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/netpolicy"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// networkCommand is `allow` or `deny`: the flags here, the logic in netpolicy.Rules.
func networkCommand(action string) command {
	var session, project bool
	var sandbox, dir string
	past := map[string]string{"allow": "allowed", "deny": "denied"}[action]
	return command{
		name:     action,
		synopsis: "[--session [--sandbox NAME] | --project [--cwd DIR]] HOST...",
		summary:  "let sandboxes reach HOST (allow) or never reach it (deny), through sbx's network policy",
		help: fmt.Sprintf(`Adds sbx network rules so that HOST is %s: a host name (example.com; *.example.com for
its subdomains), an IP or CIDR, optionally :PORT. Deny rules always win.
Without a scope flag the rule holds for every sandbox (sbx's global rules).
--session: only this session's sandbox (DOCKER_SANDBOX, or --sandbox NAME); sbx scopes an
allow to one sandbox only when the host preset is deny-all.
--project: every sandbox the sessions of this project create from now on (the project is
--cwd, default the current directory); remembered in the user's state directory, never in
the workspace, and applied when the sandbox is created.`, past),
		env: []envDoc{{"PI_SBX_BIN", "the sbx program"}, {"DOCKER_SANDBOX", "the session's sandbox, for --session"}},
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&session, "session", false, "only this session's sandbox")
			fs.BoolVar(&project, "project", false, "every sandbox this project's sessions create")
			fs.StringVar(&sandbox, "sandbox", "", "the sandbox for --session (default DOCKER_SANDBOX)")
			fs.StringVar(&dir, "cwd", "", "the project for --project (default the current directory)")
		},
		run: func(ctx context.Context, std stdio, args []string) error {
			// `allow HOST… --session`: the scope may follow the hosts too.
			var hosts []string
			for i := 0; i < len(args); i++ {
				switch a := args[i]; a {
				case "--session", "-session":
					session = true
				case "--project", "-project":
					project = true
				case "--sandbox", "-sandbox", "--cwd", "-cwd":
					if i+1 >= len(args) {
						return usagef("%s needs a value", a)
					}
					if a[len(a)-1] == 'x' {
						sandbox = args[i+1]
					} else {
						dir = args[i+1]
					}
					i++
				default:
					hosts = append(hosts, a)
				}
			}
			args = hosts
			if len(args) == 0 {
				return usagef("no host given")
			}
			if session && project {
				return usagef("--session and --project: pick one")
			}
			scope := netpolicy.Global
			switch {
			case session:
				scope = netpolicy.Session
				if sandbox == "" {
					sandbox = os.Getenv("DOCKER_SANDBOX")
				}
			case project:
				scope = netpolicy.Project
				if dir == "" {
					dir = "."
				}
				abs, err := filepath.Abs(dir)
				if err != nil {
					return err
				}
				dir = abs
				sandbox = "" // the project's next sandboxes
			default:
				if sandbox != "" {
					return usagef("--sandbox goes with --session")
				}
			}
			st, err := hostSettings()
			if err != nil {
				return err
			}
			stateDir, _ := netpolicy.StateDir(st.StateHome)
			r := &netpolicy.Rules{Sbx: st.Client(sbx.ExecRunner{}), StateDir: stateDir}
			msg, err := r.Change(ctx, action, args, scope, sandbox, dir)
			if err != nil {
				return fmt.Errorf("%s: %w", action, err)
			}
			fmt.Fprintln(std.out, msg)
			return nil
		},
	}
}
