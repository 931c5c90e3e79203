package session

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/netpolicy"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// network answers pi_sbx_network: allow or deny hosts for this session's sandbox (the
// default), the project's sandboxes, or every sandbox.
func (s *Session) network(ctx context.Context, c mcpserver.Call) (*mcp.CallToolResult, error) {
	var args tools.NetworkArgs
	if err := json.Unmarshal(c.Args, &args); err != nil {
		return nil, fmt.Errorf("%s: %w", tools.NetworkName, err)
	}
	scope := netpolicy.Scope(args.Scope)
	if scope == "" {
		scope = netpolicy.Session
	}
	stateDir, _ := netpolicy.StateDir(s.Settings.StateHome)
	r := &netpolicy.Rules{Sbx: s.Client, StateDir: stateDir}
	msg, err := r.Change(ctx, args.Action, args.Hosts, scope, s.Name, s.Workspace)
	if err != nil {
		return nil, err
	}
	return mcpserver.ToMCP(result.Text(msg, nil))
}
