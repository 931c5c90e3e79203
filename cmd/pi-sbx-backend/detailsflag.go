package main

// Details modes (serve --details, PI_SBX_DETAILS): whether results carry pi's details as
// structuredContent.
const (
	detailsStructured = "structured" // the default: what the pi package reads
	detailsNone       = "none"       // content only, for clients that show the model structuredContent
)

// contentOnly reads a --details value (or PI_SBX_DETAILS when the flag is empty).
func contentOnly(flag, env string) (bool, error) {
	v := flag
	if v == "" {
		v = env
	}
	switch v {
	case "", detailsStructured:
		return false, nil
	case detailsNone:
		return true, nil
	}
	return false, usagef("--details %q: want %s or %s", v, detailsStructured, detailsNone)
}
