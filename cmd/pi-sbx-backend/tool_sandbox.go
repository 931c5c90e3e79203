package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/agentlink"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/host/session"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// runToolSandbox runs one call in the named (existing) sandbox through the agent and
// prints the same JSON result `tool --local` prints. A malformed call is a usage error
// found on the host, before anything reaches the sandbox.
func runToolSandbox(ctx context.Context, std stdio, sandbox, cwd, name string, raw []byte) error {
	if err := sbx.ValidateName(sandbox); err != nil {
		return usageError{err.Error()}
	}
	t, err := tools.Lookup(tools.Pi(), name)
	if err != nil {
		return usageError{err.Error()}
	}
	args, err := t.Validate(raw)
	if err != nil {
		return usageError{err.Error()}
	}
	st, err := hostSettings()
	if err != nil {
		return err
	}
	client := st.Client(sbx.ExecRunner{})
	// The sandbox exists already: check the host files against the working directory
	// (most likely its workspace) before running sbx at all, then against what it mounts.
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this executable: %w", err)
	}
	files, err := session.HostFiles(client, exe)
	if err != nil {
		return err
	}
	if err := sbx.CheckHostFiles(files, []string{cwd}); err != nil {
		return err
	}
	if box, err := client.Lookup(ctx, sandbox); err == nil {
		if err := sbx.CheckHostFiles(files, box.Mounts()); err != nil {
			return fmt.Errorf("sandbox %s: %w", sandbox, err)
		}
	}
	ch := &agentlink.Channel{
		Target: agentlink.Target{
			Sbx:       client,
			Sandbox:   func(context.Context) (string, error) { return sandbox, nil },
			Installer: &agentlink.Installer{Sbx: client, Version: version},
			Env:       st.VMEnv(),
			Cwd:       cwd,
		},
		Version:    version,
		Stderr:     std.err,
		StartTries: 1,
	}
	defer ch.Close()
	return printResult(std.out, func() (any, error) {
		raw, err := ch.CallTool(ctx, mcpserver.Call{Name: name, Args: json.RawMessage(args)})
		var res mcp.CallToolResult
		if err == nil {
			err = json.Unmarshal(raw, &res)
		}
		if err != nil {
			return nil, fmt.Errorf("sandbox %s: %w", sandbox, err)
		}
		return mcpserver.FromMCP(&res)
	})
}
