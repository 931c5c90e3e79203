package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/audit"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
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
			dir, err := auditDir(st)
			if err != nil {
				return err
			}
			if o.list {
				return listLogs(std, dir)
			}
			name := o.sandbox
			if name == "" {
				name = st.Sandbox
			}
			if name == "" {
				if name, err = newestLog(dir); err != nil {
					return err
				}
				fmt.Fprintf(std.err, "log of %s (the one written last; --list shows all)\n", name)
			}
			if err := sbx.ValidateName(name); err != nil {
				return usagef("--sandbox %q: %v", name, err)
			}
			return audit.Read(ctx, filepath.Join(dir, name+".jsonl"), o.follow, 250*time.Millisecond, func(e audit.Entry) error {
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

// auditDir is where serve keeps the audit logs: beside the owner records.
func auditDir(st settings.Settings) (string, error) {
	o, err := st.Owners()
	if err != nil {
		return "", fmt.Errorf("audit log: %w", err)
	}
	return filepath.Join(filepath.Dir(o.Dir), "audit"), nil
}

// logs are the audit logs in dir, by sandbox name.
func logs(dir string) (map[string]os.FileInfo, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	out := map[string]os.FileInfo{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			out[name] = fi
		}
	}
	return out, nil
}

func newestLog(dir string) (string, error) {
	all, err := logs(dir)
	if err != nil {
		return "", err
	}
	var newest string
	for name, fi := range all {
		if newest == "" || fi.ModTime().After(all[newest].ModTime()) {
			newest = name
		}
	}
	if newest == "" {
		return "", fmt.Errorf("no audit log in %s yet: serve writes one per sandbox on its first tool call", dir)
	}
	return newest, nil
}

func listLogs(std stdio, dir string) error {
	all, err := logs(dir)
	if err != nil {
		return err
	}
	for _, name := range sortedByTime(all) {
		fi := all[name]
		fmt.Fprintf(std.out, "%s  %s  %d bytes\n", fi.ModTime().Format("2006-01-02 15:04:05"), name, fi.Size())
	}
	return nil
}

// sortedByTime are the names of all, oldest log first.
func sortedByTime(all map[string]os.FileInfo) []string {
	return slices.SortedFunc(maps.Keys(all), func(a, b string) int {
		return all[a].ModTime().Compare(all[b].ModTime())
	})
}
