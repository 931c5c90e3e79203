#!/usr/bin/env bash
# release.sh VERSION [OUT]: everything a release publishes, into OUT (dist/release): for
# every host platform in npm/platforms.json an archive (tar.gz; zip for Windows) of
# pi-sbx-backend with both linux agents embedded, the npm packages packed (the pi package
# pi-sbx and one package per platform), and SHA256SUMS. Nothing is published.
#
# Reproducible: the same commit gives byte-identical files (-trimpath, no VCS stamp but
# the commit given with -X, gzip -n, archives with fixed times and owners, npm pack's own
# fixed times). PI_SBX_COMMIT overrides the commit (for a tree without .git);
# SOURCE_DATE_EPOCH the archives' time (default: the commit's). Needs Go, Node.js with
# npm, GNU tar, gzip, zip and sha256sum.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=${1:?usage: release.sh VERSION [OUT]}
out=${2:-$root/dist/release}
case $out in /*) ;; *) out=$PWD/$out ;; esac # the archives are made from inside other directories
if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
	echo "release: VERSION must be x.y.z (semver, as npm needs), got \"$version\"" >&2
	exit 2
fi
commit=${PI_SBX_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"

ldflags="-s -w -X main.version=$version -X main.commit=$commit"
build() { # GOOS GOARCH OUTPUT [go build flags…]
	local goos=$1 goarch=$2 output=$3
	shift 3
	GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go build -trimpath -buildvcs=false "$@" -ldflags "$ldflags" -o "$output" ./cmd/pi-sbx-backend
}

# The agents first: every host embeds both, compressed (agentbin, tag embedagents). The
# overlay puts them where go:embed looks without writing into the source tree.
echo "release: agents linux/amd64 linux/arm64" >&2
for arch in amd64 arm64; do
	build linux "$arch" "$work/agent-linux-$arch"
	gzip -9 -n -c "$work/agent-linux-$arch" >"$work/linux-$arch.gz"
done
printf '{"Replace":{"%s":"%s","%s":"%s"}}\n' \
	"$root/internal/host/agentbin/agents/linux-amd64.gz" "$work/linux-amd64.gz" \
	"$root/internal/host/agentbin/agents/linux-arm64.gz" "$work/linux-arm64.gz" >"$work/overlay.json"

rm -rf "$out"
mkdir -p "$out/npm" "$work/hosts"
platforms=$(node -e 'for (const p of JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).platforms) console.log(p.goos, p.goarch)' npm/platforms.json)
while read -r goos goarch; do
	exe=pi-sbx-backend
	[ "$goos" = windows ] && exe=pi-sbx-backend.exe
	echo "release: $goos/$goarch" >&2
	dir="$work/hosts/$goos-$goarch"
	mkdir -p "$dir"
	build "$goos" "$goarch" "$dir/$exe" -tags embedagents -overlay "$work/overlay.json"
	touch -d "@$epoch" "$dir/$exe"
	name="pi-sbx-backend-$version-$goos-$goarch"
	if [ "$goos" = windows ]; then
		(cd "$dir" && TZ=UTC zip -q -X -9 "$out/$name.zip" "$exe")
	else
		tar -C "$dir" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -cf - "$exe" | gzip -9 -n >"$out/$name.tar.gz"
	fi
done <<<"$platforms"

echo "release: npm packages" >&2
node npm/stage.mjs "$version" "$commit" "$work/hosts" "$work/npm"
for dir in "$work"/npm/*/; do
	(cd "$dir" && npm pack --silent --pack-destination "$out/npm" >/dev/null)
done
(cd "$out" && sha256sum -- *.tar.gz *.zip npm/*.tgz >SHA256SUMS)
ls -l "$out" "$out/npm" >&2
