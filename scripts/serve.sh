#!/usr/bin/env bash
# serve.sh builds pi-sbx-backend and runs `pi-sbx-backend serve` (MCP on stdio) with any
# arguments given. With `sbx` on PATH (or PI_SBX_BIN set) the tools run in Docker
# Sandboxes microVMs. Without it, on Linux as root, the sandboxes come from sbxsim, the
# project's simulator — a test double, not a security boundary (README: sbxsim).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/bin"
(cd "$root" && CGO_ENABLED=0 go build -o bin/pi-sbx-backend ./cmd/pi-sbx-backend)

if [ -z "${PI_SBX_BIN:-}" ] && ! command -v sbx >/dev/null 2>&1; then
	if [ "$(uname -s)" != Linux ] || [ "$(id -u)" != 0 ]; then
		echo "serve.sh: no sbx on PATH; the sbxsim fallback needs Linux and root" >&2
		exit 1
	fi
	(cd "$root" && CGO_ENABLED=0 go build -o bin/sbxsim ./cmd/sbxsim)
	docker=${SBXSIM_DOCKER:-1}
	command -v dockerd >/dev/null 2>&1 || docker=0
	# The backend runs sbx with a scrubbed environment, so sbxsim's settings live in a wrapper.
	cat >"$root/bin/sbx" <<WRAP
#!/bin/sh
exec env SBXSIM_STATE='${SBXSIM_STATE:-/var/lib/sbxsim}' SBXSIM_DOCKER='$docker' '$root/bin/sbxsim' "\$@"
WRAP
	chmod +x "$root/bin/sbx"
	export PI_SBX_BIN="$root/bin/sbx"
	echo "serve.sh: no sbx on PATH: using sbxsim (a simulator, not a security boundary; docker inside: $docker)" >&2
fi
exec "$root/bin/pi-sbx-backend" serve "$@"
