package deploy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

// Check is one audit check's verdict and the evidence it rests on.
type Check struct {
	Name     string
	OK       bool
	Warning  string // set on a pass that deserves attention (explicit passthrough)
	Evidence string
}

// Report is a docker_verify audit.
type Report struct {
	Sandbox string
	Checks  []Check
}

// Passed reports whether every check passed.
func (r Report) Passed() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return len(r.Checks) > 0
}

// Failed names the checks that failed.
func (r Report) Failed() []string {
	var out []string
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c.Name)
		}
	}
	return out
}

func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Isolation audit of sandbox %s\n", r.Sandbox)
	for _, c := range r.Checks {
		verdict := "PASS"
		if !c.OK {
			verdict = "FAIL"
		} else if c.Warning != "" {
			verdict = "PASS (warning)"
		}
		fmt.Fprintf(&b, "%-15s %s\n    %s\n", c.Name, verdict, strings.ReplaceAll(c.Evidence, "\n", "\n    "))
		if c.Warning != "" {
			fmt.Fprintf(&b, "    warning: %s\n", c.Warning)
		}
	}
	if r.Passed() {
		fmt.Fprintf(&b, "All %d checks passed.", len(r.Checks))
	} else {
		fmt.Fprintf(&b, "FAILED: %s. Treat the sandbox as compromised: remove it (docker_sandbox_rm).", strings.Join(r.Failed(), ", "))
	}
	return b.String()
}

// withoutGlobals drops the global flags sbx takes before its verb (--no-input, from
// v0.55): the verb and its arguments are what the transport check judges.
func withoutGlobals(argv string) string {
	for {
		trimmed := argv
		for _, f := range sbx.Globals {
			if f.Value {
				continue // none today; one with a value would need its value dropped too
			}
			trimmed = strings.TrimPrefix(trimmed, "--"+f.Long+" ")
			if f.Short != "" {
				trimmed = strings.TrimPrefix(trimmed, "-"+f.Short+" ")
			}
		}
		if trimmed == argv {
			return argv
		}
		argv = trimmed
	}
}

// CheckNames are the audit's checks, in order.
var CheckNames = []string{"transport", "env scrub", "env forwarding", "daemon pinning", "mounts", "contexts", "host socket", "port binds", "ssh agent", "containers", networkCheck}

func (d *Deployer) verifyTool(ctx context.Context, _ json.RawMessage) (string, error) {
	r, err := d.Verify(ctx)
	if err != nil {
		return "", err
	}
	if !r.Passed() {
		return r.String(), fmt.Errorf("isolation audit failed")
	}
	return r.String(), nil
}

// Verify runs the live isolation audit: eleven runtime probes of the sandbox and of how
// this process reaches it, each with its evidence. An error means the audit could not
// run at all (no sandbox).
func (d *Deployer) Verify(ctx context.Context) (Report, error) {
	name, err := d.sandbox(ctx)
	if err != nil {
		return Report{}, err
	}
	r := Report{Sandbox: name}
	for _, probe := range []func(context.Context, string) Check{
		d.checkTransport, d.checkEnvScrub, d.checkEnvForwarding, d.checkPinning,
		d.checkMounts, d.checkContexts, d.checkHostSocket, d.checkPortBinds, d.checkSSHAgent,
		d.checkContainers, d.checkNetwork,
	} {
		r.Checks = append(r.Checks, probe(ctx, name))
	}
	return r, nil
}

func fail(name, format string, args ...any) Check {
	return Check{Name: name, Evidence: fmt.Sprintf(format, args...)}
}

func pass(name, format string, args ...any) Check {
	return Check{Name: name, OK: true, Evidence: fmt.Sprintf(format, args...)}
}

func nonce() string {
	b := make([]byte, 6)
	rand.Read(b)
	return strings.ToUpper(hex.EncodeToString(b))
}

// recorder notes every process the sbx client starts.
type recorder struct {
	sbx.Runner
	mu    sync.Mutex
	calls []string
	bins  []string
}

func (r *recorder) Start(ctx context.Context, bin string, c sbx.Cmd) (sbx.Process, error) {
	r.mu.Lock()
	r.bins = append(r.bins, bin)
	r.calls = append(r.calls, strings.Join(c.Args, " "))
	r.mu.Unlock()
	return r.Runner.Start(ctx, bin, c)
}

