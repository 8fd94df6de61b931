#!/usr/bin/env bash
# The packaging of deploy/ as far as this machine can build it (make test):
# the static binary the Dockerfile builds (CGO_ENABLED=0, its flags), which
# must have no program interpreter and run; the systemd units through
# `systemd-analyze verify` where systemd is installed, with the binary's
# path swapped for the one just built (verify wants ExecStart to exist);
# HAProxy's configuration of the compose file through `haproxy -c` where
# HAProxy is installed. Docker itself is not here: the image and the
# compose file are not built (README, Packaging).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
out=bin/parley-static
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out" ./cmd/parley
if command -v readelf >/dev/null && readelf -l "$out" | grep -q INTERP; then
  echo "check-deploy: $out is dynamically linked" >&2
  exit 1
fi
"$out" help >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if command -v systemd-analyze >/dev/null; then
  bin=$(realpath "$out")
  for unit in deploy/systemd/*.service deploy/systemd/*.timer; do
    sed "s#/usr/local/bin/parley#$bin#g" "$unit" >"$tmp/$(basename "$unit")"
  done
  # Verified together, so that the timer finds its service. Only the units'
  # own messages fail the check: verify also reads the host's units, whose
  # complaints (in a container, say) are not ours.
  if ! (cd "$tmp" && systemd-analyze verify ./*.service ./*.timer) >"$tmp/verify.log" 2>&1; then
    if grep -q "parley" "$tmp/verify.log"; then
      cat "$tmp/verify.log" >&2
      echo "check-deploy: systemd-analyze verify failed" >&2
      exit 1
    fi
  fi
  if grep "parley" "$tmp/verify.log" >&2; then
    echo "check-deploy: systemd-analyze verify warned about the units" >&2
    exit 1
  fi
else
  echo "check-deploy: systemd-analyze not installed: the units are not verified" >&2
fi
if command -v haproxy >/dev/null; then
  haproxy -c -q -f deploy/docker/haproxy.cfg
else
  echo "check-deploy: haproxy not installed: deploy/docker/haproxy.cfg is not checked" >&2
fi
