#!/usr/bin/env bash
# Alternating host/VM `git status` on a copy of Go's src, over sbxsim's share, with and
# without the git configuration the tools give commands in the VM (core.checkStat=minimal,
# core.trustctime=false). Prints the median seconds per side and the ratio to host-only.
# Needs root, git and a built sbxsim:  go build -o /tmp/sbxsim ./cmd/sbxsim
# Usage: scripts/bench-git-share.sh [SBXSIM] [bind|fuse] [ROUNDS]
set -euo pipefail
sim=${1:-/tmp/sbxsim} share=${2:-fuse} rounds=${3:-7}
work=$(mktemp -d /tmp/bench-git-share.XXXXXX)
export SBXSIM_STATE=$work/state SBXSIM_DOCKER=0
[ "$share" = fuse ] && export SBXSIM_SHARE=fuse SBXSIM_SHARE_CACHE=${SBXSIM_SHARE_CACHE:-auto}
box=bench-git-$$
trap '"$sim" rm --force "$box" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
ws=$work/src
cp -a "$(go env GOROOT)/src" "$ws"
g() { git -c user.name=b -c user.email=b@e -c init.defaultBranch=main "$@"; }
(cd "$ws" && g init -q && g add -A && g commit -q -m src && g status --porcelain >/dev/null)
"$sim" create -q --name "$box" shell "$ws"
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f\n", e - s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
host() { (cd "$ws" && git status --porcelain); }
vm_default() { "$sim" exec "$box" git status --porcelain; }
vm_tools() { "$sim" exec -e GIT_CONFIG_COUNT=2 -e GIT_CONFIG_KEY_0=core.checkStat -e GIT_CONFIG_VALUE_0=minimal \
	-e GIT_CONFIG_KEY_1=core.trustctime -e GIT_CONFIG_VALUE_1=false "$box" git status --porcelain; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
host; h=$(for _ in $(seq "$rounds"); do t host; done | median)
vm_tools; v=$(for _ in $(seq "$rounds"); do t vm_tools; done | median)
echo "share=$share files=$(cd "$ws" && git ls-files | wc -l) rounds=$rounds"
echo "host only:            $h s"
echo "VM only (tools' env): $v s"
for mode in vm_default vm_tools; do
	hs=() vs=()
	for _ in $(seq "$rounds"); do hs+=("$(t host)"); vs+=("$(t "$mode")"); done
	hm=$(printf '%s\n' "${hs[@]}" | median) vm=$(printf '%s\n' "${vs[@]}" | median)
	echo "alternating, VM git $mode: host $hm s ($(ratio "$hm" "$h")x host-only), VM $vm s ($(ratio "$vm" "$v")x VM-only)"
done