// checkTransport runs a docker call the way every tool does and observes (1) which
// program was started with which argv — it must be the sbx program, as `exec SANDBOX --
// docker -H unix:///var/run/docker.sock` — and (2) where the command ran: not in this
// process's mount namespace (it would be the host).
func (d *Deployer) checkTransport(ctx context.Context, name string) Check {
	const n = "transport"
	rec := &recorder{Runner: d.Sbx.Runner}
	c := d.Sbx.Clone()
	c.Runner = rec
	o, err := d.execIn(ctx, c, name, ShortTimeout, nil, nil, append(d.dockerPrefix(), "version", "--format", "{{.Server.Version}}")...)
	if err != nil || o.code != 0 {
		return fail(n, "docker version through sbx exec failed: %v %s", err, o.text())
	}
	// The sbx program the host environment names, resolved as the session resolved its
	// own (PATH lookup, symlinks).
	bin := d.Settings.SbxBin // the program the settings name, as the user would run it
	if bin == "" {
		bin = "sbx"
	}
	ref := &sbx.Client{Bin: bin}
	ref.ResolveBin()
	want := resolved(ref.Bin)
	for i, bin := range rec.bins {
		if resolved(bin) != want {
			return fail(n, "started %q (argv %q), not the sbx program %q", bin, rec.calls[i], want)
		}
		argv := withoutGlobals(rec.calls[i])
		if argv == "version" || strings.HasPrefix(argv, "version ") || argv == "exec "+name+" -- true" {
			continue // the door's liveness probe beside a slow call: the same sbx, no docker
		}
		if !strings.HasPrefix(argv, "exec ") || !strings.Contains(argv, " "+name+" -- docker ") {
			return fail(n, "sbx was started as %q, not exec %s -- docker …", rec.calls[i], name)
		}
	}
	if len(rec.bins) == 0 {
		return fail(n, "no process was started for a docker call")
	}
	id, err := d.execIn(ctx, d.Sbx, name, ShortTimeout, nil, nil, "sh", "-c", "hostname; readlink /proc/self/ns/mnt || echo none")
	if err != nil || id.code != 0 {
		return fail(n, "identity probe failed: %v %s", err, id.text())
	}
	lines := strings.Split(strings.TrimSpace(id.stdout), "\n")
	hostNS, _ := os.Readlink("/proc/self/ns/mnt")
	hostName, _ := os.Hostname()
	if len(lines) == 2 && hostNS != "" && lines[1] == hostNS {
		return fail(n, "the command ran in the host's mount namespace %s (hostname %s): not in the sandbox", hostNS, lines[0])
	}
	return pass(n, "%d process(es) started, each `%s exec %s -- docker …`; engine %s answered; the command ran on host %q in mount namespace %s (this process: %q, %s)",
		len(rec.bins), filepath.Base(want), name, strings.TrimSpace(o.stdout), first(lines, 0), first(lines, 1), hostName, orNA(hostNS))
}

// resolved is an absolute program path with its symlinks resolved (as given otherwise).
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil && filepath.IsAbs(r) {
		return r
	}
	return p
}

