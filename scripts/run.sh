#!/usr/bin/env bash
# make run: a private PostgreSQL cluster under .data/, migrations, the demo
# tenant on an empty database, then the server on PARLEY_ADDR (default :8080).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .data bin
go build -o bin/parley ./cmd/parley
if [ -z "${DATABASE_URL:-}" ]; then
  scripts/pg-install.sh
  DATABASE_URL=$(bin/parley dev-db --dir .data/pg --port "${PARLEY_DEV_PG_PORT:-5438}" --db parley)
  export DATABASE_URL
fi
if [ -z "${PARLEY_SECRET_KEY:-}" ]; then
  if [ ! -s .data/secret.key ]; then
    (umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > .data/secret.key)
  fi
  PARLEY_SECRET_KEY=$(cat .data/secret.key)
  export PARLEY_SECRET_KEY
fi
bin/parley migrate
bin/parley seed-demo
# parley serve prints where it listens and the address to open (PARLEY_ADDR, PARLEY_BASE_URL).
exec bin/parley serve
