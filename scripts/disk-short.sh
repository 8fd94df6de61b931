#!/usr/bin/env bash
# scripts/disk-short.sh DIR: succeeds (and says why on stderr) when make
# test should run lean there: PARLEY_TEST_LEAN is set, or the disk holding
# DIR has less than 8 GiB free (the kept test binaries take 2 GB beside a
# build cache of 4-5 GB; BENCHMARKS.md, "the suite on a short disk").
# scripts/test.sh and scripts/gotest.sh both ask it, so the rule is one.
[ -n "${PARLEY_TEST_LEAN:-}" ] && exit 0
avail=$(df -Pk "${1:?a directory}" | awk 'NR == 2 { print $4 }')
if [ "${avail:-0}" -lt $((8 * 1024 * 1024)) ]; then
  echo "make test: $((${avail:-0} / 1024)) MiB free for $1: lean (the packages compiled a few at a time, each test binary deleted once run)" >&2
  exit 0
fi
exit 1