func first(l []string, i int) string {
	if i < len(l) {
		return l[i]
	}
	return "?"
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// dockerPrefix is how every docker call starts.
func (d *Deployer) dockerPrefix() []string {
	if d.unpinned {
		return []string{"docker"}
	}
	return []string{"docker", "-H", Pin}
}

// envInside runs env in the sandbox through a client whose sbx process gets hostEnv and
// with vmEnv forwarded as -e flags, and returns the variable names seen inside.
func (d *Deployer) envInside(ctx context.Context, name string, hostEnv, vmEnv []string) ([]string, error) {
	c := d.Sbx.Clone()
	c.Env = hostEnv
	o, err := d.execIn(ctx, c, name, ShortTimeout, vmEnv, nil, "env")
	if err != nil {
		return nil, err
	}
	if o.code != 0 {
		return nil, o.err("env")
	}
	var names []string
	for _, line := range strings.Split(o.stdout, "\n") {
		if k, _, ok := strings.Cut(line, "="); ok && envNameRE.MatchString(k) {
			names = append(names, k)
		}
	}
	return names, nil
}

func isDockerVar(name string) bool {
	return strings.HasPrefix(name, "DOCKER_") || strings.HasPrefix(name, "COMPOSE_")
}

func dockerVars(names []string) []string {
	var out []string
	for _, n := range names {
		if isDockerVar(n) {
			out = append(out, n)
		}
	}
	return out
}

func withoutDockerVars(kvs []string) []string {
	var out []string
	for _, kv := range kvs {
		if k, _, _ := strings.Cut(kv, "="); !isDockerVar(k) {
			out = append(out, kv)
		}
	}
	return out
}

func envNames(kvs []string) []string {
	var out []string
	for _, kv := range kvs {
		k, _, _ := strings.Cut(kv, "=")
		out = append(out, k)
	}
	return out
}

// checkEnvScrub injects sentinel DOCKER_*/COMPOSE_* variables into (a copy of) the host
// environment, passes it through the session's env policy as every sbx call does, and
// asserts they reach neither the sbx process nor the sandbox.
func (d *Deployer) checkEnvScrub(ctx context.Context, name string) Check {
	const n = "env scrub"
	tag := nonce()
	sentinels := []string{"DOCKER_HOST_SENTINEL_" + tag + "=unix:///tmp/decoy.sock", "COMPOSE_SENTINEL_" + tag + "=1"}
	environ := append(append([]string{}, d.Settings.Environ...), sentinels...)
	hostEnv, vmEnv := d.Policy.HostEnv(environ), d.Policy.VMEnv(environ)
	if leak := dockerVars(envNames(hostEnv)); len(leak) > 0 {
		return fail(n, "the sbx process would get %s", strings.Join(leak, ", "))
	}
	if leak := dockerVars(envNames(vmEnv)); len(leak) > 0 {
		return fail(n, "forwarded into the sandbox: %s", strings.Join(leak, ", "))
	}
	inside, err := d.envInside(ctx, name, hostEnv, vmEnv)
	if err != nil {
		return fail(n, "env probe failed: %v", err)
	}
	if leak := dockerVars(inside); len(leak) > 0 {
		return fail(n, "inside the sandbox: %s", strings.Join(leak, ", "))
	}
	host := dockerVars(envNames(d.Settings.Environ))
	return pass(n, "sentinels DOCKER_HOST_SENTINEL_%s and COMPOSE_SENTINEL_%s injected into the host environment reached neither sbx nor the sandbox; %d variables inside, none DOCKER_*/COMPOSE_* (the host has %d: %s)",
		tag, tag, len(inside), len(host), strings.Join(host, " "))
}

// checkEnvForwarding reports the forwarding mode and, unless passthrough was chosen,
// asserts that a variable outside the allowlist does not reach the sandbox.
func (d *Deployer) checkEnvForwarding(ctx context.Context, name string) Check {
	const n = "env forwarding"
	mode := envMode(d.Settings.Policy)
	probe := "SBX_VERIFY_PROBE_" + nonce()
	environ := append(append([]string{}, d.Settings.Environ...), probe+"=must-not-cross")
	hostEnv, vmEnv := d.Policy.HostEnv(environ), withoutDockerVars(d.Policy.VMEnv(environ)) // docker ones: env scrub's
	inside, err := d.envInside(ctx, name, withoutDockerVars(hostEnv), vmEnv)
	if err != nil {
		return fail(n, "env probe failed: %v", err)
	}
	forwarded := envNames(d.Policy.VMEnv(d.Settings.Environ))
	sort.Strings(forwarded)
	crossed := false
	for _, k := range inside {
		crossed = crossed || k == probe
	}
	if strings.HasPrefix(mode, "passthrough") {
		c := pass(n, "mode %s; %d variables forwarded (%s); probe %s crossed: %v", mode, len(forwarded), strings.Join(forwarded, " "), probe, crossed)
		c.Warning = "DOCKER_SANDBOX_ENV_PASSTHROUGH=1 forwards the whole host environment (but docker/compose and host-describing variables) into the sandbox"
		return c
	}
	if crossed {
		return fail(n, "mode %s, yet the non-allowlisted probe %s reached the sandbox", mode, probe)
	}
	return pass(n, "mode %s; forwarded by name: %s; the non-allowlisted probe %s did not cross", mode, orNone(forwarded), probe)
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, " ")
}

// envMode names the forwarding mode the settings ask for.
func envMode(p sbx.EnvPolicy) string {
	switch {
	case p.Passthrough:
		return "passthrough (explicit)"
	case len(p.Allow) > 0:
		return "allowlist (" + strings.Join(p.Allow, ",") + ")"
	}
	return "strict (default)"
}

