//go:build linux

package sbxsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// Env is everything the command line depends on, injected so that Main is testable and
// holds no global state.
type Env struct {
	Stdin          *os.File
	Stdout, Stderr io.Writer
	// LookupEnv reads the caller's environment (for SBXSIM_* settings and `exec -e K`).
	LookupEnv func(string) (string, bool)
	// Cwd resolves relative workspace paths.
	Cwd string
	// Self is the path of the sbxsim executable.
	Self string
}

// exitCode is an error that ends the command with a given status, its message (if any)
// already printed.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// DefaultStateDir is where sandboxes are recorded unless SBXSIM_STATE says otherwise.
const DefaultStateDir = "/var/lib/sbxsim"

// cli is one invocation: its environment and the manager of its state directory.
type cli struct {
	env Env
	m   *Manager
	// noInput is the global --no-input (sbx ≥ 0.55): never prompt.
	noInput bool
	// cloud is the global --cloud (sbx ≥ 0.45): the verbs act on cloud sandboxes
	// (cloud.go).
	cloud bool
}

// docker reports whether new sandboxes get their own dockerd (SBXSIM_DOCKER=0 opts out).
func (c *cli) docker() bool {
	v, _ := c.env.LookupEnv("SBXSIM_DOCKER")
	return v != "0"
}

type command struct {
	name, usage string
	// since is the first sbx version that has the verb ("" = every version played).
	since string
	root  bool // needs root (touches namespaces, mounts, processes)
	// needs says what the command needs first: the daemon (started, with its banner,
	// if it was stopped) and, for the sandbox verbs, a signed-in user.
	needs needs
	run   func(c *cli, ctx context.Context, args []string) error
}

type needs int

const (
	needsNothing needs = iota
	needsDaemon
	needsSignIn // and the daemon
)

func commands() []command {
	const root = true
	return []command{
		{"create", "create [--name N] [-q] [--cpus C] [-m M] [-t TEMPLATE] [--pull always|missing|never] AGENT [PATH[:ro] ...]", "", root, needsSignIn, (*cli).create},
		{"exec", "exec [-i] [-t] [-e K=V] [--env-file F] [-u USER] [-w DIR] SANDBOX [--] COMMAND [ARG...]", "", root, needsSignIn, (*cli).exec},
		{"ls", "ls [-q] [--json]", "", false, needsSignIn, (*cli).ls},
		{"stop", "stop SANDBOX [SANDBOX...]", "", root, needsSignIn, (*cli).stop},
		{"rm", "rm [-f] SANDBOX [SANDBOX...] | rm --all", "", root, needsSignIn, (*cli).rm},
		{"run", "run --name SANDBOX -d | run -d [--name N] AGENT [PATH...]", "", root, needsSignIn, (*cli).run},
		{"ports", "ports SANDBOX [--publish [[IP:]HOST:]PORT[/PROTO]]... [--unpublish SPEC]... [--json]", "", root, needsSignIn, (*cli).ports},
		{"cp", "cp SRC DST (one side SANDBOX:/abs/path)", "", root, needsSignIn, (*cli).cp},
		{"version", "version [--json]", "", false, needsDaemon, (*cli).version},
		{"daemon", "daemon start|stop|restart|status [--json] | daemon logs [--follow] [-n N]", "", root, needsNothing, (*cli).daemon},
		{"diagnose", "diagnose [--json | --output json]", "", false, needsNothing, (*cli).diagnose},
		{"settings", "settings get KEY [--json] | set KEY VALUE | unset KEY | list [--json]", "", false, needsDaemon, (*cli).settings},
		{"login", "login [--username ID --password-stdin]", "", false, needsNothing, (*cli).login},
		{"logout", "logout", "", root, needsNothing, (*cli).logout},
		{"port", "port ls|publish|unpublish SANDBOX [SPEC...] [--json | --format table|json|yaml]", V055, root, needsSignIn, (*cli).port},
		{"inspect", "inspect SANDBOX [--json | --format table|json|yaml]", V055, false, needsSignIn, (*cli).inspect},
		{"policy", "policy init|set-default PRESET | allow|deny network [--sandbox N] HOSTS | rm network --id ID|--resource R | ls [SANDBOX] | check network TARGET | log [SANDBOX] | inspect | reset [--json]", V055, root, needsDaemon, (*cli).policy},
		{"df", "df [--json] [-v]", V055, false, needsDaemon, (*cli).df},
	}
}

// V055 is the first sbx version with the global --no-input, port, inspect, policy, df,
// daemon logs, settings unset and --json, the preset prompt and rm's confirmation
// without a terminal (docs/sbxsim.md; no 0.54 was released).
const V055 = "0.55.0"

