package deploy

import (
	"fmt"
	"sort"
	"strings"
)

// A compose project is checked as compose itself sees it: the canonical model `docker
// compose config --format json` prints in the sandbox (interpolation, include, extends,
// env_file, profiles all applied). Every key of it must be one this file knows; the keys
// that raise a container's privileges are refused by name, and every path it names must
// resolve inside the workspace. The model that passed is what compose gets on stdin, so
// nothing can change between the check and its use.

// modelPath is a path of the model that must resolve inside the workspace. set writes
// the path the sandbox resolved back into the model, so compose mounts exactly that.
type modelPath struct {
	what string // for errors: "service web: bind mount"
	path string
	set  func(string)
}

// composeModel is a decoded canonical compose model under check.
type composeModel struct {
	readOnly bool // workspace read-only: binds of it must be read-only
	services map[string]bool
	paths    []modelPath
}

// refused keys: each raises what a container may do beyond Docker's default
// confinement, or reaches outside the project (the host's namespaces, the daemon).
var refusedServiceKeys = map[string]string{
	"privileged":          "gives the container every capability and device",
	"cap_add":             "adds capabilities (SYS_ADMIN remounts a read-only workspace)",
	"security_opt":        "can switch off seccomp, AppArmor or no-new-privileges",
	"devices":             "exposes the sandbox's devices",
	"device_cgroup_rules": "lets the container use the sandbox's devices",
	"cgroup_parent":       "places the container outside its own cgroup",
	"runtime":             "selects another container runtime",
	"isolation":           "selects another isolation technology",
	"gpus":                "exposes the sandbox's GPUs",
	"use_api_socket":      "mounts the Docker daemon's socket",
	"provider":            "runs a provider plugin in the sandbox, outside any container",
	"models":              "runs model providers outside any container",
	"credential_spec":     "reads credentials of the host",
	"storage_opt":         "changes the daemon's storage driver options",
	"blkio_config":        "names the sandbox's block devices",
	"oom_kill_disable":    "lets the container exhaust the sandbox's memory",
	"post_start":          "lifecycle hooks may run privileged",
	"pre_stop":            "lifecycle hooks may run privileged",
}

// allowedServiceKeys need no check beyond compose's own.
var allowedServiceKeys = setOf("command", "entrypoint", "environment", "image", "ports", "expose",
	"working_dir", "user", "restart", "depends_on", "healthcheck", "labels", "container_name",
	"hostname", "domainname", "networks", "stop_signal", "stop_grace_period", "tty",
	"stdin_open", "init", "read_only", "tmpfs", "ulimits", "extra_hosts", "dns", "dns_search",
	"dns_opt", "mac_address", "platform", "pull_policy", "scale", "profiles", "attach",
	"develop", "annotations", "shm_size", "mem_limit", "mem_reservation", "memswap_limit",
	"mem_swappiness", "cpus", "cpu_shares", "cpu_quota", "cpu_period", "cpuset", "cpu_count",
	"cpu_percent", "cpu_rt_runtime", "cpu_rt_period", "pids_limit", "oom_score_adj",
	"group_add", "logging", "sysctls", "links", "external_links", "secrets", "configs",
	"label_file", "stop_timeout", "deploy", "build", "volumes", "volumes_from", "env_file",
	"network_mode", "pid", "ipc", "uts", "userns_mode", "cgroup")

var allowedBuildKeys = setOf("context", "dockerfile", "dockerfile_inline", "args", "labels",
	"target", "tags", "cache_from", "no_cache", "pull", "shm_size", "extra_hosts",
	"platforms", "secrets", "additional_contexts", "network", "ulimits")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// checkModel checks a decoded canonical model and collects the paths to confine.
