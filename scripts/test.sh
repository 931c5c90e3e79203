#!/usr/bin/env bash
# test.sh: set up a fresh Debian 12 machine (as root) and run every test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
echo "== go vet" >&2
go vet ./...
echo "== go test" >&2
go test -count=1 -timeout 20m ./... 2>&1 | tee .cache/test.log
# The race detector over the concurrent parts (needs cgo's C compiler).
if command -v gcc >/dev/null 2>&1; then
	echo "== go test -race" >&2
	go test -race -count=1 -timeout 20m ./backend ./agent ./sbx ./shell ./tools ./fsops 2>&1 | tee -a .cache/test.log
fi
