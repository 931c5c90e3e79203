package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// composeFlags are the extra flags docker_compose passes on; anything else (a second -f,
// --project-directory, an env file) could reach outside the workspace.
var composeFlags = regexp.MustCompile(`^(--build|--no-build|--force-recreate|--remove-orphans|--no-deps|--volumes|-v|--wait|--timestamps|--tail=[0-9]{1,6}|--timeout=[0-9]{1,4}|--pull=(never|missing))$`)

var composeDefaults = []string{"compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml"}

type composeArgs struct {
	File      string   `json:"file"`
	Action    string   `json:"action"`
	Service   string   `json:"service"`
	ExtraArgs []string `json:"extraArgs"`
}

// composeFile finds and confines the compose file.
func (d *Deployer) composeFile(file string) (string, error) {
	if file != "" {
		p, err := Confine(d.Workspace, file)
		if err != nil {
			return "", fmt.Errorf("compose file: %w", err)
		}
		return p, nil
	}
	for _, name := range composeDefaults {
		p := filepath.Join(d.Workspace, name)
		if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
			return Confine(d.Workspace, name)
		}
	}
	return "", refuse("no compose file in %s (looked for %s); pass file", d.Workspace, strings.Join(composeDefaults, ", "))
}

// project is a compose project as checked: its canonical model, which every compose
// call of the tool gets on stdin, and its directory.
type project struct {
	name  string // compose's project name
	dir   string
	model []byte
	// what and paths are the model's paths (real paths in the sandbox), checked again
	// right before compose starts containers.
	what, paths []string
}

// composeDo runs `docker compose ARGS` on the checked model: --file=- reads it from
// stdin, and --env-file=/dev/null keeps a .env file from interpolating it again (the
// model is already interpolated; its literal $ are escaped as $$).
func (d *Deployer) composeDo(ctx context.Context, timeout time.Duration, p *project, args ...string) (out, error) {
	name, err := d.sandbox(ctx)
	if err != nil {
		return out{}, err
	}
	argv := append(d.dockerPrefix(), "compose", "--project-directory="+p.dir, "--env-file=/dev/null", "--file=-")
	return d.execIn(ctx, d.Sbx, name, timeout, nil, p.model, append(argv, args...)...)
}

func (d *Deployer) compose(ctx context.Context, raw json.RawMessage) (string, error) {
	a, err := decode[composeArgs](raw)
	if err != nil {
		return "", err
	}
	file, err := d.composeFile(a.File)
	if err != nil {
		return "", err
	}
	action := a.Action
	if action == "" {
		action = "up"
	}
	switch action {
	case "up", "down", "ps", "logs", "build", "restart", "stop", "start", "pull", "config":
	default:
		return "", refuse("action %q", action)
	}
	for _, x := range a.ExtraArgs {
		if !composeFlags.MatchString(x) {
			return "", refuse("extra argument %q is not one docker_compose passes on (%s)", x, composeFlags.String())
		}
	}
	var service []string
	if a.Service != "" {
		if err := safeArg("service", a.Service); err != nil || !nameRE.MatchString(a.Service) {
			return "", refuse("service %q", a.Service)
		}
		service = []string{a.Service}
	}
	p, err := d.checkComposeProject(ctx, file)
	if err != nil {
		return "", err
	}
	if action == "config" {
		return string(p.model), nil
	}
	argv := []string{action}
	extra := a.ExtraArgs
	timeout := ShortTimeout
	release := func() {}
	defer func() { release() }()
	switch action {
	case "up":
		// Build first, then create and start with the workspace's writers held (hold.go):
		// the daemon resolves the bind sources when it starts the containers.
		extra = nil
		build := true
		for _, x := range a.ExtraArgs {
			switch x {
			case "--no-build":
				build = false
			case "--build":
			default:
				extra = append(extra, x)
			}
		}
		if build {
			o, err := d.composeDo(ctx, LongTimeout, p, append([]string{"build"}, service...)...)
			if err != nil {
				return "", err
			}
			if o.code != 0 {
				return o.text(), fmt.Errorf("docker compose build failed (exit status %d)", o.code)
			}
		}
		argv = append(argv, "--detach", "--no-build")
		timeout = LongTimeout
	case "build", "pull":
		timeout = LongTimeout
	case "logs":
		argv = append(argv, "--no-color")
	}
	argv = append(append(argv, extra...), service...)

	var prefix string
	if action == "down" || action == "stop" {
		// Unpublish first: after down, compose no longer knows the ports.
		ports, err := d.composePorts(ctx, p)
		if err == nil && len(ports) > 0 {
			name, err := d.sandbox(ctx)
			if err != nil {
				return "", err
			}
			set := map[int]string{}
			for _, pp := range ports {
				set[pp.PublishedPort] = pp.Protocol
			}
			done, uerr := d.unpublishSandboxPorts(ctx, name, set)
			if uerr != nil {
				return "", uerr
			}
			prefix = describeUnpublished(done)
		}
	}
	if action == "up" || action == "start" || action == "restart" {
		// The daemon resolves bind sources when it starts a container: from a second
		// look at them until compose has started everything, the workspace's writers
		// (but the project's own, which compose recreates) are held (hold.go).
		if release, err = d.holdWritersBut(ctx, p.name); err != nil {
			return "", err
		}
		again, err := d.confineIn(ctx, p.what, p.paths)
		if err != nil {
			return "", err
		}
		for i := range again {
			if again[i] != p.paths[i] {
				return "", refuse("%s %q changed while it was checked (a link replaced it)", p.what[i], d.rel(p.paths[i]))
			}
		}
	}
	o, err := d.composeDo(ctx, timeout, p, argv...)
	if err != nil {
		return "", err
	}
	release()
	text := o.text()
	if prefix != "" {
		text += "\n" + prefix
	}
	if o.code != 0 {
		return text, fmt.Errorf("docker compose %s failed (exit status %d)", action, o.code)
	}
	if action == "up" || action == "start" || action == "restart" {
		lines, err := d.publishCompose(ctx, p)
		return text + "\n" + lines, err
	}
	return text, nil
}

