#!/usr/bin/env bash
# scripts/gotest.sh [test flags] [packages]: go test -race for make test
# (scripts/test.sh), in two steps: every package's test binary is built with
# go test -c into .data/testbin/, then the binaries are run, as many at a
# time as the machine has cores, the packages named first starting first.
#
# Why not go test itself: go test links each test binary again on every run
# (-count=1 caches no result), and the suite's 51 race-instrumented binaries
# took about 85 CPU-seconds to link, a third of the suite's CPU on this
# 2-core machine; go test -c -o dir/, like go build -o, links nothing when
# the binary already in dir carries the build ID it would link (the build
# cache holds no linked binary: the files in .data/testbin, about 2 GB, are
# the only copy), so a run after one that built the same code links
# nothing, and after a change only the binaries that changed are linked (BENCHMARKS.md, Test
# suite). Each binary runs in its package's directory with the flags go test
# would give it; the output is go test's: "ok" and the time for a package
# that passed, its whole output and "FAIL" for one that did not.
#
# On a short disk (under 8 GiB free, or PARLEY_TEST_LEAN=1) the binaries
# are not kept: each is linked just before it runs and deleted after.
#
# Test flags are go test's (-run X, -v, -short, -failfast...): each goes to
# the binaries as -test.<flag>. Packages default to ./...; a package named
# twice runs once.
set -uo pipefail
cd "$(dirname "$0")/.."
flags=()
pkgs=()
while [ $# -gt 0 ]; do
  case "$1" in
    -test.*) flags+=("$1") ;;
    -*=*) flags+=("-test.${1#-}") ;;
    -run | -skip | -count | -timeout | -parallel | -cpu | -bench | -benchtime | -list | -shuffle | \
      -fuzz | -fuzztime | -cpuprofile | -memprofile | -blockprofile | -mutexprofile | -trace | -outputdir)
      flags+=("-test.${1#-}=${2:?$1 needs a value}")
      shift
      ;;
    -*) flags+=("-test.${1#-}") ;;
    *) pkgs+=("$1") ;;
  esac
  shift
done
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)
bindir=$PWD/.data/testbin
mkdir -p "$bindir"
# Lean, where the disk is short (scripts/disk-short.sh: under 8 GiB free,
# or PARLEY_TEST_LEAN=1): the binaries kept in .data/testbin take about 2 GB
# (45 MB each, race-instrumented) on top of the build cache, so each
# binary is linked just before it runs and deleted once it has run, and
# those an earlier run kept are deleted first: the links of a second run
# are not saved, but a run needs two binaries' room.
lean=
if scripts/disk-short.sh "$bindir"; then
  lean=1
  rm -rf "${bindir:?}"/[0-9]*
fi
# The packages with tests, in the order given: import path and directory.
mapfile -t list < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' "${pkgs[@]}" | awk 'NF && !seen[$1]++')
[ ${#list[@]} -gt 0 ] || { echo "gotest: no package with tests in ${pkgs[*]}" >&2; exit 1; }
# go test -c -o dir/ names each binary after its package's last element, so
# packages sharing one (cmd/parley and the module's root, handlers/voice
# and handlers/admin/voice) are built into different directories.
declare -A group_of=() taken=()
groups=0
jobs=()
for entry in "${list[@]}"; do
  pkg=${entry%% *}
  base=${pkg##*/}
  g=0
  while [ -n "${taken[$g/$base]:-}" ]; do g=$((g + 1)); done
  taken[$g/$base]=1
  group_of[$pkg]=$g
  [ $((g + 1)) -gt $groups ] && groups=$((g + 1))
  jobs+=("$pkg ${entry#* } $bindir/$g/$base.test")
done
for ((g = 0; g < groups; g++)); do
  [ -z "$lean" ] || { mkdir -p "$bindir/$g"; continue; }
  members=()
  for entry in "${list[@]}"; do
    pkg=${entry%% *}
    [ "${group_of[$pkg]}" = "$g" ] && members+=("$pkg")
  done
  mkdir -p "$bindir/$g"
  go test -c -race -vet=off -ldflags=-w -o "$bindir/$g/" "${members[@]}" || {
    echo "FAIL: the test binaries did not build" >&2
    exit 2
  }
done

export GOTEST_LOCK=$bindir/.print-lock GOTEST_LEAN=$lean
run_one() {
  local pkg=$1 dir=$2 bin=$3 log start end rc secs
  log=$(mktemp)
  start=$(date +%s%N)
  rc=0
  if [ -n "$GOTEST_LEAN" ]; then
    go test -c -race -vet=off -ldflags=-w -o "$bin" "$pkg" >"$log" 2>&1 || { rc=$?; echo "FAIL: the test binary did not build" >>"$log"; }
  fi
  if [ "$rc" = 0 ]; then
    (cd "$dir" && exec "$bin" -test.paniconexit0 -test.count=1 -test.parallel=4 -test.timeout=20m "${@:4}") >"$log" 2>&1
    rc=$?
  fi
  [ -z "$GOTEST_LEAN" ] || rm -f "$bin"
  end=$(date +%s%N)
  secs=$(awk -v n=$((end - start)) 'BEGIN { printf "%.3f", n / 1e9 }')
  {
    flock 9
    if [ "$rc" = 0 ]; then
      if grep -q -- '^=== RUN\|^--- ' "$log"; then cat "$log"; fi
      printf 'ok  \t%s\t%ss\n' "$pkg" "$secs"
    else
      cat "$log"
      printf 'FAIL\t%s\t%ss\n' "$pkg" "$secs"
    fi
  } 9>>"$GOTEST_LOCK"
  rm -f "$log"
  [ "$rc" = 0 ]
}
export -f run_one
status=0
for job in "${jobs[@]}"; do printf '%s\n' $job; done |
  xargs -d '\n' -n 3 -P "$(nproc)" bash -c 'run_one "$@" '"${flags[*]@Q}" _ || status=1
[ "$status" = 0 ] || echo FAIL
exit "$status"
