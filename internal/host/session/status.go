package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// Methods are serve's unlisted routes (callable, absent from tools/list):
// pi_sbx_pty_exec and pi_sbx_pty_resize run in the VM like the seven; pi_sbx_status is
// answered here.
func Methods(s *Session, agent mcpserver.Caller) []mcpserver.Route {
	return []mcpserver.Route{
		{Tool: tools.PtyExec(), Caller: agent, Unlisted: true},
		{Tool: tools.PtyResize(), Caller: agent, Unlisted: true},
		{Tool: tools.Status(), Caller: mcpserver.Typed((&statusCaller{session: s, agent: agent, policy: s.Settings.Policy}).call), Unlisted: true},
		{Tool: tools.Network(), Caller: mcpserver.Typed(s.network), Unlisted: true},
	}
}

// sandboxStatus is pi_sbx_status's structuredContent.
type sandboxStatus struct {
	Sandbox       string `json:"sandbox"`
	Status        string `json:"status"`
	Workspace     string `json:"workspace"`
	WorkspaceMode string `json:"workspace_mode"` // rw, ro or review
	EnvMode       string `json:"env_mode"`
	Teardown      string `json:"teardown"`
	Reuse         bool   `json:"reuse"` // the project's sandbox, kept between sessions
	Shell         string `json:"shell"` // the command that opens a shell in it
	// Network is sbx's network policy for the sandbox in a word: "balanced",
	// "locked (3 allowed)", "open", "org", "none"; "" where sbx has no policy command.
	Network string `json:"network,omitempty"`
	// Cloud says, for a cloud sandbox (PI_SBX_CLOUD), when it stops: its time to live,
	// extended while the session is open, and sbx's 24 h limit once it is near.
	Cloud string `json:"cloud,omitempty"`
}

// statusCaller makes sure the sandbox exists and its agent runs, then describes them: a
// client calls it right after connecting to pre-warm, so the first real call does not
// wait for a VM.
type statusCaller struct {
	session *Session
	agent   mcpserver.Caller
	policy  sbx.EnvPolicy
}

// call answers pi_sbx_status.
func (c *statusCaller) call(ctx context.Context, _ mcpserver.Call) (*mcp.CallToolResult, error) {
	if p := c.session.Preflight; p != nil {
		if err := p(ctx); err != nil {
			return nil, err
		}
	}
	name, err := c.session.Ensure(ctx)
	if err != nil {
		return nil, err
	}
	// The channel starts the agent on its first call; a no-op command makes that happen now.
	raw, err := c.agent.CallTool(ctx, mcpserver.Call{Name: tools.PtyExecName, Args: json.RawMessage(`{"command":"true"}`)})
	var res mcp.CallToolResult
	if err == nil {
		err = json.Unmarshal(raw, &res)
	}
	if err != nil {
		return nil, fmt.Errorf("starting the agent in %s: %w", name, err)
	}
	if res.IsError {
		r, _ := mcpserver.FromMCP(&res)
		return nil, fmt.Errorf("starting the agent in %s: %s", name, firstText(r))
	}
	st := sandboxStatus{
		Sandbox:       name,
		Status:        "running",
		Workspace:     c.session.Workspace,
		WorkspaceMode: c.session.Mode,
		EnvMode:       envMode(c.policy),
		Teardown:      c.session.Teardown,
		Reuse:         c.session.Reuse,
		Shell:         "DOCKER_SANDBOX=" + name + " pi-sbx-backend shell",
	}
	if c.session.Pinned && !c.session.Reuse {
		st.Teardown += " (pinned by DOCKER_SANDBOX)"
	}
	if p, err := c.session.Client.PolicyLs(ctx, name); err == nil {
		st.Network = p.Word()
	}
	text := fmt.Sprintf("sandbox %s (%s), workspace %s (%s), env %s, teardown %s", st.Sandbox, st.Status, st.Workspace, st.WorkspaceMode, st.EnvMode, st.Teardown)
	if st.Network != "" {
		text += ", net: " + st.Network
	}
	if c.session.Client.Cloud {
		st.Cloud = c.session.CloudLife().Status()
		if st.Cloud == "" {
			st.Cloud = "cloud"
		}
		text += ", " + st.Cloud
	}
	return mcpserver.ToMCP(result.Text(text, st))
}

func envMode(p sbx.EnvPolicy) string {
	switch {
	case p.Passthrough:
		return "passthrough (every variable but DOCKER_*/COMPOSE_* and the host-describing ones)"
	case len(p.Allow) > 0:
		return "allowlist (PI_* and " + strings.Join(p.Allow, ", ") + ")"
	default:
		return "PI_* only"
	}
}

func firstText(r result.Result) string {
	for _, c := range r.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}
