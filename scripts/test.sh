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
