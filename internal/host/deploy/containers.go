package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/pi-sbx/pi-sbx-backend/internal/host/sbx"
)

var (
	envKVRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	memoryRE  = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?[bkmgBKMG]?$`)
	idRE      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
)

// stringList accepts a string or a list of strings (the schema allows both).
func stringList(v any, split bool) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		if split {
			return splitCommand(v)
		}
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, refuse("list items must be strings")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, refuse("want a string or a list of strings")
}

// splitCommand splits a command line on blanks, honouring single and double quotes and
// backslash escapes (outside single quotes), as a shell would without expanding anything.
func splitCommand(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\' && i+1 < len(rs) && quote != '\'':
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, refuse("command %q: unterminated quote", s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

func checkImage(field, image string) error {
	if err := safeArg(field, image); err != nil {
		return err
	}
	if len(image) > 255 || !imageRE.MatchString(image) {
		return refuse("%s %q is not an image reference", field, image)
	}
	return nil
}

func checkID(id string) error {
	if err := safeArg("id", id); err != nil {
		return err
	}
	if len(id) > 128 || !idRE.MatchString(id) {
		return refuse("id %q is not a container name or ID", id)
	}
	return nil
}

type runArgs struct {
	Image   string   `json:"image"`
	Name    string   `json:"name"`
	Command any      `json:"command"`
	Detach  *bool    `json:"detach"`
	Rm      bool     `json:"rm"`
	Ports   []string `json:"ports"`
	Env     any      `json:"env"`
	Memory  string   `json:"memory"`
	Volumes []string `json:"volumes"`
	Network string   `json:"network"`
	Restart string   `json:"restart"`
	Workdir string   `json:"workdir"`
}

// runArgv validates docker_run's arguments and builds docker's argv. Every value goes
// in a --flag=value form or after the image, so no value can become a flag; env values
// are returned apart, to travel on stdin (values.go), and argv names them by envFileFlag.
func (d *Deployer) runArgv(a runArgs) (argv, values []string, ports []portSpec, detach bool, err error) {
	detach = a.Detach == nil || *a.Detach
	if err := checkImage("image", a.Image); err != nil {
		return nil, nil, nil, false, err
	}
	if a.Rm && detach {
		return nil, nil, nil, false, refuse("rm=true needs detach=false (a detached container with --rm leaves no logs to read)")
	}
	argv = []string{"run"}
	if detach {
		argv = append(argv, "--detach")
	}
	if a.Rm {
		argv = append(argv, "--rm")
	}
	if a.Name != "" {
		if err := safeArg("name", a.Name); err != nil || !nameRE.MatchString(a.Name) || len(a.Name) > 128 {
			return nil, nil, nil, false, refuse("name %q: want letters, digits, '_', '.', '-'", a.Name)
		}
		argv = append(argv, "--name="+a.Name)
	}
	var specs []string
	for _, s := range a.Ports {
		p, err := parsePort(s)
		if err != nil {
			return nil, nil, nil, false, err
		}
		ports = append(ports, p)
		specs = append(specs, p.String())
		argv = append(argv, "--publish="+p.dockerPublish())
	}
	argv = append(argv, "--label="+Label+"=true")
	if len(specs) > 0 {
		argv = append(argv, "--label="+PortsLabel+"="+strings.Join(specs, ","))
	}
	env, err := stringList(a.Env, false)
	if err != nil {
		return nil, nil, nil, false, err
	}
	for _, kv := range env {
		if err := noControl("env", kv); err != nil {
			return nil, nil, nil, false, err
		}
		if !envKVRE.MatchString(kv) {
			return nil, nil, nil, false, refuse("env %q: want KEY=VALUE", kv)
		}
		values = append(values, kv)
	}
	if a.Memory != "" {
		if !memoryRE.MatchString(a.Memory) {
			return nil, nil, nil, false, refuse("memory %q: want a size like 256m", a.Memory)
		}
		argv = append(argv, "--memory="+a.Memory)
	}
	for _, v := range a.Volumes {
		mapped, err := d.volume(v)
		if err != nil {
			return nil, nil, nil, false, err
		}
		argv = append(argv, "--volume="+mapped)
	}
	switch a.Network {
	case "", "bridge", "host", "none":
		if a.Network != "" {
			argv = append(argv, "--network="+a.Network)
		}
	default:
		return nil, nil, nil, false, refuse("network %q: want bridge, host or none", a.Network)
	}
	restart := a.Restart
	if restart == "" && detach && !a.Rm {
		restart = "unless-stopped"
	}
	switch restart {
	case "", "no", "always", "unless-stopped", "on-failure":
		if restart != "" {
			argv = append(argv, "--restart="+restart)
		}
	default:
		return nil, nil, nil, false, refuse("restart %q", restart)
	}
	if a.Workdir != "" {
		if err := noControl("workdir", a.Workdir); err != nil {
			return nil, nil, nil, false, err
		}
		if !filepath.IsAbs(a.Workdir) {
			return nil, nil, nil, false, refuse("workdir %q must be absolute", a.Workdir)
		}
		argv = append(argv, "--workdir="+filepath.Clean(a.Workdir))
	}
	cmd, err := stringList(a.Command, true)
	if err != nil {
		return nil, nil, nil, false, err
	}
	for _, c := range cmd {
		if err := noControl("command", c); err != nil {
			return nil, nil, nil, false, err
		}
	}
	if len(values) > 0 {
		argv = append(argv, envFileFlag)
	}
	argv = append(argv, a.Image)
	return append(argv, cmd...), values, ports, detach, nil
}

func (d *Deployer) run(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode[runArgs](raw)
	if err != nil {
		return "", err
	}
	argv, values, ports, detach, err := d.runArgv(a)
	if err != nil {
		return "", err
	}
	name := a.Name
	if !detach && name == "" {
		// A foreground container needs a name: cancelling the call removes it.
		name = "pi-sbx-run-" + strings.ToLower(nonce())
		argv = append([]string{argv[0], "--name=" + name}, argv[1:]...)
	}
	release := func() {}
	var what, srcs []string
	var at []int
	for i, x := range argv {
		if v, ok := strings.CutPrefix(x, "--volume="); ok {
			src, _, _ := strings.Cut(v, ":")
			what, srcs, at = append(what, "volume"), append(srcs, src), append(at, i)
		}
	}
	if len(srcs) > 0 {
		// From the check in the sandbox until the container has started, nothing that
		// can write the workspace runs (hold.go).
		if release, err = d.holdWriters(ctx); err != nil {
			return "", err
		}
		defer release()
		real, err := d.confineIn(ctx, what, srcs)
		if err != nil {
			return "", err
		}
		for k, i := range at {
			argv[i] = "--volume=" + real[k] + strings.TrimPrefix(argv[i], "--volume="+srcs[k])
		}
	}
	timeout := ShortTimeout
	if !detach {
		timeout = LongTimeout
	}
	if !detach && len(srcs) > 0 {
		// A foreground run returns when the container exits: the hold ends once it has
		// started.
		done := make(chan struct{})
		defer close(done)
		go d.whenStarted(ctx, name, done, release)
	}
	o, err := d.dockerWithValues(ctx, timeout, values, argv...)
	release()
	if ctx.Err() != nil && !detach {
		// Cancelled: the container must not go on running.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShortTimeout)
		defer cancel()
		d.docker(rctx, ShortTimeout, "rm", "--force", name)
		return "", ctx.Err()
	}
	if err != nil {
		return "", err
	}
	if !detach {
		if o.code != 0 {
			return o.text(), fmt.Errorf("the container exited with status %d", o.code)
		}
		return o.text(), nil
	}
	if err := o.err("docker run"); err != nil {
		return "", err
	}
	id := strings.TrimSpace(lastLine(o.stdout))
	var b strings.Builder
	fmt.Fprintf(&b, "Started container %s from %s.\n", short(id), a.Image)
	if a.Name != "" {
		fmt.Fprintf(&b, "Name: %s\n", a.Name)
	}
	lines, perr := d.publishContainer(ctx, id, ports)
	b.WriteString(lines)
	return b.String(), perr
}

// portsHeader heads the per-port lines of publishContainer and compose's port listing.
const portsHeader = "Ports (reach them with docker_curl or any HTTP client on this host):\n"

// publishContainer publishes each of a running container's port specs on the host and
// returns one line per port.
func (d *Deployer) publishContainer(ctx context.Context, id string, ports []portSpec) (string, error) {
	if len(ports) == 0 {
		return "", nil
	}
	name, err := d.sandbox(ctx)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(portsHeader)
	var errs []error
	for _, p := range ports {
		sandboxPort := p.host
		if sandboxPort == 0 {
			o, err := d.dockerOK(ctx, ShortTimeout, "docker port", "port", id, fmt.Sprintf("%d/%s", p.container, p.proto))
			if err != nil {
				errs = append(errs, fmt.Errorf("port %s: %w", p, err))
				continue
			}
			if sandboxPort, err = parseDockerPort(o.stdout); err != nil {
				errs = append(errs, fmt.Errorf("port %s: %w", p, err))
				continue
			}
		}
		m, note, err := d.publish(ctx, name, p.host, sandboxPort, p.proto)
		if err != nil {
			errs = append(errs, fmt.Errorf("port %s: %w", p, err))
			continue
		}
		d.remember(id, m)
		fmt.Fprintf(&b, "  %d/%s -> %s  (host %s:%d, sandbox port %d)\n", p.container, p.proto, url(m), m.HostIP, m.HostPort, m.SandboxPort)
		if note != "" {
			fmt.Fprintf(&b, "    note: %s\n", note)
		}
	}
	return b.String(), errors.Join(errs...)
}

// parseDockerPort reads the sandbox port from `docker port` (0.0.0.0:32768, [::]:32768).
func parseDockerPort(s string) (int, error) {
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		i := strings.LastIndexByte(line, ':')
		if i < 0 {
			continue
		}
		if n, err := portNumber(strings.TrimSpace(line[i+1:])); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("docker port printed no port: %q", s)
}

func (d *Deployer) remember(id string, m sbx.Published) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.published[id] = append(d.published[id], m)
}

func (d *Deployer) forget(id string) []sbx.Published {
	d.mu.Lock()
	defer d.mu.Unlock()
	ms := d.published[id]
	delete(d.published, id)
	return ms
}

// container is what stop/start/rm need to know of a container.
type container struct {
	id string
	// live are the sandbox ports it binds now (a stopped container binds none, and the
	// port it was given may be another container's since).
	live map[int]string
	// mine are the host mappings this session published for it.
	mine  []sbx.Published
	specs []portSpec // its docker_run port specs (label)
}

// owns reports whether mapping m forwards to c: one this session made for it, or one
// to a sandbox port it binds now.
func (c container) owns(m sbx.Published) bool {
	for _, x := range c.mine {
		if x.HostPort == m.HostPort && x.SandboxPort == m.SandboxPort && sameFamily(m.Protocol, strings.TrimRight(x.Protocol, "46")) {
			return true
		}
	}
	proto, ok := c.live[m.SandboxPort]
	return ok && sameFamily(m.Protocol, proto)
}

// inspect asks the daemon about a container: its full ID, the sandbox ports it binds
// now, and its docker_run port specs.
func (d *Deployer) inspect(ctx context.Context, id string) (container, error) {
	o, err := d.dockerOK(ctx, ShortTimeout, "docker inspect", "inspect", "--type=container", "--format",
		`{{.Id}}|{{.State.Running}}|{{json .NetworkSettings.Ports}}|{{index .Config.Labels "`+PortsLabel+`"}}`, id)
	if err != nil {
		return container{}, err
	}
	f := strings.SplitN(strings.TrimSpace(o.stdout), "|", 4)
	if len(f) != 4 {
		return container{}, fmt.Errorf("docker inspect: unexpected output %q", o.stdout)
	}
	c := container{id: f[0], live: map[int]string{}}
	var m map[string][]struct{ HostPort string }
	if f[1] == "true" && json.Unmarshal([]byte(f[2]), &m) == nil {
		for key, binds := range m {
			_, proto, _ := strings.Cut(key, "/")
			for _, bnd := range binds {
				if n, err := strconv.Atoi(bnd.HostPort); err == nil && n > 0 {
					c.live[n] = proto
				}
			}
		}
	}
	if f[3] != "" && f[3] != "<no value>" {
		for _, s := range strings.Split(f[3], ",") {
			if p, err := parsePort(s); err == nil {
				c.specs = append(c.specs, p)
			}
		}
	}
	d.mu.Lock()
	c.mine = append(c.mine, d.published[c.id]...)
	d.mu.Unlock()
	return c, nil
}

// inspectArg inspects the container named by a tool call's {"id": …} arguments.
func (d *Deployer) inspectArg(ctx context.Context, raw json.RawMessage) (container, error) {
	a, err := decode[struct {
		ID string `json:"id"`
	}](raw)
	if err != nil {
		return container{}, err
	}
	if err := checkID(a.ID); err != nil {
		return container{}, err
	}
	return d.inspect(ctx, a.ID)
}

func (d *Deployer) stopOrRm(ctx context.Context, raw json.RawMessage, verb string) (string, error) {
	c, err := d.inspectArg(ctx, raw)
	if err != nil {
		return "", err
	}
	var argv []string
	if verb == "stop" {
		argv = []string{"stop", "--time=10", c.id}
	} else {
		argv = []string{"rm", "--force", "--volumes", c.id}
	}
	if _, err := d.dockerOK(ctx, ShortTimeout, "docker "+verb, argv...); err != nil {
		return "", err
	}
	name, err := d.sandbox(ctx)
	if err != nil {
		return "", err
	}
	done, uerr := d.unpublishWhere(ctx, name, c.owns)
	d.forget(c.id)
	word := map[string]string{"stop": "Stopped", "rm": "Removed"}[verb]
	msg := fmt.Sprintf("%s container %s.", word, short(c.id))
	if u := describeUnpublished(done); u != "" {
		msg += "\n" + u
	}
	return msg, uerr
}

func (d *Deployer) stop(ctx context.Context, raw json.RawMessage) (string, error) {
	return d.stopOrRm(ctx, raw, "stop")
}

func (d *Deployer) rm(ctx context.Context, raw json.RawMessage) (string, error) {
	return d.stopOrRm(ctx, raw, "rm")
}

func (d *Deployer) start(ctx context.Context, raw json.RawMessage) (string, error) {
	c, err := d.inspectArg(ctx, raw)
	if err != nil {
		return "", err
	}
	// The daemon resolves the bind sources again at start: check them again, as at
	// docker_run, with the workspace's writers held until it has started.
	release, err := d.holdWriters(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	if err := d.checkBinds(ctx, c.id); err != nil {
		return "", err
	}
	if _, err := d.dockerOK(ctx, ShortTimeout, "docker start", "start", c.id); err != nil {
		return "", err
	}
	release()
	lines, perr := d.publishContainer(ctx, c.id, c.specs)
	return fmt.Sprintf("Started container %s.\n%s", short(c.id), lines), perr
}

func (d *Deployer) ps(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode[struct {
		All bool `json:"all"`
	}](raw)
	if err != nil {
		return "", err
	}
	argv := []string{"ps", "--format", "table {{.ID}}\t{{.Names}}\t{{.Image}}\t{{.Status}}\t{{.Ports}}"}
	if a.All {
		argv = append(argv, "--all")
	}
	o, err := d.dockerOK(ctx, ShortTimeout, "docker ps", argv...)
	if err != nil {
		return "", err
	}
	text := o.text()
	if name, err := d.sandbox(ctx); err == nil {
		if list, err := d.Sbx.ListPorts(ctx, name); err == nil && len(list) > 0 {
			text += "\n\nPublished on the host:"
			for _, m := range list {
				text += fmt.Sprintf("\n  %s -> sandbox port %d", url(m), m.SandboxPort)
			}
		}
	}
	return text, nil
}

func (d *Deployer) images(ctx context.Context, _ json.RawMessage) (string, error) {
	o, err := d.docker(ctx, ShortTimeout, "images", "--format", "table {{.Repository}}:{{.Tag}}\t{{.ID}}\t{{.Size}}\t{{.CreatedSince}}")
	if err != nil {
		return "", err
	}
	return o.text(), o.err("docker images")
}

func (d *Deployer) pull(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode[struct {
		Image string `json:"image"`
	}](raw)
	if err != nil {
		return "", err
	}
	if err := checkImage("image", a.Image); err != nil {
		return "", err
	}
	o, err := d.docker(ctx, LongTimeout, "pull", a.Image)
	if err != nil {
		return "", err
	}
	if o.code != 0 {
		return "", fmt.Errorf("%w\nThe sandbox's daemon could not pull %s. If no registry is reachable from the sandbox, build from an image it already has (docker_images).", o.err("docker pull"), a.Image)
	}
	return o.text(), nil
}

func (d *Deployer) logs(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode[struct {
		ID         string `json:"id"`
		Tail       *int   `json:"tail"`
		Timestamps bool   `json:"timestamps"`
	}](raw)
	if err != nil {
		return "", err
	}
	if err := checkID(a.ID); err != nil {
		return "", err
	}
	tail := 200
	if a.Tail != nil {
		tail = *a.Tail
	}
	if tail < 1 || tail > 100000 {
		return "", refuse("tail %d: want 1-100000", tail)
	}
	argv := []string{"logs", "--tail=" + strconv.Itoa(tail)}
	if a.Timestamps {
		argv = append(argv, "--timestamps")
	}
	o, err := d.docker(ctx, ShortTimeout, append(argv, a.ID)...)
	if err != nil {
		return "", err
	}
	if o.code != 0 {
		return "", o.err("docker logs")
	}
	if t := o.text(); t != "" {
		return t, nil
	}
	return "(no output)", nil
}

func (d *Deployer) exec(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode[struct {
		ID      string `json:"id"`
		Command any    `json:"command"`
	}](raw)
	if err != nil {
		return "", err
	}
	if err := checkID(a.ID); err != nil {
		return "", err
	}
	cmd, err := stringList(a.Command, true)
	if err != nil {
		return "", err
	}
	if len(cmd) == 0 {
		// As in the seed: the image's own command (entrypoint and cmd).
		if cmd, err = d.defaultCommand(ctx, a.ID); err != nil {
			return "", err
		}
	}
	for _, c := range cmd {
		if err := noControl("command", c); err != nil {
			return "", err
		}
	}
	o, err := d.docker(ctx, ShortTimeout, append([]string{"exec", a.ID}, cmd...)...)
	if ctx.Err() != nil {
		// Cancelled: ending the docker client does not end the command in the container.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShortTimeout)
		defer cancel()
		d.killExec(rctx, a.ID, strings.Join(cmd, " "))
		return "", ctx.Err()
	}
	if err != nil {
		return "", err
	}
	text := o.text()
	if o.code != 0 {
		return text, fmt.Errorf("exit status %d", o.code)
	}
	if text == "" {
		text = "(no output)"
	}
	return text, nil
}

type buildArgs struct {
	Context    string `json:"context"`
	Tag        string `json:"tag"`
	Dockerfile string `json:"dockerfile"`
	BuildArgs  string `json:"buildargs"`
}

// buildArgv validates docker_build's arguments: the context and Dockerfile as the host
// sees them (the sandbox's view is checked at use, in build), and the build args, whose
// values travel apart (values.go) and whose names must not be ones the CLI reads.
func (d *Deployer) buildArgv(a buildArgs) (dir, dockerfile string, argv, values []string, err error) {
	if dir, err = Confine(d.Workspace, a.Context); err != nil {
		return "", "", nil, nil, fmt.Errorf("context: %w", err)
	}
	if err := checkImage("tag", a.Tag); err != nil {
		return "", "", nil, nil, err
	}
	argv = []string{"build", "--tag=" + a.Tag, "--label=" + Label + "=true"}
	if a.Dockerfile != "" {
		df := a.Dockerfile
		if !filepath.IsAbs(df) {
			df = filepath.Join(dir, df)
		}
		if dockerfile, err = Confine(dir, df); err != nil {
			return "", "", nil, nil, fmt.Errorf("dockerfile must be inside the context: %w", err)
		}
	}
	if a.BuildArgs == "" {
		return dir, dockerfile, argv, nil, nil
	}
	if len(a.BuildArgs) > MaxValueBytes {
		return "", "", nil, nil, refuse("buildargs of %d bytes: the limit is %d", len(a.BuildArgs), MaxValueBytes)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(a.BuildArgs), &m); err != nil {
		return "", "", nil, nil, refuse("buildargs must be a JSON object string: %v", err)
	}
	if len(m) > MaxBuildArgs {
		return "", "", nil, nil, refuse("%d build args: the limit is %d", len(m), MaxBuildArgs)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !envNameRE.MatchString(k) {
			return "", "", nil, nil, refuse("build arg name %q", k)
		}
		if cliReads(k) {
			return "", "", nil, nil, refuse("build arg %s: the docker CLI reads this variable itself, so it cannot carry a build arg (rename it in the Dockerfile)", k)
		}
		v := fmt.Sprint(m[k])
		if s, ok := m[k].(string); ok {
			v = s
		}
		if err := noControl("build arg "+k, v); err != nil {
			return "", "", nil, nil, err
		}
		argv = append(argv, "--build-arg="+k)
		values = append(values, k+"="+v)
	}
	return dir, dockerfile, argv, values, nil
}

func (d *Deployer) build(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode[buildArgs](raw)
	if err != nil {
		return "", err
	}
	dir, dockerfile, argv, values, err := d.buildArgv(a)
	if err != nil {
		return "", err
	}
	what, paths := []string{"context"}, []string{dir}
	if dockerfile != "" {
		what, paths = append(what, "dockerfile"), append(paths, dockerfile)
	}
	real, err := d.confineIn(ctx, what, paths)
	if err != nil {
		return "", err
	}
	if dockerfile != "" {
		if !within(real[0], real[1]) {
			return "", refuse("dockerfile %q must be inside the context in the sandbox", d.rel(dockerfile))
		}
		argv = append(argv, "--file="+real[1])
	}
	o, err := d.dockerWithValues(ctx, LongTimeout, values, append(argv, real[0])...)
	if err != nil {
		return "", err
	}
	if o.code != 0 {
		return o.text(), fmt.Errorf("docker build failed (exit status %d)", o.code)
	}
	return o.text() + fmt.Sprintf("\nBuilt %s from %s.", a.Tag, d.rel(real[0])), nil
}

func (d *Deployer) prune(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode[struct {
		All     bool `json:"all"`
		Volumes bool `json:"volumes"`
	}](raw)
	if err != nil {
		return "", err
	}
	// Images stay unless asked: an offline sandbox cannot pull its base images again.
	argv := []string{"system", "prune", "--force"}
	if a.All {
		argv = append(argv, "--all")
	}
	if a.Volumes {
		argv = append(argv, "--volumes")
	}
	o, err := d.docker(ctx, LongTimeout, argv...)
	if err != nil {
		return "", err
	}
	return o.text(), o.err("docker system prune")
}

func short(id string) string {
	if len(id) > 12 && !strings.ContainsAny(id, "-_.") {
		return id[:12]
	}
	return id
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// defaultCommand is a container's configured entrypoint and command.
func (d *Deployer) defaultCommand(ctx context.Context, id string) ([]string, error) {
	o, err := d.dockerOK(ctx, ShortTimeout, "docker inspect", "inspect", "--type=container", "--format", "{{json .Config.Entrypoint}}\t{{json .Config.Cmd}}", id)
	if err != nil {
		return nil, err
	}
	var cmd []string
	for _, j := range strings.Split(strings.TrimSpace(o.stdout), "\t") {
		var part []string
		if err := json.Unmarshal([]byte(j), &part); err != nil {
			return nil, fmt.Errorf("docker inspect: %w", err)
		}
		cmd = append(cmd, part...)
	}
	if len(cmd) == 0 {
		return nil, refuse("container %s has no default command: pass command", id)
	}
	return cmd, nil
}

// checkBinds refuses a container whose bind sources do not resolve, in the sandbox now,
// to themselves inside the workspace: a source swapped for a link since the container
// was made, or one outside the workspace (a container the docker tools did not make).
func (d *Deployer) checkBinds(ctx context.Context, id string) error {
	o, err := d.dockerOK(ctx, ShortTimeout, "docker inspect", "inspect", "--type=container", "--format", "{{json .Mounts}}", id)
	if err != nil {
		return err
	}
	var ms []struct{ Type, Source string }
	if err := json.Unmarshal([]byte(strings.TrimSpace(o.stdout)), &ms); err != nil {
		return fmt.Errorf("docker inspect %s: %w", id, err)
	}
	var what, srcs []string
	for _, m := range ms {
		if m.Type == "bind" {
			what, srcs = append(what, "volume"), append(srcs, m.Source)
		}
	}
	real, err := d.confineIn(ctx, what, srcs)
	if err != nil {
		return fmt.Errorf("not starting %s: %w", id, err)
	}
	for i, r := range real {
		if r != srcs[i] {
			return refuse("not starting %s: its volume %q now leads elsewhere (a link replaced it)", id, d.rel(srcs[i]))
		}
	}
	return nil
}

// killScript kills, with what they started, the processes docker exec started in
// container "$1" with the command line "$2": the container's processes whose parent is
// its init's (the runtime's shim) other than the init, with that command line. (docker
// exec returns no ID to kill by; an identical exec running beside it is killed too.)
const killScript = `init=$(docker -H unix:///var/run/docker.sock inspect --type=container --format '{{.State.Pid}}' "$1") || exit 1
docker -H unix:///var/run/docker.sock top "$1" -eo pid,ppid,args | awk -v init="$init" -v want="$2" '
NR > 1 { pid = $1; ppid = $2; $1 = ""; $2 = ""; sub(/^  */, ""); parent[pid] = ppid; args[pid] = $0; if (pid == init) shim = ppid }
END {
	for (p in parent) if (parent[p] == shim && p != init && args[p] == want) kill[p] = 1
	do { grew = 0; for (p in parent) if ((parent[p] in kill) && !(p in kill)) { kill[p] = 1; grew = 1 } } while (grew)
	for (p in kill) print p
}' | xargs -r sudo -n kill -KILL`

// killExec runs killScript in the sandbox. The commands run as the container's user
// (root, usually), not the sandbox's: the kill goes through sudo, which the sandbox user
// has without a password. Best effort: the call is already over.
func (d *Deployer) killExec(ctx context.Context, id, cmd string) {
	d.inSandbox(ctx, ShortTimeout, nil, "sh", "-c", killScript, "pi-sbx-kill", id, strings.Join(strings.Fields(cmd), " "))
}
