package sbx

import (
	"fmt"
	"strconv"
	"strings"
)

// The contract with sbx: the verbs, flags and output shapes this package relies on,
// from Docker's CLI reference and release notes, the sbx issue tracker (SBX#n:
// github.com/docker/sbx-releases issue n) and third-party code driving 0.39–0.42.1.
// Tests hold both sides to it: every argv the Client builds is valid here
// (ValidateArgv), and sbxsim accepts exactly these flags, version by version.

// MinVersion is the oldest sbx whose flags and behaviour the backend relies on: bare
// `exec -e NAME` (0.39) and `ports --publish` binding 127.0.0.1 only by default (tcp4,
// 0.42), which docker_curl and the port audit assume.
const MinVersion = "0.42.0"

// Flag is one documented flag of a verb.
type Flag struct {
	Long  string // without the dashes
	Short string // one letter, or ""
	Value bool   // takes a value
	// Since is the first sbx version that has it ("" = every version from MinVersion).
	Since string
	// Why says where the fact comes from, or what is assumed.
	Why string
	// Local: cloud sandboxes reject it (`sbx --cloud exec -d/-u/--privileged`), so a
	// command line with --cloud never carries it. Cloud: only with --cloud.
	Local, Cloud bool
}

// Verb is one sbx command: its flags and the shape of the output the backend reads.
type Verb struct {
	Name string // "exec", "policy"
	// Since is the first sbx version that has the verb ("" = every version from
	// MinVersion).
	Since  string
	Usage  string // positional arguments
	Flags  []Flag
	Output string // what the backend parses, "" when it reads nothing
	// Cloud: the verb exists only with the global --cloud (ttl).
	Cloud bool
	// Interspersed: flags may follow positional arguments (cobra's default); exec stops
	// at its sandbox name (everything after belongs to the command).
	Interspersed bool
	// CloudNoPaths: under --cloud the verb takes the AGENT and no PATH (create, run): a
	// cloud sandbox mounts nothing of the host, and `sbx --cloud run AGENT .` is an error
	// (reference: Cloud).
	CloudNoPaths bool
}

// PullSince is the first version whose create takes --pull (see Verbs).
const PullSince = "0.46.0"

// V055 is the first version with the global --no-input, the `port` group, `inspect`,
// `policy`, `settings list --json` and `daemon logs` (docs/sbxsim.md; no 0.54 was
// released). Where the reference gives no first version for one of them, 0.55.0 is
// assumed: the first release notes that mention them.
const V055 = "0.55.0"

// CloudSince is the first version with the global --cloud (experimental, a paid plan):
// sandboxes in Docker's cloud, no workspace mount, files through `sbx --cloud cp`.
const CloudSince = "0.45.0"

// Globals are the flags sbx takes before any verb.
var Globals = []Flag{
	{Long: "cloud", Since: CloudSince, Why: "DD cli/manage/cloud.md: every verb of a cloud sandbox carries it"},
	{Long: "no-input", Since: V055, Why: "never prompt: a command that needs an answer fails naming the command to run " +
		"(docs/sbxsim.md, CLI reference); first version assumed"},
	{Long: "debug", Short: "D"},
}