func checkModel(m map[string]any, readOnly bool) (*composeModel, error) {
	c := &composeModel{readOnly: readOnly, services: map[string]bool{}}
	for _, k := range sortedKeys(m) {
		switch {
		case k == "name" || strings.HasPrefix(k, "x-"):
		case k == "services" || k == "networks" || k == "volumes" || k == "secrets" || k == "configs":
		default:
			return nil, refuse("top-level key %q is not one docker_compose accepts", k)
		}
	}
	services, _ := m["services"].(map[string]any)
	for n := range services {
		c.services[n] = true
	}
	for _, n := range sortedKeys(services) {
		s, ok := services[n].(map[string]any)
		if !ok {
			return nil, refuse("service %s is not a mapping", n)
		}
		if err := c.service(n, s); err != nil {
			return nil, err
		}
	}
	if err := c.networks(asMap(m["networks"])); err != nil {
		return nil, err
	}
	if err := c.volumes(asMap(m["volumes"])); err != nil {
		return nil, err
	}
	for _, kind := range []string{"secrets", "configs"} {
		if err := c.files(kind, asMap(m[kind])); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *composeModel) service(n string, s map[string]any) error {
	for _, k := range sortedKeys(s) {
		if why, bad := refusedServiceKeys[k]; bad {
			return refuse("service %s: %q is refused: it %s", n, k, why)
		}
		if !allowedServiceKeys[k] && !strings.HasPrefix(k, "x-") {
			return refuse("service %s: key %q is not one docker_compose accepts", n, k)
		}
	}
	// Namespaces: the project's own only, never the sandbox's or another container's.
	for _, k := range []string{"network_mode", "pid", "ipc", "uts", "userns_mode", "cgroup"} {
		v, _ := s[k].(string)
		switch {
		case v == "" || v == "none" || v == "bridge" || v == "private" || v == "shareable" || v == "default":
		case strings.HasPrefix(v, "service:") && c.services[strings.TrimPrefix(v, "service:")]:
		default:
			return refuse("service %s: %s %q is refused: only the project's own namespaces", n, k, v)
		}
	}
	if vf, ok := s["volumes_from"].([]any); ok {
		for _, x := range vf {
			v, _ := x.(string)
			svc, _, _ := strings.Cut(v, ":")
			if !c.services[svc] {
				return refuse("service %s: volumes_from %q is refused: only the project's own services", n, v)
			}
		}
	}
	if d := asMap(s["deploy"]); d != nil {
		if r := asMap(asMap(d["resources"])["reservations"]); r != nil && r["devices"] != nil {
			return refuse("service %s: deploy.resources.reservations.devices is refused: it exposes the sandbox's devices", n)
		}
	}
	if b := asMap(s["build"]); b != nil {
		if err := c.build(n, b); err != nil {
			return err
		}
	}
	if files, ok := s["env_file"].([]any); ok {
		for _, f := range files {
			if fm := asMap(f); fm != nil {
				c.addPath(fmt.Sprintf("service %s: env_file", n), fm, "path")
			}
		}
	}
	if lf, ok := s["label_file"].([]any); ok {
		for i := range lf {
			if p, ok := lf[i].(string); ok {
				i := i
				c.paths = append(c.paths, modelPath{what: "service " + n + ": label_file", path: p, set: func(r string) { lf[i] = r }})
			}
		}
	}
	vols, _ := s["volumes"].([]any)
	for _, x := range vols {
		v := asMap(x)
		if v == nil {
			return refuse("service %s: a volume is not a mapping", n)
		}
		if err := c.mount(n, v); err != nil {
			return err
		}
	}
	return nil
}

func (c *composeModel) mount(n string, v map[string]any) error {
	typ, _ := v["type"].(string)
	switch typ {
	case "bind":
		if b := asMap(v["bind"]); b != nil {
			if p, _ := b["propagation"].(string); p != "" && p != "private" && p != "rprivate" {
				return refuse("service %s: bind propagation %q is refused: mounts must not propagate", n, p)
			}
		}
		ro, _ := v["read_only"].(bool)
		if c.readOnly && !ro {
			src, _ := v["source"].(string)
			return refuse("service %s: in read-only workspace mode bind mounts of the workspace must be read-only (add :ro to %s)", n, src)
		}
		c.addPath(fmt.Sprintf("service %s: bind mount", n), v, "source")
	case "volume", "tmpfs", "image":
	default:
		return refuse("service %s: volume type %q is refused (bind, volume, tmpfs or image)", n, typ)
	}
	return nil
}

func (c *composeModel) build(n string, b map[string]any) error {
	for _, k := range sortedKeys(b) {
		if !allowedBuildKeys[k] && !strings.HasPrefix(k, "x-") {
			return refuse("service %s: build key %q is refused (privileged builds, entitlements, ssh, cache exports are not allowed)", n, k)
		}
	}
	if nw, _ := b["network"].(string); nw == "host" {
		return refuse("service %s: build network \"host\" is refused", n)
	}
	if cf, ok := b["cache_from"].([]any); ok {
		for _, x := range cf {
			if s, _ := x.(string); strings.Contains(s, "type=local") {
				return refuse("service %s: build cache_from %q is refused (a local cache reads any path)", n, s)
			}
		}
	}
	ctx, _ := b["context"].(string)
	c.addPath(fmt.Sprintf("service %s: build context", n), b, "context")
	if df, _ := b["dockerfile"].(string); df != "" {
		if !strings.HasPrefix(df, "/") {
			b["dockerfile"] = strings.TrimSuffix(ctx, "/") + "/" + df
		}
		c.addPath(fmt.Sprintf("service %s: dockerfile", n), b, "dockerfile")
	}
	if ac := asMap(b["additional_contexts"]); ac != nil {
		for _, k := range sortedKeys(ac) {
			s, _ := ac[k].(string)
			switch {
			case strings.HasPrefix(s, "docker-image://"), strings.HasPrefix(s, "service:"), strings.HasPrefix(s, "target:"):
			case strings.HasPrefix(s, "/"):
				c.addPath(fmt.Sprintf("service %s: additional context %s", n, k), ac, k)
			default:
				return refuse("service %s: additional context %s %q is refused (a path, docker-image:// or service:)", n, k, s)
			}
		}
	}
	return nil
}

func (c *composeModel) networks(nets map[string]any) error {
	for _, name := range sortedKeys(nets) {
		nw := asMap(nets[name])
		for _, k := range sortedKeys(nw) {
			switch k {
			case "name", "ipam", "internal", "attachable", "labels", "enable_ipv6", "enable_ipv4":
			case "driver":
				if d, _ := nw[k].(string); d != "" && d != "bridge" {
					return refuse("network %s: driver %q is refused (bridge only)", name, d)
				}
			default:
				return refuse("network %s: key %q is refused (external networks and driver options reach outside the project)", name, k)
			}
		}
	}
	return nil
}

func (c *composeModel) volumes(vols map[string]any) error {
	for _, name := range sortedKeys(vols) {
		v := asMap(vols[name])
		for _, k := range sortedKeys(v) {
			switch k {
			case "name", "labels":
			case "driver":
				if d, _ := v[k].(string); d != "" && d != "local" {
					return refuse("volume %s: driver %q is refused (local only)", name, d)
				}
			default:
				return refuse("volume %s: key %q is refused (driver_opts can bind any path of the sandbox; external volumes are not checked)", name, k)
			}
		}
	}
	return nil
}

// files checks top-level secrets or configs: a file inside the workspace, an environment
// variable or inline content.
func (c *composeModel) files(kind string, m map[string]any) error {
	for _, name := range sortedKeys(m) {
		v := asMap(m[name])
		for _, k := range sortedKeys(v) {
			switch k {
			case "name", "environment", "content", "labels":
			case "file":
				c.addPath(fmt.Sprintf("%s %s: file", strings.TrimSuffix(kind, "s"), name), v, "file")
			default:
				return refuse("%s %s: key %q is refused", strings.TrimSuffix(kind, "s"), name, k)
			}
		}
	}
	return nil
}

// addPath records m[key] (a string) as a path to confine.
func (c *composeModel) addPath(what string, m map[string]any, key string) {
	p, _ := m[key].(string)
	c.paths = append(c.paths, modelPath{what: what, path: p, set: func(r string) { m[key] = r }})
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
