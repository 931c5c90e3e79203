//go:build linux

package sbxsim

// flagsOf returns the flags a verb accepts in the played sbx version: exactly what the
// contract table in package sbx documents (sbxsim's contract test holds them equal), so
// that an undocumented flag is rejected as real sbx rejects it ("unknown flag").
func (c *cli) flagsOf(verb string) []flagSpec {
	switch verb {
	case "create":
		return append(c.createFlagSpecs(), flagSpec{long: "clone"})
	case "run":
		return append(c.createFlagSpecs(), flagSpec{long: "detach", short: "d"})
	case "exec":
		return execFlags
	case "ls":
		return []flagSpec{{long: "quiet", short: "q"}, {long: "json"}}
	case "rm":
		return []flagSpec{{long: "force", short: "f"}, {long: "all"}}
	case "ports":
		return []flagSpec{{long: "publish", value: true}, {long: "unpublish", value: true}, {long: "json"}}
	case "cp":
		return []flagSpec{{long: "follow-link", short: "L"}}
	case "version":
		if c.atLeast("0.42.0") { // "read-only commands … now accept --json" (0.42.0)
			return []flagSpec{{long: "json"}}
		}
		return nil
	case "daemon":
		specs := []flagSpec{{long: "json"}, {long: "detach", short: "d"}}
		if c.atLeast(V055) { // daemon logs
			specs = append(specs, flagSpec{long: "follow"}, flagSpec{long: "lines", short: "n", value: true})
		}
		return specs
	case "settings":
		if c.atLeast(V055) { // settings list|get --json
			return []flagSpec{{long: "json"}}
		}
		return nil
	case "inspect", "port":
		return []flagSpec{{long: "json"}, {long: "format", value: true}}
	case "df":
		return []flagSpec{{long: "json"}, {long: "verbose", short: "v"}}
	case "policy":
		return []flagSpec{{long: "sandbox", value: true}, {long: "json"}, {long: "protocol", value: true},
			{long: "method", value: true}, {long: "path", value: true}, {long: "id", value: true},
			{long: "resource", value: true}, {long: "wide"}, {long: "source", value: true}, {long: "include-inactive"}}
	case "diagnose":
		return []flagSpec{{long: "json"}, {long: "output", short: "o", value: true}, {long: "upload"}}
	case "login":
		return []flagSpec{{long: "username", short: "u", value: true}, {long: "password-stdin"}}
	}
	return nil // stop, logout
}
