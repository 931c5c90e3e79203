//go:build linux

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/pi-sbx/pi-sbx-backend/internal/vm/shell"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/terminal"
	"github.com/pi-sbx/pi-sbx-backend/internal/vm/vmagent"
)

// termServerIdle is how long the terminal server waits, with no session left and no
// call, before it exits.
const termServerIdle = 10 * time.Minute

func terminalServerCommand() command {
	var socket string
	return command{
		name:     "terminal-server",
		synopsis: "[--socket PATH]",
		summary:  "the terminal tools' session table for per-call agents, started in the sandbox by tool --local",
		internal: true,
		help: `Holds the terminal tools' sessions (exec_command and the rest) for agents that do not
outlive a call: with serve's --transport per-call every call is a tool --local process of
its own, which starts this server (detached) when none answers on its socket and asks
it. One server per user; a second one started exits at once. It exits after 10 minutes
with no session and no call.`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&socket, "socket", vmagent.TerminalSocket(), "unix socket `PATH` to listen on")
		},
		run: func(ctx context.Context, std stdio, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			if err := vmagent.SealInherited(); err != nil {
				return err
			}
			ln, release, err := vmagent.ListenTerminals(socket)
			if err != nil || ln == nil {
				return err // nil, nil: another server holds the lock and serves
			}
			defer release()
			m, err := terminal.NewManager(vmagent.TerminalLogDir(), terminal.Limits{})
			if err != nil {
				return err
			}
			defer m.Close()
			reg, err := vmagent.New(vmagent.Terminal(func() (*terminal.Manager, error) { return m, nil })...)
			if err != nil {
				return err
			}
			return vmagent.ServeTerminals(ctx, ln, reg, termServerIdle, func() bool { return len(m.List()) > 0 })
		},
	}
}

// terminalDialer reaches this user's terminal server, starting this executable as one.
func terminalDialer() *vmagent.TerminalDialer {
	socket := vmagent.TerminalSocket()
	return &vmagent.TerminalDialer{Socket: socket, Start: func() error {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding this executable: %w", err)
		}
		return shell.SpawnDetached([]string{exe, "terminal-server", "--socket", socket}, shell.SpawnOptions{Dir: "/"})
	}}
}
