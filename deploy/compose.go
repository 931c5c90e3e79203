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
	base := []string{"compose", "--file=" + file, "--project-directory=" + filepath.Dir(file)}
	// The project's build contexts and bind mounts must stay in the workspace too.
	if err := d.checkComposeProject(ctx, base); err != nil {
		return "", err
	}
	argv := append(append([]string{}, base...), action)
	timeout := ShortTimeout
	switch action {
	case "up":
		argv = append(argv, "--detach", "--build")
		timeout = LongTimeout
	case "build", "pull":
		timeout = LongTimeout
	case "logs":
		argv = append(argv, "--no-color")
	}
	argv = append(append(argv, a.ExtraArgs...), service...)

	var prefix string
	if action == "down" || action == "stop" {
		// Unpublish first: after down, compose no longer knows the ports.
		ports, err := d.composePorts(ctx, base)
		if err == nil && len(ports) > 0 {
			name, err := d.sandbox(ctx)
			if err != nil {
				return "", err
			}
			set := map[int]string{}
			for _, p := range ports {
				set[p.PublishedPort] = p.Protocol
			}
			done, uerr := d.unpublishSandboxPorts(ctx, name, set)
			if uerr != nil {
				return "", uerr
			}
			prefix = describeUnpublished(done)
		}
	}
	o, err := d.docker(ctx, timeout, argv...)
	if err != nil {
		return "", err
	}
	text := o.text()
	if prefix != "" {
		text += "\n" + prefix
	}
	if o.code != 0 {
		return text, fmt.Errorf("docker compose %s failed (exit status %d)", action, o.code)
	}
	if action == "up" || action == "start" || action == "restart" {
		lines, err := d.publishCompose(ctx, base)
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
func (d *Deployer) composePorts(ctx context.Context, base []string) ([]publisher, error) {
	o, err := d.dockerOK(ctx, ShortTimeout, "docker compose ps", append(append([]string{}, base...), "ps", "--all", "--format", "json")...)
	if err != nil {
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
func (d *Deployer) publishCompose(ctx context.Context, base []string) (string, error) {
	ports, err := d.composePorts(ctx, base)
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

// checkComposeProject asks compose for the resolved project and refuses build contexts,
// dockerfiles and bind-mount sources outside the workspace (and, in read-only mode,
// writable binds of the workspace).
func (d *Deployer) checkComposeProject(ctx context.Context, base []string) error {
	o, err := d.dockerOK(ctx, ShortTimeout, "docker compose config", append(append([]string{}, base...), "config", "--format", "json")...)
	if err != nil {
		return err
	}
	var project struct {
		Services map[string]struct {
			Build *struct {
				Context    string `json:"context"`
				Dockerfile string `json:"dockerfile"`
			} `json:"build"`
			Volumes []struct {
				Type     string `json:"type"`
				Source   string `json:"source"`
				ReadOnly bool   `json:"read_only"`
			} `json:"volumes"`
		} `json:"services"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &project); err != nil {
		return fmt.Errorf("reading the compose project: %w", err)
	}
	names := make([]string, 0, len(project.Services))
	for n := range project.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := project.Services[n]
		if s.Build != nil {
			dir, err := Confine(d.Workspace, s.Build.Context)
			if err != nil {
				return fmt.Errorf("service %s: build context: %w", n, err)
			}
			if s.Build.Dockerfile != "" {
				df := s.Build.Dockerfile
				if !filepath.IsAbs(df) {
					df = filepath.Join(dir, df)
				}
				if _, err := Confine(d.Workspace, df); err != nil {
					return fmt.Errorf("service %s: dockerfile: %w", n, err)
				}
			}
		}
		for _, v := range s.Volumes {
			if v.Type != "bind" {
				continue
			}
			if _, err := Confine(d.Workspace, v.Source); err != nil {
				return fmt.Errorf("service %s: bind mount: %w", n, err)
			}
			if d.ReadOnly && !v.ReadOnly {
				return refuse("service %s: in read-only workspace mode bind mounts of the workspace must be read-only (add :ro to %s)", n, v.Source)
			}
		}
	}
	return nil
}
