package agentlink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"encoding/json"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/mcpserver"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/pi/result"
	"github.com/pi-sbx/pi-sbx-backend/internal/wire/tools"
)

// PerCall runs every call as its own `sbx exec -i SANDBOX -- AGENT tool --local --cwd DIR
// NAME -` with the JSON arguments on stdin, for hosts where a persistent stdin channel is unreliable. It does not
// stream, and cancelling kills the sbx client only.
type PerCall struct {
	Target
}

// CallTool implements mcpserver.Caller. The arguments go to the agent whole, on stdin:
// its routes take no stand-ins.
func (p *PerCall) CallTool(ctx context.Context, c mcpserver.Call) (json.RawMessage, error) {
	res, err := p.callOnce(ctx, c)
	switch {
	case errors.Is(err, errAgentGone):
		// The VM lost the agent (a stop of a sandbox whose /tmp does not survive, a
		// cleanup): installed again by hash, the call runs once more — it never started.
		res, err = p.callOnce(ctx, c)
	case errors.Is(err, sbx.ErrMissing) && p.Lost != nil && p.Lost():
		// The sandbox was removed from outside and Sandbox makes it again: the call
		// never started, so it runs once more there, as on the persistent channel.
		res, err = p.callOnce(ctx, c)
	}
	return res, err
}

// errAgentGone marks a call whose agent binary was not there (exit 126/127).
var errAgentGone = errors.New("the agent binary is gone from the VM")

func (p *PerCall) callOnce(ctx context.Context, c mcpserver.Call) (json.RawMessage, error) {
	name, args := c.Name, c.Args
	// Arguments travel on stdin: argv is limited (~128 KB per string) and a write's
	// content can be any size.
	sandbox, argv, err := p.prepare(ctx, "tool", "--local", "--cwd", p.Cwd, name, "-")
	if err != nil {
		return nil, err
	}
	res, err := p.Sbx.Exec(ctx, sandbox, argv, sbx.ExecOpts{
		Interactive: true, Stdin: bytes.NewReader(args), Env: p.Env, MaxOutput: MaxReply, Timeout: -1,
	})
	if errors.Is(err, sbx.ErrMissing) {
		p.Installer.Forget(sandbox) // a sandbox made again has no agent yet
	}
	if err != nil {
		return nil, err
	}
	switch res.ExitCode {
	case 0:
	case 2:
		return nil, fmt.Errorf("%w: %s", tools.ErrUsage, strings.TrimSpace(res.Stderr))
	case 126, 127:
		p.Installer.Forget(sandbox) // reinstalled by the next prepare
		return nil, fmt.Errorf("%w: agent in sandbox %s: exit status %d: %s", errAgentGone, sandbox, res.ExitCode, res.Stderr)
	default:
		return nil, fmt.Errorf("agent in sandbox %s: exit status %d: %s", sandbox, res.ExitCode, res.Stderr)
	}
	r, err := result.Decode(res.Stdout)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", mcpserver.ErrInvalidResult, err)
	}
	return mcpserver.AppendResult(nil, r, 0)
}