// publisher is one published port of `compose ps --format json`.
type publisher struct {
	URL           string `json:"URL"`
	TargetPort    int    `json:"TargetPort"`
	PublishedPort int    `json:"PublishedPort"`
	Protocol      string `json:"Protocol"`
	service       string
}

// composePorts lists the sandbox ports the project's containers publish.
// Only running containers count: a stopped one binds no port, and the sandbox port it
// was given may be another container's now.
func (d *Deployer) composePorts(ctx context.Context, p *project) ([]publisher, error) {
	o, err := d.composeDo(ctx, ShortTimeout, p, "ps", "--format", "json")
	if err != nil {
		return nil, err
	}
	if err := o.err("docker compose ps"); err != nil {
		return nil, err
	}
	type row struct {
		Service    string      `json:"Service"`
		Publishers []publisher `json:"Publishers"`
	}
	var rows []row
	data := bytes.TrimSpace([]byte(o.stdout))
	if len(data) > 0 && data[0] == '[' {
		if err := json.Unmarshal(data, &rows); err != nil {
			return nil, fmt.Errorf("compose ps: %w", err)
		}
	} else {
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var r row
			if err := json.Unmarshal(line, &r); err != nil {
				return nil, fmt.Errorf("compose ps: %w", err)
			}
			rows = append(rows, r)
		}
	}
	seen := map[string]bool{}
	var out []publisher
	for _, r := range rows {
		for _, p := range r.Publishers {
			key := fmt.Sprintf("%d/%s", p.PublishedPort, p.Protocol)
			if p.PublishedPort == 0 || seen[key] {
				continue
			}
			seen[key] = true
			p.service = r.Service
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PublishedPort < out[j].PublishedPort })
	return out, nil
}

// publishCompose forwards each published sandbox port of the project to the host (the
// same host port when free, else an ephemeral one).
func (d *Deployer) publishCompose(ctx context.Context, p *project) (string, error) {
	ports, err := d.composePorts(ctx, p)
	if err != nil {
		return "", err
	}
	if len(ports) == 0 {
		return "No published ports.", nil
	}
	name, err := d.sandbox(ctx)
	if err != nil {
		return "", err
	}
	existing, err := d.Sbx.ListPorts(ctx, name)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(portsHeader)
	var errs []error
	for _, p := range ports {
		proto := strings.TrimRight(p.Protocol, "46")
		m, ok := findMapping(existing, 0, p.PublishedPort, proto)
		note := ""
		if !ok {
			m, note, err = d.publish(ctx, name, p.PublishedPort, p.PublishedPort, proto)
			if err != nil {
				errs = append(errs, err)
				continue
			}
		}
		fmt.Fprintf(&b, "  %s %d/%s -> %s  (sandbox port %d)\n", p.service, p.TargetPort, proto, url(m), m.SandboxPort)
		if note != "" {
			fmt.Fprintf(&b, "    note: %s\n", note)
		}
	}
	return b.String(), errors.Join(errs...)
}

// checkComposeProject has compose resolve the project in the sandbox (`docker compose
// config`: interpolation, include, extends, env_file, profiles), checks that canonical
// model (composemodel.go), confines every path it names as the sandbox resolves it, and
// returns the model with those real paths: what every compose call then gets on stdin.
func (d *Deployer) checkComposeProject(ctx context.Context, file string) (*project, error) {
	real, err := d.confineIn(ctx, []string{"compose file"}, []string{file})
	if err != nil {
		return nil, err
	}
	file = real[0]
	dir := filepath.Dir(file)
	o, err := d.docker(ctx, ShortTimeout, "compose", "--file="+file, "--project-directory="+dir, "config", "--format", "json")
	if err != nil {
		return nil, err
	}
	if o.code != 0 {
		return nil, errors.New(d.relText(o.err("docker compose config").Error()))
	}
	dec := json.NewDecoder(strings.NewReader(o.stdout))
	dec.UseNumber() // numbers go back to compose as they came
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("reading the compose project: %w", err)
	}
	c, err := checkModel(m, d.ReadOnly)
	if err != nil {
		return nil, err
	}
	what := make([]string, len(c.paths))
	paths := make([]string, len(c.paths))
	for i, p := range c.paths {
		what[i], paths[i] = p.what, p.path
	}
	resolved, err := d.confineIn(ctx, what, paths)
	if err != nil {
		return nil, err
	}
	for i, p := range c.paths {
		p.set(resolved[i])
	}
	model, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("writing the checked compose model: %w", err)
	}
	name, _ := m["name"].(string)
	return &project{name: name, dir: dir, model: model, what: what, paths: resolved}, nil
}
