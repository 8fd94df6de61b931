#!/usr/bin/env bash
# Installs Debian's PostgreSQL server when its binaries are missing.
set -euo pipefail
if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "PostgreSQL server binaries not found: install them with 'sudo apt-get install postgresql'" >&2
  exit 1
fi
echo "Installing PostgreSQL (apt-get)..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq postgresql >/dev/null