// Verbs is the contract table.
var Verbs = []Verb{
	{Name: "create", Usage: "AGENT [PATH[:ro]...]", Interspersed: true, CloudNoPaths: true, Flags: []Flag{
		{Long: "name", Value: true}, {Long: "quiet", Short: "q"},
		{Long: "cpus", Value: true}, {Long: "memory", Short: "m", Value: true},
		{Long: "template", Short: "t", Value: true}, {Long: "kit", Value: true},
		{Long: "clone", Local: true, Why: "REL v0.31.0 (replaced --branch); clone mode: docs/sbxsim.md; " +
			"rejected by --cloud: a cloud sandbox has no host workspace to clone (reference: Cloud)"},
		{Long: "pull", Value: true, Since: PullSince, Why: "DD sbx_create.yaml: always (default) | missing | never; " +
			"first version assumed: the one docker/skills verified its notes against (0.46.0)"},
		{Long: "size", Value: true, Since: CloudSince, Cloud: true, Why: "micro|small|medium|large|xl (DD cli/manage/cloud.md)"},
		{Long: "ttl", Value: true, Since: CloudSince, Cloud: true, Why: "default 1h, at most 24h from creation; 0 is an error"},
		{Long: "on-timeout", Value: true, Since: CloudSince, Cloud: true, Why: "stop|restart|delete"},
	}},
	{Name: "run", Usage: "AGENT [PATH...] | --name SANDBOX", Interspersed: true, CloudNoPaths: true, Flags: []Flag{
		{Long: "name", Value: true}, {Long: "quiet", Short: "q"},
		{Long: "cpus", Value: true}, {Long: "memory", Short: "m", Value: true},
		{Long: "template", Short: "t", Value: true}, {Long: "kit", Value: true},
		{Long: "pull", Value: true, Since: PullSince, Why: "as create"},
		{Long: "detach", Short: "d"},
	}},
	{Name: "exec", Usage: "SANDBOX [--] COMMAND [ARG...]", Flags: []Flag{
		{Long: "interactive", Short: "i"}, {Long: "tty", Short: "t"},
		{Long: "env", Short: "e", Value: true, Why: "bare -e NAME takes the caller's value (TP, ≥ 0.39)"},
		{Long: "env-file", Value: true}, {Long: "user", Short: "u", Value: true, Local: true, Why: "rejected by --cloud"},
		{Long: "workdir", Short: "w", Value: true},
		{Long: "detach", Short: "d", Local: true, Why: "listed, but rejected as not supported from 0.45; rejected by --cloud"},
		{Long: "privileged", Local: true, Why: "rejected by --cloud"},
	}, Output: "the command's stdout; exit status the command's, 1 also for a missing sandbox or signed out (SBX#504)"},
	{Name: "inspect", Usage: "SANDBOX", Since: V055, Interspersed: true, Flags: []Flag{
		{Long: "json"}, {Long: "format", Value: true, Why: "table|json|yaml"},
	}, Output: `--json: {"name","agent","status","workspaces":[…],"network":{…},"ports":[…]} ` +
		`(fields per the CLI reference; key names undocumented: sbxsim's)`},
	{Name: "ls", Interspersed: true, Flags: []Flag{{Long: "quiet", Short: "q"}, {Long: "json"}},
		Output: `--json: {"sandboxes":[{"name","status","workspaces":[…]}]} (SBX#201, TP 0.42.1), after the daemon banner if it started`},
	{Name: "stop", Usage: "SANDBOX...", Interspersed: true},
	{Name: "rm", Usage: "SANDBOX... | --all", Interspersed: true, Flags: []Flag{{Long: "force", Short: "f"}, {Long: "all"}}},
	{Name: "ports", Usage: "SANDBOX", Interspersed: true, Flags: []Flag{
		{Long: "publish", Value: true}, {Long: "unpublish", Value: true}, {Long: "json"},
	}, Output: `--json: [{host_ip, host_port, sandbox_port, protocol}] (TP 0.42.1); a stopped sandbox: the text "No published ports"`},
	{Name: "port", Usage: "ls|publish|unpublish SANDBOX [SPEC...]", Since: V055, Interspersed: true, Flags: []Flag{
		{Long: "json"}, {Long: "format", Value: true, Why: "table|json|yaml"},
	}, Output: "ls --json: as ports --json; publish starts a stopped sandbox (CLI reference)"},
	{Name: "policy", Usage: "init allow-all|balanced|deny-all | allow|deny network HOSTS | rm network | ls [SANDBOX] | " +
		"check network TARGET | log [SANDBOX] | inspect | reset", Since: V055, Interspersed: true, Flags: []Flag{
		{Long: "sandbox", Value: true}, {Long: "json"}, {Long: "protocol", Value: true},
		{Long: "method", Value: true}, {Long: "path", Value: true},
		{Long: "id", Value: true}, {Long: "resource", Value: true},
		{Long: "wide"}, {Long: "source", Value: true, Why: "local|org|kit"}, {Long: "include-inactive"},
	}, Output: "ls/log/check --json: shapes undocumented (docs/sbxsim.md); see policy.go for what is read"},
	{Name: "df", Since: V055, Interspersed: true, Flags: []Flag{{Long: "json"}, {Long: "verbose", Short: "v"}},
		Output: `--json: {"sandboxes":[{"name","status","size_bytes"}],"total_bytes"} (shape undocumented: sbxsim's)`},
	{Name: "cp", Usage: "SRC DST", Interspersed: true, Flags: []Flag{{Long: "follow-link", Short: "L", Why: "DD sbx_cp.yaml"}}},
	{Name: "version", Interspersed: true, Flags: []Flag{{Long: "json", Since: "0.42.0", Why: "0.42.0 release notes"}},
		Output: "Client Version: vX.Y.Z <commit> / Server Version: vX.Y.Z <commit> (SBX#149)"},
	{Name: "daemon", Usage: "start|stop|restart|status|logs", Interspersed: true, Flags: []Flag{
		{Long: "json", Why: "DD sbx_daemon_status.yaml"}, {Long: "detach", Short: "d", Why: "daemon start -d"},
		{Long: "follow", Since: V055, Why: "daemon logs --follow"}, {Long: "lines", Short: "n", Value: true, Since: V055, Why: "daemon logs -n N"},
	}, Output: "status --json: an object with running (shape undocumented: sbxsim's guess)"},
	{Name: "diagnose", Interspersed: true, Flags: []Flag{
		{Long: "json", Why: "DD sbx_diagnose.yaml"}, {Long: "output", Short: "o", Value: true, Why: "troubleshooting page: --output json|github-issue"},
		{Long: "upload"},
	}, Output: `{"version":"1.0","checks":[{name,status,message,detail,hint}]} (SBX#496, SBX#332)`},
	{Name: "settings", Usage: "get KEY | set KEY VALUE | list", Interspersed: true, Flags: []Flag{
		{Long: "json", Since: V055, Why: "settings list --json (0.55.0 release notes)"},
	},
		Output: "get: the value alone, e.g. true for ssh.agentForwardingEnabled (DD isolation.md; shape assumed)"},
	{Name: "login", Interspersed: true, Flags: []Flag{{Long: "username", Short: "u", Value: true}, {Long: "password-stdin"}}},
	{Name: "logout", Interspersed: true},
}