// checkPinning runs docker the way every tool does inside a hostile environment
// (DOCKER_HOST and DOCKER_CONTEXT pointing elsewhere) and asserts it still reaches the
// sandbox's own daemon — the one on its /var/run/docker.sock.
func (d *Deployer) checkPinning(ctx context.Context, name string) Check {
	const n = "daemon pinning"
	// The hostile variables are set inside the sandbox (sbx never forwards docker
	// variables), right before the same docker argv every tool uses.
	hostile := `DOCKER_HOST=tcp://127.0.0.1:9 DOCKER_CONTEXT=pi-sbx-verify-hostile exec "$@"`
	o, err := d.execIn(ctx, d.Sbx, name, ShortTimeout, nil, nil, append([]string{"sh", "-c", hostile, "pi-sbx-verify"}, append(d.dockerPrefix(), "info", "--format", "{{.ID}}")...)...)
	if err != nil {
		return fail(n, "probe failed: %v", err)
	}
	if o.code != 0 || strings.TrimSpace(o.stdout) == "" {
		return fail(n, "with DOCKER_HOST=tcp://127.0.0.1:9 in the sandbox the tools' docker call did not reach the sandbox daemon: %s", o.text())
	}
	ref, err := d.execIn(ctx, d.Sbx, name, ShortTimeout, nil, nil, "docker", "-H", Pin, "info", "--format", "{{.ID}}")
	if err != nil || ref.code != 0 {
		return fail(n, "reference probe failed: %v %s", err, ref.text())
	}
	got, want := strings.TrimSpace(o.stdout), strings.TrimSpace(ref.stdout)
	if got != want {
		return fail(n, "the tools reached daemon %s, the sandbox's socket serves %s", got, want)
	}
	return pass(n, "with DOCKER_HOST and DOCKER_CONTEXT set to elsewhere inside the sandbox, the tools' docker call (-H %s) reached daemon %s, the one on the sandbox's own socket", Pin, got)
}

// sensitive are host paths below HOME that must not be visible in the sandbox, probed
// even when the host has none of them.
var sensitive = []string{".docker", ".ssh", ".aws", ".kube", ".config", ".gnupg", ".netrc", ".gitconfig", ".agent"}

// fingerprintScript prints, for each path, "-" when it does not exist, "d NAMES" for a
// directory (its sorted entry names) and "f SIZE" for anything else.
const fingerprintScript = `for p; do if [ ! -e "$p" ]; then echo -; elif [ -d "$p" ]; then printf 'd %s\n' "$(ls -A "$p" | LC_ALL=C sort | tr '\n' '/')"; else echo "f $(wc -c < "$p" | tr -d ' ')"; fi; done`

