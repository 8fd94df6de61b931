#!/usr/bin/env bash
# make test: the whole suite against a private PostgreSQL cluster (port 5439,
# apart from make run's 5438 and the system's 5432). Each test binary clones
# its own database from a template migrated here.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .data bin
scripts/pg-install.sh
go build -o bin/parley ./cmd/parley
base=$(bin/parley dev-db --dir .data/pgtest --port 5439 --db parley_template --recreate --drop-prefix parley_test_ --fast)
DATABASE_URL=$base bin/parley migrate >/dev/null
export PARLEY_TEST_DATABASE_URL=${base%/parley_template*}/postgres?sslmode=disable
export PARLEY_TEST_CHROMIUM=${PARLEY_TEST_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
go vet ./...
go test -race -count=1 -timeout 20m "$@" ./...
