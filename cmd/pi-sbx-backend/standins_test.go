package main

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/agentlink"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// TestOnlyTheChannelsRoutesTakeStandIns: serve's routes to the agent channel take the
// relay route's stand-ins; the host's own tools and another channel's routes do not,
// nor does any route when the agent is reached per call.
func TestOnlyTheChannelsRoutesTakeStandIns(t *testing.T) {
	ch, other := &agentlink.Channel{}, &agentlink.Channel{}
	typed := mcpserver.Typed(func(context.Context, mcpserver.Call) (*mcp.CallToolResult, error) { return nil, nil })
	routes := func() []mcpserver.Route {
		return []mcpserver.Route{
			{Tool: tools.Pi()[0], Caller: ch},
			{Tool: tools.Status(), Caller: typed},
			{Tool: tools.PtyExec(), Caller: other},
			{Tool: tools.PtyResize(), Caller: &agentlink.PerCall{}},
		}
	}
	var got []bool
	for _, r := range takingStandIns(routes(), ch) {
		got = append(got, r.StandIns)
	}
	assert.Equal(t, []bool{true, false, false, false}, got)
	for _, r := range takingStandIns(routes(), nil) {
		assert.False(t, r.StandIns, r.Tool.Name)
	}
}
