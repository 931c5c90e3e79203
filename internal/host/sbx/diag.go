package sbx

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// DaemonStatus asks `sbx daemon status --json` whether the daemon runs (detail: its
// PID when sbx says, else "" or sbx's text); it does not start it. The shape is undocumented: an object with "running" (or "status":
// "running"), else the text "… is running" / "… not running".
func (c *Client) DaemonStatus(ctx context.Context) (running bool, detail string, err error) {
	res, err := c.run(ctx, call{op: "daemon status", args: []string{"daemon", "status", "--json"}, maxOut: 1 << 16})
	if err != nil {
		return false, "", err
	}
	out := bytes.TrimSpace(res.stdout)
	var obj struct {
		Running *bool  `json:"running"`
		Status  string `json:"status"`
		PID     int    `json:"pid"`
	}
	if json.Unmarshal(out, &obj) == nil && (obj.Running != nil || obj.Status != "") {
		running = obj.Running != nil && *obj.Running || strings.EqualFold(obj.Status, "running")
		if obj.PID > 0 {
			return running, fmt.Sprintf("PID %d", obj.PID), nil
		}
		return running, "", nil
	}
	text := strings.ToLower(string(out))
	switch {
	case strings.Contains(text, "not running"):
		return false, string(clipBytes(out, 200)), nil
	case strings.Contains(text, "running"):
		return true, string(clipBytes(out, 200)), nil
	}
	return false, "", &Error{Op: "daemon status", Err: fmt.Errorf("%w: %q", ErrOutput, clipBytes(out, 200))}
}

// DiagCheck is one check of `sbx diagnose --json` (SBX#496, SBX#332).
type DiagCheck struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Detail  string `json:"detail"`
	Hint    string `json:"hint"`
}

// Diagnose runs `sbx diagnose --json` and returns its checks.
func (c *Client) Diagnose(ctx context.Context) ([]DiagCheck, error) {
	res, err := c.run(ctx, call{op: "diagnose", args: []string{"diagnose", "--json"}, maxOut: 1 << 20})
	if err != nil {
		return nil, err
	}
	var out struct {
		Checks []DiagCheck `json:"checks"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(res.stdout), &out); err != nil {
		return nil, &Error{Op: "diagnose", Err: fmt.Errorf("%w: %v", ErrOutput, err)}
	}
	return out.Checks, nil
}

// Setting reads one of sbx's settings (`sbx settings get KEY`), e.g.
// ssh.agentForwardingEnabled.
func (c *Client) Setting(ctx context.Context, key string) (string, error) {
	if key == "" || strings.HasPrefix(key, "-") {
		return "", fmt.Errorf("sbx settings: invalid key %q", key)
	}
	res, err := c.run(ctx, call{op: "settings get", args: []string{"settings", "get", key}, maxOut: 1 << 12})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(res.stdout)), nil
}

func clipBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