// CloudVerbs are the verbs only `sbx --cloud` has; the others, under --cloud, are
// Verbs' (their Cloud flags too, their Local ones never).
var CloudVerbs = []Verb{
	{Name: "ttl", Usage: "SANDBOX [+DURATION|DURATION]", Since: CloudSince, Cloud: true, Interspersed: true,
		Flags:  []Flag{{Long: "json"}},
		Output: "nothing read; +D extends the cloud sandbox's time to live, never past 24 h from its creation"},
}

// At reports whether sbx version has the verb.
func (v Verb) At(version string) bool {
	return v.Since == "" || CompareVersions(version, v.Since) >= 0
}

// GlobalsAt returns the global flags that sbx version has.
func GlobalsAt(version string) []Flag {
	var out []Flag
	for _, f := range Globals {
		if f.Since == "" || CompareVersions(version, f.Since) >= 0 {
			out = append(out, f)
		}
	}
	return out
}

// SupportsGlobal reports whether sbx version has the global flag.
func SupportsGlobal(version, long string) bool {
	for _, f := range GlobalsAt(version) {
		if f.Long == long {
			return true
		}
	}
	return false
}

// VerbNamed returns the table's entry for verb.
func VerbNamed(verb string) (Verb, bool) {
	for _, v := range Verbs {
		if v.Name == verb {
			return v, true
		}
	}
	return Verb{}, false
}

// FlagsAt returns the verb's flags that sbx version has for a local sandbox (its Cloud
// flags are not: see CloudFlagsAt).
func (v Verb) FlagsAt(version string) []Flag {
	var out []Flag
	for _, f := range v.Flags {
		if !f.Cloud && (f.Since == "" || CompareVersions(version, f.Since) >= 0) {
			out = append(out, f)
		}
	}
	return out
}

// CloudFlagsAt returns the flags the verb takes under --cloud at version: the local
// ones cloud does not reject, and its Cloud ones.
func (v Verb) CloudFlagsAt(version string) []Flag {
	var out []Flag
	for _, f := range v.Flags {
		if !f.Local && (f.Since == "" || CompareVersions(version, f.Since) >= 0) {
			out = append(out, f)
		}
	}
	return out
}

// cloudVerbNamed returns the entry of verb under --cloud.
func cloudVerbNamed(verb string) (Verb, bool) {
	for _, v := range CloudVerbs {
		if v.Name == verb {
			return v, true
		}
	}
	return VerbNamed(verb)
}

// Supports reports whether sbx version has the verb's flag.
func Supports(version, verb, long string) bool {
	v, ok := VerbNamed(verb)
	if !ok || !v.At(version) {
		return false
	}
	for _, f := range v.FlagsAt(version) {
		if f.Long == long {
			return true
		}
	}
	return false
}