// Version is sbxsim's own version; the sbx behaviour it follows is that of SbxVersion.
const (
	Version    = "0.1.0"
	SbxVersion = "0.55.0"
)

// Main runs one sbxsim command line (without the program name) and returns the exit
// status. The hidden modes __init and __proxy are the sandbox's PID 1 and a port proxy.
func Main(ctx context.Context, args []string, env Env) int {
	if len(args) >= 1 && args[0] == "__init" {
		cfg, _ := env.LookupEnv(initConfigEnv)
		return RunInit(cfg)
	}
	if len(args) >= 2 && args[0] == "__proxy" {
		return RunProxy(args[1])
	}
	if len(args) >= 3 && args[0] == "__egress" {
		return RunEgress(args[1], args[2])
	}
	if len(args) >= 1 && args[0] == "__autostop" {
		return RunAutoStop(args[1:], env.Self)
	}
	if len(args) >= 1 && args[0] == "__share" {
		return RunShare(args[1:])
	}
	if len(args) >= 1 && args[0] == "__tlsproxy" {
		return RunTLSProxy(args[1:])
	}
	if len(args) >= 1 && args[0] == "__cloudttl" {
		return RunCloudTTL(args[1:], env.Self)
	}
	if len(args) >= 1 && args[0] == "__userns" {
		return RunUserns()
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "--help" || args[0] == "-h" {
		usage(env.Stdout)
		return 0
	}
	root := DefaultStateDir
	if v, ok := env.LookupEnv("SBXSIM_STATE"); ok && v != "" {
		root = v
	}
	c := &cli{env: env, m: &Manager{Store: Store{Root: root}, Self: env.Self, Stderr: env.Stderr}}
	args, err := c.globalFlags(args)
	if err != nil {
		fmt.Fprintf(env.Stderr, "ERROR: %v\n", err)
		return 1
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "--help" || args[0] == "-h" {
		usage(env.Stdout)
		return 0
	}
	cmds := commands()
	if c.cloud {
		cmds = cloudCommands(cmds)
	}
	for _, cmd := range cmds {
		if cmd.name != args[0] || cmd.since != "" && !c.atLeast(cmd.since) {
			continue
		}
		if len(args) > 1 && (args[1] == "--help" || args[1] == "-h") {
			fmt.Fprintf(env.Stdout, "Usage: sbx %s\n", cmd.usage)
			return 0
		}
		if cmd.root && os.Geteuid() != 0 {
			fmt.Fprintf(env.Stderr, "ERROR: sbxsim %s needs root: it creates namespaces, mounts and veth pairs\n", cmd.name)
			return 1
		}
		if c.hangs(cmd.name) {
			// A stalled token-refresh lock: the command waits before doing anything,
			// until killed (a ticker, not a bare receive: the runtime would call a
			// goroutine blocked on nothing a deadlock).
			tick := time.NewTicker(time.Hour)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return 1
				case <-tick.C:
				}
			}
		}
		err := c.syncOrgPolicy()
		if err == nil {
			err = c.prepare(cmd)
		}
		if err == nil {
			err = cmd.run(c, ctx, args[1:])
		}
		var code exitCode
		switch {
		case err == nil:
			return 0
		case errors.As(err, &code):
			return int(code)
		default:
			fmt.Fprintf(env.Stderr, "ERROR: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(env.Stderr, "ERROR: unknown command %q for \"sbx\"\n", args[0])
	return 1
}

// globalFlags takes sbx's global flags off the front of args: -D/--debug, and
// --no-input where the played version has it (an older one refuses it as cobra does).
func (c *cli) globalFlags(args []string) ([]string, error) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" {
		switch args[0] {
		case "-D", "--debug":
		case "--cloud":
			if !c.atLeast(cloudSince) {
				return nil, errors.New("unknown flag: --cloud")
			}
			c.cloud = true
		case "--no-input":
			if !c.atLeast(V055) {
				return nil, errors.New("unknown flag: --no-input")
			}
			c.noInput = true
		default:
			return nil, fmt.Errorf("unknown flag: %s", args[0])
		}
		args = args[1:]
	}
	return args, nil
}

// hangs reports whether SBXSIM_HANG names the verb (or is "all").
func (c *cli) hangs(verb string) bool {
	v, _ := c.env.LookupEnv("SBXSIM_HANG")
	for _, h := range strings.Split(v, ",") {
		if h = strings.TrimSpace(h); h == "all" || h == verb {
			return true
		}
	}
	return false
}

// interactive reports whether a prompt may be shown: no --no-input and a terminal on
// stdin.
func (c *cli) interactive() bool {
	return !c.noInput && c.env.Stdin != nil && term.IsTerminal(int(c.env.Stdin.Fd()))
}

