#!/usr/bin/env bash
# make bench-load: chat as users run it (BENCHMARKS.md, issue 18). Three
# processes: `parley serve` (a release build) on a private PostgreSQL cluster
# with the default durability (.data/pgload on port 5452, BENCH_PG_PORT and
# BENCH_PG_DIR to change them; pg_stat_statements preloaded), a zero-latency
# OpenAI-compatible model streaming 50 chunks (cmd/fakellm), and the load
# generator (cmd/loadgen), which interleaves rounds straight to the model and
# through Parley. The database parley_load is made anew on each run.
# Arguments go to loadgen, e.g. scripts/bench-load.sh -rounds 1 -conc 1,50,200.
# BENCH_PARLEY_BIN runs that parley binary instead of building one (to compare
# builds: run the script alternately with each); BENCH_CPUPROFILE=<file> has
# the server write a CPU profile of the whole run (serve --cpuprofile).
# (Not PARLEY_ names for the knobs: the server refuses PARLEY_ variables it
# does not know.)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .data bin
state=.data/bench-load
mkdir -p "$state"
parley=${BENCH_PARLEY_BIN:-bin/parley}
if [ -z "${BENCH_PARLEY_BIN:-}" ]; then
  go build -trimpath -ldflags "-s -w" -o bin/parley ./cmd/parley
fi
go build -trimpath -o bin/fakellm ./cmd/fakellm
go build -trimpath -o bin/loadgen ./cmd/loadgen
echo "$parley: $(stat -c %s "$parley") bytes"
scripts/pg-install.sh
pg_port=${BENCH_PG_PORT:-5452}
DATABASE_URL=$("$parley" dev-db --dir "${BENCH_PG_DIR:-.data/pgload}" --port "$pg_port" --db parley_load --recreate)
export DATABASE_URL
# pg_stat_statements needs a restart with it preloaded; pg_ctl restart keeps
# the options dev-db started the cluster with (postmaster.opts).
if ! psql "$DATABASE_URL" -Atc 'SHOW shared_preload_libraries' | grep -q pg_stat_statements; then
  datadir=$(psql "$DATABASE_URL" -Atc 'SHOW data_directory')
  psql "$DATABASE_URL" -qc "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"
  bindir=$(psql "$DATABASE_URL" -Atc "SELECT setting FROM pg_config WHERE name = 'BINDIR'")
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$bindir/pg_ctl" restart -D "$datadir" -m fast -w -t 60 >/dev/null
  else
    "$bindir/pg_ctl" restart -D "$datadir" -m fast -w -t 60 >/dev/null
  fi
fi
psql "$DATABASE_URL" -qc 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements'
if [ ! -s "$state/secret.key" ]; then
  (umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > "$state/secret.key")
fi
PARLEY_SECRET_KEY=$(cat "$state/secret.key")
model_addr=127.0.0.1:${BENCH_MODEL_PORT:-8153}
export PARLEY_SECRET_KEY PARLEY_ADDR=127.0.0.1:${BENCH_PORT:-8152} PARLEY_LOG_FORMAT=text \
  PARLEY_LLM_PROVIDER=openai PARLEY_LLM_BASE_URL=http://$model_addr/v1 PARLEY_LLM_MODEL=fake PARLEY_LLM_API_KEY=fake \
  PARLEY_TRUSTED_PROXIES=127.0.0.1/32
url=http://$PARLEY_ADDR
"$parley" migrate >/dev/null
"$parley" tenant create --slug load --name "Load Co" --plan scale >/dev/null
# The scale plan's 25,000 conversations a month, plus 1,000 per bot seat: out of the way.
psql "$DATABASE_URL" -qc "UPDATE tenants SET bot_seats = 1000 WHERE slug = 'load'"
# BENCH_SEED: conversations seeded before the run (parley seed-conversations,
# ten messages each, then VACUUM ANALYZE), so that the tables a turn writes
# are of a size a tenant in use has, not new and tiny (whose first growth
# sets autovacuum's analyses off during the rounds). 0 for none.
seed=${BENCH_SEED:-20000}
if [ "$seed" -gt 0 ]; then
  "$parley" seed-conversations --tenant load --conversations "$seed" >/dev/null
  psql "$DATABASE_URL" -qc 'VACUUM ANALYZE'
fi
# BENCH_SQL: statements run on the database before the server starts (an
# experiment's index or setting), e.g. BENCH_SQL='DROP INDEX messages_content_trgm'.
if [ -n "${BENCH_SQL:-}" ]; then psql "$DATABASE_URL" -qc "$BENCH_SQL"; fi
bin/fakellm -addr "$model_addr" -chunks 50 > "$state/fakellm.log" 2>&1 &
model_pid=$!
"$parley" serve ${BENCH_CPUPROFILE:+--cpuprofile "$BENCH_CPUPROFILE"} 2> "$state/serve.log" &
pid=$!
trap 'kill $pid $model_pid 2>/dev/null || true; wait $pid $model_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf -o /dev/null "$url/healthz" && break; sleep 0.2; done
curl -sf -o /dev/null "$url/healthz" || { echo "the server did not start: $state/serve.log" >&2; exit 1; }
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(uname -sr)"
bin/loadgen -parley "$url" -model "http://$model_addr/v1" -tenant load -db "$DATABASE_URL" \
  -parley-pid "$pid" -model-pid "$model_pid" "$@"
