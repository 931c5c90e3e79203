#!/usr/bin/env bash
# serve.sh builds pi-sbx-backend and runs `pi-sbx-backend serve` (MCP on stdio) with any
# arguments given. With `sbx` on PATH (or PI_SBX_BIN set) the tools run in Docker
# Sandboxes microVMs. Without it, on Linux as root, the sandboxes come from sbxsim, the
# project's simulator — a test double, not a security boundary (docs/sbxsim.md).
#
#   serve.sh --build     only build (and, as root without sbx, install the simulator's
#                        missing prerequisites with apt-get), then exit:
#                        do this once before pointing an MCP client at serve.sh, since a
#                        cold build takes longer than a client waits for its first answer.
#
# Everything it builds goes to $PI_SBX_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/pi-sbx-backend),
# outside the repository: serve refuses to run a file inside a workspace it serves (the
# sandbox could rewrite it), and the README's main command serves this repository.
# Progress goes to stderr; stdout is the protocol's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${PI_SBX_CACHE:-${XDG_CACHE_HOME:-${HOME:?}/.cache}/pi-sbx-backend}
say() { echo "serve.sh: $*" >&2; }

build_only=0
if [ "${1:-}" = --build ]; then
	build_only=1
	shift
fi

if ! command -v go >/dev/null 2>&1; then
	say "building needs Go $(sed -n 's/^go //p' "$root/go.mod") or later, which is not on PATH: get it from https://go.dev/dl/"
	exit 1
fi

use_sim=0
if [ -z "${PI_SBX_BIN:-}" ] && ! command -v sbx >/dev/null 2>&1; then
	if [ "$(uname -s)" != Linux ] || [ "$(id -u)" != 0 ]; then
		say "no sbx on PATH (install Docker Sandboxes: https://github.com/docker/sbx-releases); the sbxsim fallback needs Linux and root"
		exit 1
	fi
	use_sim=1
	docker=${SBXSIM_DOCKER:-1}
	# What sbxsim runs, looked up where it looks (a fixed PATH); dockerd is optional.
	sim_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	have() { local p; p=$(PATH=$sim_path command -v "$1" 2>/dev/null) && [ -f "$p" ] && [ -x "$p" ]; }
	need=() pkgs=()
	for pair in ip:iproute2 nsenter:util-linux setpriv:util-linux iptables-restore:iptables; do
		if ! have "${pair%%:*}"; then
			need+=("${pair%%:*}")
			case " ${pkgs[*]} " in *" ${pair#*:} "*) ;; *) pkgs+=("${pair#*:}") ;; esac
		fi
	done
	# --build is a person's one-time setup: there, install what is missing (Debian's
	# packages) instead of only naming it. Serving never installs anything.
	if [ "$build_only" = 1 ] && command -v apt-get >/dev/null 2>&1; then
		add=()
		for pair in ip:iproute2 nsenter:util-linux setpriv:util-linux iptables-restore:iptables dockerd:docker.io busybox:busybox-static; do
			have "${pair%%:*}" || add+=("${pair#*:}")
		done
		if [ "$docker" = 0 ]; then add=("${add[@]/docker.io/}"); add=("${add[@]/busybox-static/}"); fi
		read -r -a add <<<"${add[*]}"
		if [ ${#add[@]} -gt 0 ]; then
			say "installing sbxsim's prerequisites: apt-get install ${add[*]}"
			DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${add[@]}" >/dev/null
		fi
		need=() pkgs=()
		for pair in ip:iproute2 nsenter:util-linux setpriv:util-linux iptables-restore:iptables; do
			have "${pair%%:*}" || { need+=("${pair%%:*}"); pkgs+=("${pair#*:}"); }
		done
	fi
	if [ ${#need[@]} -gt 0 ]; then
		say "sbxsim needs ${need[*]}, not found: run apt-get install -y ${pkgs[*]} (or bash scripts/setup.sh, which installs everything the tests need)"
		exit 1
	fi
	if [ "$docker" != 0 ] && ! { have dockerd && have busybox; }; then
		say "no dockerd/busybox: sandboxes get no Docker daemon (apt-get install -y docker.io busybox-static to have one)"
		docker=0
	fi
fi

mkdir -p "$out"
build() { # build NAME: cmd/NAME into $out
	local v=()
	if [ -e "$out/$1" ]; then
		say "building $1 into $out…"
	else
		# A cold build: list the packages as they compile (go build -v, on stderr).
		say "building $1 into $out (the first build downloads modules and compiles everything: a minute or more)…"
		v=(-v)
	fi
	(cd "$root" && CGO_ENABLED=0 go build "${v[@]}" -o "$out/$1" "./cmd/$1")
}
build pi-sbx-backend
if [ "$use_sim" = 1 ]; then
	build sbxsim
	# The backend runs sbx with a scrubbed environment, so sbxsim's settings live in a wrapper.
	cat >"$out/sbx.tmp" <<WRAP
#!/bin/sh
exec env SBXSIM_STATE='${SBXSIM_STATE:-/var/lib/sbxsim}' SBXSIM_DOCKER='$docker' '$out/sbxsim' "\$@"
WRAP
	chmod +x "$out/sbx.tmp"
	mv -f "$out/sbx.tmp" "$out/sbx"
	export PI_SBX_BIN="$out/sbx"
	say "no sbx on PATH: using sbxsim (a simulator, not a security boundary; docker inside: $docker)"
fi
if [ "$build_only" = 1 ]; then
	say "built; serve with: bash $0 --workspace DIR"
	exit 0
fi
exec "$out/pi-sbx-backend" serve "$@"
