package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/audit"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

type logOptions struct {
	sandbox string
	follow  bool
	json    bool
	list    bool
}

func logCommand() command {
	var o logOptions
	return command{
		name:     "log",
		synopsis: "[--sandbox NAME] [--follow] [--json] | --list",
		summary:  "show a sandbox's audit log: every tool call from every client",
		help: `Shows the audit log of a sandbox: one line per tool call that serve ran for any client
(pi, an editor or another agent over MCP, the docker_* tools, pi's ! commands) — time,
client, the client's id for the call, tool, the arguments' short form (paths, patterns,
commands; never a file's content, only its size), how it ended (ok, error, thrown,
failed, cancelled) and how long it took. The log lives in the state directory
($XDG_STATE_HOME/pi-sbx-backend/audit/NAME.jsonl, default ~/.local/state), never in the
workspace, and is rotated at 8 MiB (NAME.jsonl.1 keeps the one before). Without
--sandbox: DOCKER_SANDBOX, else the log written last.`,
		env: []envDoc{{"DOCKER_SANDBOX=NAME", "the sandbox whose log is shown, without --sandbox"}},
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.sandbox, "sandbox", "", "the sandbox `NAME` whose log to show")
			fs.BoolVar(&o.follow, "follow", false, "keep printing new entries until interrupted")
			fs.BoolVar(&o.json, "json", false, "print the entries as JSON lines, as stored")
			fs.BoolVar(&o.list, "list", false, "list the sandboxes that have a log")
		},
		run: func(ctx context.Context, std stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			st, err := hostSettings()
			if err != nil {
				return err
			}
			store, err := audit.NewStore(st.StateHome)
			if err != nil {
				return err
			}
			if o.list {
				all, err := store.List()
				for _, l := range all {
					fmt.Fprintf(std.out, "%s  %s  %d bytes\n", l.Modified.Format("2006-01-02 15:04:05"), l.Sandbox, l.Size)
				}
				return err
			}
			name := o.sandbox
			if name == "" {
				name = st.Sandbox
			}
			if name == "" {
				if name, err = store.Newest(); err != nil {
					return err
				}
				fmt.Fprintf(std.err, "log of %s (the one written last; --list shows all)\n", name)
			}
			if err := sbx.ValidateName(name); err != nil {
				return usagef("--sandbox %q: %v", name, err)
			}
			return audit.Read(ctx, store.Path(name), o.follow, 250*time.Millisecond, func(e audit.Entry) error {
				if o.json {
					b, err := json.Marshal(e)
					if err != nil {
						return err
					}
					_, err = fmt.Fprintf(std.out, "%s\n", b)
					return err
				}
				_, err := fmt.Fprintln(std.out, audit.Format(e))
				return err
			})
		},
	}
}