// prepare starts the daemon if the command needs it (printing sbx's banner on stdout)
// and refuses a sandbox verb when signed out.
func (c *cli) prepare(cmd command) error {
	if cmd.needs == needsNothing {
		return nil
	}
	if err := c.m.Store.startDaemon(c.env.Stdout); err != nil {
		return err
	}
	if cmd.needs == needsSignIn && !c.m.Store.signedIn() {
		return errSignedOut(cmd.name)
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "sbxsim %s: a Linux simulator of the Docker Sandboxes CLI (sbx %s by default), for tests.\n"+
		"Not a security boundary. Needs root. The environment of each command may set:\n"+
		"  SBXSIM_STATE=DIR            the state directory (default %s)\n"+
		"  SBXSIM_VERSION=X.Y.Z        the sbx version played, 0.42 ... 0.55: its verbs and flags only\n"+
		"  SBXSIM_SERVER_VERSION=X.Y.Z the daemon's version (default: SBXSIM_VERSION)\n"+
		"  SBXSIM_DOCKER=0             new sandboxes get no dockerd\n"+
		"  SBXSIM_HIDE=DIR[:DIR...]    more host directories hidden in new sandboxes\n"+
		"  SBXSIM_COMPOSE_PLUGIN=FILE|none  the docker compose plugin of new sandboxes\n"+
		"  SBXSIM_AUTOSTOP=DURATION    a sandbox stops this long after its last session (default 30s; off)\n"+
		"  SBXSIM_SHARE=fuse           new sandboxes get their workspaces over a virtiofs-shaped FUSE\n"+
		"                              share served by a host process (default off: bind mounts);\n"+
		"                              no O_TMPFILE there (EOPNOTSUPP), as over a Mac's share\n"+
		"  SBXSIM_SHARE_CACHE=none|auto|always  the share's cache, as virtiofsd's (default auto)\n"+
		"  SBXSIM_SHARE_LATENCY=DURATION  added to each share operation (default 100us)\n"+
		"  SBXSIM_RESOLVE=NAME=IP:PORT[,...]  test hosts, recorded at create: NAME resolves in the\n"+
		"                              sandbox, and a connection to NAME (any port) reaches IP:PORT\n"+
		"                              through the egress proxy, if the network policy allows NAME:port\n"+
		"  SBXSIM_ORG_POLICY=on|off|HOST[,HOST...]  org governance (recorded): local allow rules and\n"+
		"                              the preset inactive, HOSTs the org's allow rules; off ends it\n"+
		"  SBXSIM_HANG=VERB[,VERB...]|all  those verbs hang until killed (a stalled token refresh)\n"+
		"  SBXSIM_CREATE_DELAY=DURATION    create (and a creating run) wait this long first\n"+
		"  SBXSIM_DISK_MIN_GB=N        diagnose fails its disk check under N GB free (default 2)\n"+
		"  SBXSIM_VIRT=off             diagnose reports no virtualization\n"+
		cloudKnobs+
		"  SBXSIM_INIT_CONFIG          internal: how sbxsim hands a sandbox's init its configuration\n"+
		"Every TCP connection out of a sandbox goes through sbxsim's egress proxy and the policy\n"+
		"(sbx policy ...); UDP and ICMP out are rejected. See docs/sbxsim.md.\n\nUsage:\n",
		Version, SbxVersion, DefaultStateDir)
	for _, c := range commands() {
		since := ""
		if c.since != "" {
			since = "   (sbx >= " + c.since + ")"
		}
		fmt.Fprintf(w, "  sbx %s%s\n", c.usage, since)
	}
	fmt.Fprintf(w, "Global flags: -D/--debug, --no-input (sbx >= %s: never prompt; fail naming the command to run),\n"+
		"  --cloud (sbx >= %s: cloud sandboxes, see below)\n", V055, cloudSince)
	cloudUsage(w)
}

// argCount checks a command's positional arguments the way cobra words it.
func argCount(cmd string, args []string, min int) error {
	if len(args) < min {
		return fmt.Errorf("\"sbx %s\" requires at least %d argument%s", cmd, min, plural(min))
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// forEachName runs f on every named sandbox, reporting each failure and going on; the
// status is 1 if any failed.
func (c *cli) forEachName(names []string, f func(string) error) error {
	failed := false
	for _, n := range names {
		if err := f(n); err != nil {
			fmt.Fprintf(c.env.Stderr, "ERROR: %v\n", err)
			failed = true
		}
	}
	if failed {
		return exitCode(1)
	}
	return nil
}

// lines joins lines for table cells.
func lines(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	return strings.Join(ss, ",")
}
