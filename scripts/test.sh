#!/usr/bin/env bash
# make test: go vet, staticcheck, then the whole suite against a private
# PostgreSQL cluster. Each test binary clones its own database from a
# template migrated here.
set -euo pipefail
cd "$(dirname "$0")/.."
# The cluster stops when the suite ends (pass or fail), so that port 5439 is
# free for make test in another checkout; PARLEY_TEST_KEEP_CLUSTER=1 leaves it
# running, to run single packages against it afterwards (README, Tests).
if [ -z "${PARLEY_TEST_KEEP_CLUSTER:-}" ]; then
  trap 'bin/parley dev-db --dir .data/pgtest --stop 2>/dev/null' EXIT
fi
PARLEY_TEST_DATABASE_URL=$(scripts/test-cluster.sh)
export PARLEY_TEST_DATABASE_URL
# The browser tests drive chromium-headless-shell, else chromium
# (web/webtest/browser.go, ChromiumPath); PARLEY_TEST_CHROMIUM picks another.

# The race detector sleeps a second as each test binary exits, so that
# goroutines left running after the last test have time to race. A race
# during a test is reported as it happens and fails that test; the sleep
# only held one of go test's two slots a second per package (go test -race
# -run NONE ./...: 26 s with it, 21 s without).
export GORACE=${GORACE:-atexit_sleep_ms=0}
# go vet and staticcheck (the version pinned by go.mod's tool directive)
# run beside the tests, whose first seconds are links that leave a core
# idle; the suite fails when either finds anything.
# gofmt: every Go file as gofmt writes it (CI checks the same).
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.data/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
# Lean, where the disk is short (under 8 GiB free where the test binaries
# go, or PARLEY_TEST_LEAN=1): a go command keeps every package it compiled
# in its own work directory until it exits, beside the build cache's copy,
# so four of them compiling at once on an empty cache (vet, staticcheck's
# go list, two test binaries) held 4 GB of work directories on top of the
# cache's 3.6 (BENCHMARKS.md, Test suite). So the race build's packages are
# compiled first, in dependency order, a few dozen a go command; the checks
# and the tests then find them in the cache. The static build of
# scripts/check-deploy.sh, whose packages nothing else shares, runs after
# the tests. scripts/gotest.sh then links each test binary just before it
# runs and deletes it after, rather than keep them all (2 GB).
mkdir -p .data
if scripts/disk-short.sh .data; then
  export PARLEY_TEST_LEAN=1
fi
if [ -n "${PARLEY_TEST_LEAN:-}" ]; then
  # Every package the test binaries import (the test-only ones too), but
  # the test variants and main packages, which only the binaries' own
  # builds compile.
  go list -deps -test -f '{{if not (or .ForTest (eq .Name "main"))}}{{.ImportPath}}{{end}}' ./... |
    grep -v '\.test$' | xargs -r -n 60 go build -race 2>/dev/null ||
    true # a package that does not build fails below, with its message
fi
# go vet -race: vet type-checks each package against its imports' export
# data, which the race-instrumented compiles of the test binaries below
# produce too, so vet shares them in the build cache instead of compiling
# every package a second time without -race (on an empty cache: 0.2 GB and
# 45 s of CPU less for ./db/ alone; no file of the module depends on the
# race build tag).
go vet -race ./... & vet=$!
# staticcheck loads the same export data through go list: -race there too
# (for ./db/ on an empty cache: 9 MB and 4 s with it, 106 MB and 24 s
# without).
GOFLAGS="-race ${GOFLAGS:-}" go tool staticcheck ./... & lint=$!
# The packaging (deploy/): the Dockerfile's static binary, the systemd
# units' verify, HAProxy's configuration (scripts/check-deploy.sh).
if [ -z "${PARLEY_TEST_LEAN:-}" ]; then
  scripts/check-deploy.sh & deploy=$!
fi
# The OpenAPI document, linted by Redocly's CLI (pinned here; npm's cache
# keeps it after the first run, which fetches it from the npm registry) with
# its recommended rules as errors (redocly.yaml; what is left on purpose is
# named in .redocly.lint-ignore.yaml): any finding fails the suite, and is
# listed in .data/openapi-lint.log.
mkdir -p .data
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
  npx --yes @redocly/cli@2.77.0 lint --config redocly.yaml --format=stylish web/openapi.json >.data/openapi-lint.log 2>&1 & openapi=$!
# The TypeScript client (clients/typescript, README "Typed clients"): its
# packages as package-lock.json pins them (scripts/clients-npm.sh; npm's
# cache keeps them after the first fetch), then tsc type-checks the example
# and checks.ts, the mistakes it must refuse, against the generated
# schema.d.ts (whether that is the document's, web's TestClientsGenerated
# checks).
(scripts/clients-npm.sh && cd clients/typescript && node_modules/.bin/tsc --noEmit -p .) \
  >.data/clients-typecheck.log 2>&1 & typecheck=$!
# go test -race, through scripts/gotest.sh: the test binaries built with
# go test -c into .data/testbin/ (a binary already there with the build ID
# it would link is not linked again: a second run links nothing) and then run, two at a time, each with -test.parallel 4 (the
# browser tests wait on Chromium and on each other's pages more than they
# compute; four at a time keeps both cores busy). -vet=off: go vet ./...
# beside it runs every check go test would run again on each package it
# builds (its vet is a subset of go vet's), tests included.
# The longest test binaries first, in the order given here: the
# dashboard's and the REST API's tests (each about 50 s, half of it
# Chromium's and the race detector's CPU), then the packages whose tests
# wait longest (a job runner killed and restarted, the CLI's server started
# and drained, the cluster's failover): the rest run beside them.
# GOGC=400: the test binaries (and the compiler) collect garbage a quarter
# as often; memory is not what this machine lacks, CPU is (the suite keeps
# both cores busy): 12 s less CPU a run. -ldflags=-w (gotest.sh): no DWARF
# in the test binaries, a quarter less CPU for each link.
export GOGC=${GOGC:-400}
status=0
scripts/gotest.sh "$@" ./handlers/admin/ ./web/ ./handlers/api/ ./handlers/public/ ./jobs/ ./cmd/parley/ ./cmd/parley/clustertest/ ./... || status=$?
wait "$vet" || { echo "go vet failed" >&2; status=1; }
wait "$lint" || { echo "staticcheck failed" >&2; status=1; }
if [ -n "${PARLEY_TEST_LEAN:-}" ]; then
  scripts/check-deploy.sh & deploy=$!
fi
wait "$deploy" || { echo "the packaging check (scripts/check-deploy.sh) failed" >&2; status=1; }
wait "$openapi" || { cat .data/openapi-lint.log >&2; echo "the OpenAPI document's lint failed" >&2; status=1; }
wait "$typecheck" || { cat .data/clients-typecheck.log >&2; echo "the TypeScript client's type-check failed" >&2; status=1; }
exit "$status"