// ValidateArgv checks an sbx command line (without the program name) against the
// table at version: global flags the version has, then a verb it has, only its flags
// (values where they take one), and for exec the flags before the sandbox name.
func ValidateArgv(argv []string, version string) error {
	cloud := false
	for len(argv) > 0 && strings.HasPrefix(argv[0], "-") {
		name := strings.TrimLeft(argv[0], "-")
		cloud = cloud || name == "cloud"
		ok := false
		for _, f := range GlobalsAt(version) {
			ok = ok || name == f.Long || name == f.Short && f.Short != ""
		}
		if !ok {
			return fmt.Errorf("sbx: unknown global flag %s at v%s", argv[0], version)
		}
		argv = argv[1:]
	}
	if len(argv) == 0 {
		return fmt.Errorf("empty sbx command line")
	}
	v, ok := VerbNamed(argv[0])
	if cloud {
		v, ok = cloudVerbNamed(argv[0])
	} else if cv, isCloud := cloudVerbNamed(argv[0]); !ok && isCloud {
		return fmt.Errorf("sbx %s: a verb of cloud sandboxes only (sbx --cloud %s)", cv.Name, cv.Name)
	}
	if !ok {
		return fmt.Errorf("sbx %s: not a verb of the contract", argv[0])
	}
	if !v.At(version) {
		return fmt.Errorf("sbx %s: not a verb before v%s (this is v%s)", v.Name, v.Since, version)
	}
	var flags []Flag // both sides' at this version: where() says which is wrong
	for _, f := range v.Flags {
		if f.Since == "" || CompareVersions(version, f.Since) >= 0 {
			flags = append(flags, f)
		}
	}
	find := func(match func(Flag) bool) (Flag, bool) {
		for _, f := range flags {
			if match(f) {
				return f, true
			}
		}
		return Flag{}, false
	}
	args := argv[1:]
	positional := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return nil
		case strings.HasPrefix(a, "--"):
			name, _, hasVal := strings.Cut(a[2:], "=")
			f, ok := find(func(f Flag) bool { return f.Long == name })
			if !ok {
				return fmt.Errorf("sbx %s: unknown flag --%s at v%s", v.Name, name, version)
			}
			if err := f.where(v.Name, cloud); err != nil {
				return err
			}
			if f.Value && !hasVal {
				if i+1 >= len(args) {
					return fmt.Errorf("sbx %s: --%s needs a value", v.Name, name)
				}
				i++
			}
		case len(a) > 1 && a[0] == '-':
			f, ok := find(func(f Flag) bool { return f.Short != "" && f.Short == a[1:2] })
			if !ok || len(a) > 2 && !f.Value {
				return fmt.Errorf("sbx %s: unknown flag %s at v%s", v.Name, a, version)
			}
			if err := f.where(v.Name, cloud); err != nil {
				return err
			}
			if f.Value && len(a) == 2 {
				if i+1 >= len(args) {
					return fmt.Errorf("sbx %s: %s needs a value", v.Name, a)
				}
				i++
			}
		default:
			if !v.Interspersed {
				return nil // exec: the sandbox name; the command follows
			}
			if positional++; cloud && v.CloudNoPaths && positional > 1 {
				return fmt.Errorf("sbx --cloud %s: a cloud sandbox mounts no workspace: %q is a PATH (AGENT only)", v.Name, a)
			}
		}
	}
	return nil
}

// where checks that the flag is one of the side the command line is for: a cloud
// sandbox's (--cloud) or a local one's.
func (f Flag) where(verb string, cloud bool) error {
	switch {
	case cloud && f.Local:
		return fmt.Errorf("sbx --cloud %s: --%s is rejected by cloud sandboxes", verb, f.Long)
	case !cloud && f.Cloud:
		return fmt.Errorf("sbx %s: --%s is for cloud sandboxes only (sbx --cloud)", verb, f.Long)
	}
	return nil
}

// CloudRejects returns the first flag of a cloud command line (argv after the globals,
// the verb first) that cloud sandboxes reject, or "": the client refuses to run such a
// line rather than let sbx fail it, whatever the version.
func CloudRejects(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	v, ok := cloudVerbNamed(argv[0])
	if !ok {
		return ""
	}
	for _, a := range argv[1:] {
		if a == "--" || !strings.HasPrefix(a, "-") {
			if !v.Interspersed {
				return "" // exec: the sandbox name; the command follows
			}
			continue
		}
		for _, f := range v.Flags {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			long := strings.HasPrefix(a, "--")
			if f.Local && (long && name == f.Long || !long && f.Short != "" && a[1:2] == f.Short) {
				return a
			}
		}
	}
	return ""
}

// CompareVersions compares dotted sbx versions ("v0.42.1", "0.53.0-rc5": the suffix is
// ignored): -1, 0 or 1.
func CompareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func versionParts(v string) [3]int {
	var p [3]int
	v, _, _ = strings.Cut(strings.TrimPrefix(strings.TrimSpace(v), "v"), "-")
	for i, s := range strings.SplitN(v, ".", 3) {
		p[i], _ = strconv.Atoi(s)
	}
	return p
}
