package main

import (
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// extraTools are the tool sets a client asks serve for beyond pi's seven and the
// docker_* tools, with `--tools +terminal` or PI_SBX_TOOLS=+terminal.
type extraTools struct {
	terminal bool
}

// parseExtraTools reads a --tools value (or PI_SBX_TOOLS): a comma-separated list of
// `+SET`; the one set there is is `terminal`.
func parseExtraTools(v string) (extraTools, error) {
	var x extraTools
	for _, f := range strings.Split(v, ",") {
		switch f = strings.TrimSpace(f); f {
		case "":
		case "+terminal", "terminal":
			x.terminal = true
		default:
			return x, usagef("--tools %q: want +terminal", f)
		}
	}
	return x, nil
}

// routes are the extra sets' routes: the terminal tools (offered to the model) and their
// resize method (unlisted) run in the VM, through the agent.
func (x extraTools) routes(agent mcpserver.Caller) []mcpserver.Route {
	if !x.terminal {
		return nil
	}
	return append(mcpserver.Routes(tools.Terminal(), agent),
		mcpserver.Route{Tool: tools.TerminalResize(), Caller: agent, Unlisted: true})
}
