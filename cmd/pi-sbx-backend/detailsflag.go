package main

import "github.com/pi-sbx/pi-sbx-backend/internal/host/settings"

// contentOnly reads serve's --details value, or when it is empty the setting's
// (PI_SBX_DETAILS, already checked): whether results carry pi's details as
// structuredContent. MCP means structuredContent to be the result itself, so Claude Code,
// Codex and other clients show it to the model instead of the content: a read would reach
// the model as its truncation record. Only a client that knows pi's details asks for them.
func contentOnly(flag, setting string) (bool, error) {
	v := flag
	if v == "" {
		v = setting
	}
	d, err := settings.ParseDetails("--details", v)
	if err != nil {
		return false, usageError{err.Error()}
	}
	return d == settings.DetailsNone, nil
}
