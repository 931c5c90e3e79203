package main

// Details modes (serve --details, PI_SBX_DETAILS): whether results carry pi's details as
// structuredContent. MCP means structuredContent to be the result itself, so Claude Code,
// Codex and other clients show it to the model instead of the content: a read would reach
// the model as its truncation record. Only a client that knows pi's details asks for them.
const (
	detailsNone       = "none"       // the default: content, _meta and isError only
	detailsStructured = "structured" // pi's details too: what the pi package reads
)

// contentOnly reads a --details value (or PI_SBX_DETAILS when the flag is empty).
func contentOnly(flag, env string) (bool, error) {
	v := flag
	if v == "" {
		v = env
	}
	switch v {
	case "", detailsNone:
		return true, nil
	case detailsStructured:
		return false, nil
	}
	return false, usagef("--details %q: want %s or %s", v, detailsNone, detailsStructured)
}
