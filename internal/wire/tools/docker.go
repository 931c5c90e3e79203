package tools

import "github.com/google/jsonschema-go/jsonschema"

// The docker_* tools: a private Docker daemon inside the session's sandbox, with the
// seed extension's names and parameters (reference §2.4). Their implementations live in
// deploy/, on the host, and reach docker only through `sbx exec`.

func strOrList(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Description: desc, AnyOf: []*jsonschema.Schema{
		{Type: "string"}, {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
	}}
}

func list(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Description: desc, Items: &jsonschema.Schema{Type: "string"}}
}

func enum(desc string, values ...string) *jsonschema.Schema {
	e := make([]any, len(values))
	for i, v := range values {
		e[i] = v
	}
	return &jsonschema.Schema{Type: "string", Description: desc, Enum: e}
}

func noArgs() *jsonschema.Schema { return Object(nil, map[string]*jsonschema.Schema{}) }

// Docker returns the descriptions of the docker_* tools.
func Docker() []*Tool {
	id := map[string]*jsonschema.Schema{"id": String("Container name or ID")}
	return []*Tool{
		{Name: "docker_status", Description: "Show the private Docker sandbox: sandbox name and state, engine version, CPUs/memory/disk (warnings above 85%), container and image counts, workspace mount mode, env forwarding mode and teardown policy.", Schema: noArgs()},
		{Name: "docker_verify", Description: "Run the live isolation audit of the Docker sandbox (transport, env scrub, env forwarding, daemon pinning, mounts, contexts, host socket, port binds) and report PASS/FAIL with evidence for each check. Run it before and after deploys; if any check fails, treat the sandbox as compromised and remove it with docker_sandbox_rm.", Schema: noArgs()},
		{Name: "docker_images", Description: "List the images in the sandbox's Docker daemon.", Schema: noArgs()},
		{Name: "docker_ps", Description: "List containers in the sandbox's Docker daemon (running ones; all with all=true).", Schema: Object(nil, map[string]*jsonschema.Schema{"all": Boolean("Include stopped containers (default: false)")})},
		{Name: "docker_pull", Description: "Pull an image into the sandbox's Docker daemon.", Schema: Object([]string{"image"}, map[string]*jsonschema.Schema{"image": String("Image reference, e.g. nginx:alpine")})},
		{Name: "docker_run", Description: "Run a container in the sandbox (detached by default). Ports \"C\" or \"H:C\" (optionally /tcp or /udp) are published on the host at 127.0.0.1 (H, or a free port when H is omitted) and the reply names each http://127.0.0.1:<port>/ URL. Volumes are host:container[:ro] with the host side inside the workspace.", Schema: Object([]string{"image"}, map[string]*jsonschema.Schema{
			"image":   String("Image to run"),
			"name":    String("Container name"),
			"command": strOrList("Command (and arguments) to run instead of the image's default"),
			"detach":  Boolean("Run in the background (default: true)"),
			"rm":      Boolean("Remove the container when it exits (only with detach=false)"),
			"ports":   list("Ports to publish: \"C\", \"H:C\", with optional /tcp or /udp, e.g. [\"8080\", \"3000:80\"]"),
			"env":     strOrList("Environment variables KEY=VALUE"),
			"memory":  String("Memory limit, e.g. 256m"),
			"volumes": list("Bind mounts host:container[:ro]; the host path must be inside the workspace"),
			"network": enum("Network mode", "bridge", "host", "none"),
			"restart": enum("Restart policy (detached default: unless-stopped)", "no", "always", "unless-stopped", "on-failure"),
			"workdir": String("Working directory inside the container"),
		})},
		{Name: "docker_logs", Description: "Show a container's logs (last 200 lines by default).", Schema: Object([]string{"id"}, map[string]*jsonschema.Schema{
			"id": String("Container name or ID"), "tail": Integer("Number of lines from the end (default: 200)"), "timestamps": Boolean("Show timestamps"),
		})},
		{Name: "docker_exec", Description: "Run a command in a running container and return its output.", Schema: Object([]string{"id"}, map[string]*jsonschema.Schema{
			"id": String("Container name or ID"), "command": strOrList("Command to run, e.g. [\"ls\", \"/app\"]; a string is split on blanks, honouring quotes (no shell expansion). Default: the image's command"),
		})},
		{Name: "docker_build", Description: "Build an image from a context directory in the workspace.", Schema: Object([]string{"context", "tag"}, map[string]*jsonschema.Schema{
			"context":    String("Build context directory (inside the workspace)"),
			"tag":        String("Image tag, e.g. myapp:dev"),
			"dockerfile": String("Dockerfile path (inside the context; default: Dockerfile)"),
			"buildargs":  String("Build arguments as a JSON object string, e.g. {\"VERSION\":\"1\"}"),
		})},
		{Name: "docker_init", Description: "Write a starter Dockerfile and .dockerignore (and compose.yaml with compose=true) for a project directory in the workspace. Default ports: node 3000, python 8000, go/generic 8080.", Schema: Object(nil, map[string]*jsonschema.Schema{
			"context": String("Project directory inside the workspace (default: the workspace)"),
			"lang":    enum("Project language (default: generic)", "node", "pnpm", "go", "python", "rust", "generic"),
			"force":   Boolean("Overwrite existing files"),
			"compose": Boolean("Also write compose.yaml"),
		})},
		{Name: "docker_compose", Description: "Run docker compose in the sandbox: up (up -d --build, publishing the services' ports on host 127.0.0.1), down (unpublishing them), ps, logs, build, restart, stop, start, pull, config.", Schema: Object(nil, map[string]*jsonschema.Schema{
			"file":      String("Compose file inside the workspace (default: compose.yaml, docker-compose.yml, …)"),
			"action":    enum("Action (default: up)", "up", "down", "ps", "logs", "build", "restart", "stop", "start", "pull", "config"),
			"service":   String("Limit to one service"),
			"extraArgs": list("Extra flags, from: --build --no-build --force-recreate --remove-orphans --no-deps --volumes -v --wait --timestamps --tail=N --timeout=N --pull=never|missing"),
		})},
		{Name: "docker_stop", Description: "Stop a container (10 s grace) and unpublish its host ports.", Schema: Object([]string{"id"}, id)},
		{Name: "docker_start", Description: "Start a stopped container and publish its ports again.", Schema: Object([]string{"id"}, id)},
		{Name: "docker_rm", Description: "Remove a container (forced, with its anonymous volumes) and unpublish its host ports.", Schema: Object([]string{"id"}, id)},
		{Name: "docker_curl", Description: "HTTP request from the host to a port this sandbox published (only 127.0.0.1, localhost or ::1, and only published ports; in a cloud sandbox, only a published port's public https URL, as docker_ps shows it). Methods GET POST PUT DELETE HEAD PATCH OPTIONS; body up to 1 MiB; the response is capped.", Schema: Object([]string{"url"}, map[string]*jsonschema.Schema{
			"url":        String("URL, e.g. http://127.0.0.1:8080/"),
			"timeoutSec": Number("Timeout in seconds (default: 10)"),
			"method":     enum("HTTP method (default: GET)", "GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS"),
			"body":       String("Request body (up to 1 MiB)"),
		})},
		{Name: "docker_resources", Description: "Show the sandbox's resource use: memory, CPUs, disk, docker disk use and per-container stats, with warnings above 85%.", Schema: noArgs()},
		{Name: "docker_prune", Description: "Remove stopped containers, unused networks, dangling images and build cache in the sandbox; every unused image too with all=true (base images an offline sandbox cannot pull again), unused volumes with volumes=true.", Schema: Object(nil, map[string]*jsonschema.Schema{
			"all":     Boolean("Also remove every image no container uses"),
			"volumes": Boolean("Also remove unused volumes"),
		})},
		{Name: "docker_sandbox_rm", Description: "Remove this session's sandbox and everything in it. Every later tool call of the session fails until a new session starts.", Schema: noArgs()},
		{Name: "docker_gc", Description: "Remove stale pi-sbx-* sandboxes: stopped, not this session's, owner gone, older than the threshold. Running, pinned and foreign sandboxes are never touched.", Schema: Object(nil, map[string]*jsonschema.Schema{
			"hours":  Number("Minimum age in hours (default: 24)"),
			"dryRun": Boolean("Only report what would be removed"),
		})},
	}
}