// hostFingerprint is fingerprintScript's line for a host path ("" when it tells nothing:
// missing, an empty directory, an empty file).
func hostFingerprint(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	if fi.IsDir() {
		ents, err := os.ReadDir(p)
		if err != nil || len(ents) == 0 {
			return ""
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		return "d " + strings.Join(names, "/") + "/"
	}
	if fi.Size() == 0 {
		return ""
	}
	return fmt.Sprintf("f %d", fi.Size())
}

// checkMounts looks from inside the sandbox at the host user's home: the host's entries
// there (and the usual secrets) must not be visible with the host's content. A path that
// exists inside but differs from the host's is the sandbox's own (its HOME may be the same
// path); the way to a workspace under HOME is expected.
func (d *Deployer) checkMounts(ctx context.Context, name string) Check {
	const n = "mounts"
	home := d.Settings.Home
	if home == "" || !filepath.IsAbs(home) {
		return fail(n, "the host HOME is unknown: cannot tell what the sandbox sees of it")
	}
	skip := map[string]bool{}
	if within(home, d.Workspace) && d.Workspace != home {
		rel, _ := filepath.Rel(home, d.Workspace)
		skip[strings.Split(rel, string(filepath.Separator))[0]] = true
	}
	names := append([]string{}, sensitive...)
	if ents, err := os.ReadDir(home); err == nil {
		for i, e := range ents {
			if i >= 256 {
				break
			}
			names = append(names, e.Name())
		}
	}
	seen := map[string]bool{}
	var paths, want []string
	for _, e := range names {
		if skip[e] || seen[e] {
			continue
		}
		seen[e] = true
		p := filepath.Join(home, e)
		paths = append(paths, p)
		want = append(want, hostFingerprint(p))
	}
	paths = append(paths, home)
	want = append(want, "") // HOME itself: shown for the evidence
	o, err := d.execIn(ctx, d.Sbx, name, ShortTimeout, nil, nil, append([]string{"sh", "-c", fingerprintScript, "pi-sbx-verify"}, paths...)...)
	if err != nil || o.code != 0 {
		return fail(n, "probe failed: %v %s", err, o.text())
	}
	got := strings.Split(strings.TrimRight(o.stdout, "\n"), "\n")
	if len(got) != len(paths) {
		return fail(n, "probe printed %d lines for %d paths", len(got), len(paths))
	}
	var leaked, own []string
	for i, p := range paths[:len(paths)-1] {
		switch {
		case got[i] == "-":
		case want[i] != "" && got[i] == want[i]:
			leaked = append(leaked, p)
		default:
			own = append(own, filepath.Base(p))
		}
	}
	if len(leaked) > 0 {
		return fail(n, "the host's own files are visible in the sandbox: %s", strings.Join(leaked, ", "))
	}
	ev := fmt.Sprintf("probed %d host paths under %s (its entries and %s): none visible with the host's content", len(paths)-1, home, strings.Join(sensitive, " "))
	if len(own) > 0 {
		ev += fmt.Sprintf("; the sandbox has its own %s (content differs from the host's)", strings.Join(own, ", "))
	}
	return pass(n, "%s", ev)
}

// checkContexts lists the docker contexts inside the sandbox: only "default", pointing at
// the sandbox's own socket.
func (d *Deployer) checkContexts(ctx context.Context, name string) Check {
	const n = "contexts"
	o, err := d.execIn(ctx, d.Sbx, name, ShortTimeout, nil, nil, "docker", "context", "ls", "--format", "{{.Name}} {{.DockerEndpoint}}")
	if err != nil || o.code != 0 {
		return fail(n, "docker context ls failed: %v %s", err, o.text())
	}
	var ctxs []string
	bad := false
	for _, line := range strings.Split(strings.TrimSpace(o.stdout), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		ctxs = append(ctxs, line)
		f := strings.Fields(line)
		if len(f) != 2 || strings.TrimSuffix(f[0], " *") != "default" || f[1] != Pin {
			bad = true
		}
	}
	if bad || len(ctxs) == 0 {
		return fail(n, "docker contexts in the sandbox: %s", strings.Join(ctxs, "; "))
	}
	return pass(n, "the only docker context in the sandbox is %s", strings.Join(ctxs, "; "))
}

// hostSockets are where a host Docker daemon's socket may be: the host's DOCKER_HOST,
// Docker Desktop's, rootless docker's.
func (d *Deployer) hostSockets() []string {
	var out []string
	if p, ok := strings.CutPrefix(d.Settings.DockerHost, "unix://"); ok && filepath.IsAbs(p) {
		out = append(out, filepath.Clean(p))
	}
	if d.Settings.Home != "" {
		out = append(out, filepath.Join(d.Settings.Home, ".docker/run/docker.sock"), filepath.Join(d.Settings.Home, ".docker/desktop/docker.sock"))
	}
	if runtime := d.Settings.RuntimeDir; filepath.IsAbs(runtime) {
		out = append(out, filepath.Join(runtime, "docker.sock"))
	}
	return out
}

// checkHostSocket asserts that no host daemon socket path exists inside the sandbox. The
// sandbox's own /var/run/docker.sock is the daemon the pinning check identifies.
func (d *Deployer) checkHostSocket(ctx context.Context, name string) Check {
	const n = "host socket"
	socks := d.hostSockets()
	if len(socks) == 0 {
		return fail(n, "no host socket path to probe (HOME unknown)")
	}
	script := `for p; do [ -e "$p" ] && echo "$p"; done; true`
	o, err := d.execIn(ctx, d.Sbx, name, ShortTimeout, nil, nil, append([]string{"sh", "-c", script, "pi-sbx-verify"}, socks...)...)
	if err != nil || o.code != 0 {
		return fail(n, "probe failed: %v %s", err, o.text())
	}
	if found := strings.Fields(o.stdout); len(found) > 0 {
		return fail(n, "host Docker socket path(s) exist in the sandbox: %s", strings.Join(found, ", "))
	}
	return pass(n, "absent in the sandbox: %s (its /var/run/docker.sock is its own daemon: see daemon pinning)", strings.Join(socks, ", "))
}

// checkPortBinds asks sbx for the sandbox's published ports: each must listen on host
// loopback only, and a connection to it on a non-loopback host address must fail.
func (d *Deployer) checkPortBinds(ctx context.Context, name string) Check {
	const n = "port binds"
	list, err := d.Sbx.ListPorts(ctx, name)
	if err != nil {
		return fail(n, "sbx ports failed: %v", err)
	}
	if len(list) == 0 {
		return pass(n, "sbx ports lists no published ports")
	}
	var specs, bad []string
	for _, m := range list {
		specs = append(specs, fmt.Sprintf("%s:%d->%d/%s", m.HostIP, m.HostPort, m.SandboxPort, m.Protocol))
		if !m.Loopback() {
			bad = append(bad, fmt.Sprintf("%s:%d", m.HostIP, m.HostPort))
		}
	}
	if len(bad) > 0 {
		return fail(n, "published beyond loopback: %s (all: %s)", strings.Join(bad, ", "), strings.Join(specs, ", "))
	}
	ev, reachable := probeNonLoopback(ctx, list)
	if len(reachable) > 0 {
		return fail(n, "reachable on a non-loopback host address: %s (all: %s)", strings.Join(reachable, ", "), strings.Join(specs, ", "))
	}
	return pass(n, "all on loopback: %s; %s", strings.Join(specs, ", "), ev)
}

// sshAgentSockets are where a forwarded SSH agent shows in a sandbox: sbx's (and Docker
// Desktop's) host-services socket, and OpenSSH's usual agent sockets.
var sshAgentSockets = []string{"/run/host-services/ssh-auth.sock", "/tmp/ssh-*/agent.*", "$HOME/.ssh/agent*"}

// checkSSHAgent looks for credentials the host lends the sandbox: SSH_AUTH_SOCK and any
// SSH agent socket inside. Real sbx forwards the SSH agent by default
// (ssh.agentForwardingEnabled): any process in the sandbox can then ask it to sign —
// use the user's keys, never read them. That is reported as a warning, with the
// setting that turns it off; a socket while the setting says off is a failure.
func (d *Deployer) checkSSHAgent(ctx context.Context, name string) Check {
	const n = "ssh agent"
	script := `echo "SSH_AUTH_SOCK=${SSH_AUTH_SOCK:-}"; for p in "${SSH_AUTH_SOCK:-/nonexistent}" ` +
		strings.Join(sshAgentSockets, " ") + `; do [ -S "$p" ] && echo "socket $p"; done; true`
	o, err := d.execIn(ctx, d.Sbx, name, ShortTimeout, nil, nil, "sh", "-c", script)
	if err != nil || o.code != 0 {
		return fail(n, "probe failed: %v %s", err, o.text())
	}
	var env string
	var socks []string
	for _, l := range strings.Split(strings.TrimSpace(o.stdout), "\n") {
		if v, ok := strings.CutPrefix(l, "socket "); ok && !slices.Contains(socks, v) {
			socks = append(socks, v)
		} else if strings.HasPrefix(l, "SSH_AUTH_SOCK=") {
			env = l
		}
	}
	setting, serr := d.Sbx.Setting(ctx, "ssh.agentForwardingEnabled")
	on := serr != nil || setting != "false" // unreadable: sbx's default, on
	settingEv := "ssh.agentForwardingEnabled=" + setting
	if serr != nil {
		settingEv = "ssh.agentForwardingEnabled unreadable (" + serr.Error() + "): sbx's default is on"
	}
	ev := fmt.Sprintf("inside: %s; agent sockets: %s; %s", env, orNone(socks), settingEv)
	const off = "sbx settings set ssh.agentForwardingEnabled false (then recreate the sandbox)"
	switch {
	case len(socks) > 0 && !on:
		return fail(n, "an SSH agent is reachable although forwarding is off: %s", ev)
	case len(socks) > 0:
		c := pass(n, "%s", ev)
		c.Warning = "any process in the sandbox can ask your SSH agent to sign with your keys (it cannot read them); turn it off: " + off
		return c
	case on:
		c := pass(n, "%s", ev)
		c.Warning = "sbx forwards the SSH agent into sandboxes (no agent socket reachable right now); turn it off: " + off
		return c
	}
	return pass(n, "%s", ev)
}
