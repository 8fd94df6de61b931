#!/usr/bin/env bash
# scripts/test-cpu.sh [go test flags]: make test's wall time and its CPU time
# by part (the Go toolchain and test binaries, Chromium, PostgreSQL), read
# from cgroup v1 cpuacct groups, so that other work on the machine is not
# counted (BENCHMARKS.md, Test suite). Needs root and
# /sys/fs/cgroup/cpuacct; the suite's output goes to .data/test-cpu.log.
set -uo pipefail
cd "$(dirname "$0")/.."
cg=/sys/fs/cgroup/cpuacct/parley-test
if [ ! -w /sys/fs/cgroup/cpuacct ]; then
  echo "test-cpu: needs a writable cgroup v1 cpuacct hierarchy at /sys/fs/cgroup/cpuacct (run as root)" >&2
  exit 2
fi
for g in "" /pg /chromium /go; do mkdir -p "$cg$g" && echo 0 >"$cg$g/cpuacct.usage"; done
chromium=$(command -v chromium-headless-shell || command -v chromium)
wrapper=$(mktemp)
trap 'rm -f "$wrapper"' EXIT
printf '#!/bin/sh\necho $$ >%s/chromium/cgroup.procs\nexec %s "$@"\n' "$cg" "$chromium" >"$wrapper"
chmod +x "$wrapper"
mkdir -p .data
bin/parley dev-db --dir .data/pgtest --stop >/dev/null 2>&1 || true
# The test cluster starts in its own group (make test reuses a running one).
(echo $BASHPID >"$cg/pg/cgroup.procs" && scripts/test-cluster.sh >/dev/null)
start=$(date +%s%N)
(echo $BASHPID >"$cg/go/cgroup.procs" && PARLEY_TEST_KEEP_CLUSTER=1 PARLEY_TEST_CHROMIUM=$wrapper scripts/test.sh "$@") >.data/test-cpu.log 2>&1
rc=$?
end=$(date +%s%N)
bin/parley dev-db --dir .data/pgtest --stop >/dev/null 2>&1 || true
secs() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 1e9 }'; }
go=$(cat "$cg/go/cpuacct.usage") ch=$(cat "$cg/chromium/cpuacct.usage") pg=$(cat "$cg/pg/cpuacct.usage")
echo "make test: exit $rc, wall $(secs $((end - start))) s; CPU $(secs $((go + ch + pg))) s: Go toolchain and tests $(secs "$go"), Chromium $(secs "$ch"), PostgreSQL $(secs "$pg")"
exit "$rc"
