package main

import (
	"github.com/pi-sbx/pi-sbx-backend/internal/host/settings"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// extraTools are the tool sets a client asks serve for beyond pi's seven and the
// docker_* tools, with `--tools +terminal` or PI_SBX_TOOLS=+terminal.
type extraTools struct {
	terminal bool
}

// parseExtraTools reads a --tools value: a comma-separated list of +SET (the one set
// there is is terminal); an empty flag leaves the setting's (PI_SBX_TOOLS) terminal.
func parseExtraTools(flag string, terminal bool) (extraTools, error) {
	if flag == "" {
		return extraTools{terminal: terminal}, nil
	}
	t, err := settings.ParseTools("--tools", flag)
	if err != nil {
		return extraTools{}, usageError{err.Error()}
	}
	return extraTools{terminal: t}, nil
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
