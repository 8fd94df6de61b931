#!/usr/bin/env bash
# Starts (or reuses) the private test cluster on port PARLEY_TEST_PG_PORT
# (default 5439, apart from make run's 5438 and the system's 5432), recreates
# the migrated template every test binary clones its database from, and
# prints the admin URL the tests use.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .data bin
scripts/pg-install.sh
go build -o bin/parley ./cmd/parley
base=$(bin/parley dev-db --dir "${PARLEY_TEST_PG_DIR:-.data/pgtest}" --port "${PARLEY_TEST_PG_PORT:-5439}" --db parley_template --recreate --drop-prefix parley_test_ --fast)
DATABASE_URL=$base bin/parley migrate >/dev/null
echo "${base%/parley_template*}/postgres?sslmode=disable"
