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
# Two builds, or two schemas, in one run: BENCH_PARLEY_BIN_B=<binary> and/or
# BENCH_SQL_B='<statements>' start a second server (port BENCH_PORT_B, 8154)
# on a database of its own in the same cluster (parley_load_b, seeded alike;
# BENCH_SQL applies to the first database only), and loadgen measures both in
# every round, their order turning from round to round, then prints each
# figure of B as a ratio to A's, round by round. BENCH_NAMES=<a>,<b> labels
# them (default A,B). Many short rounds compare best: -rounds 10 -n 500.
# BENCH_FLOOR=1 makes the second server cmd/loadfloor instead (named floor):
# the least a chat server can do, one INSERT committed to disk and the model
# relayed, the yardstick of what Parley adds on this machine.
# BENCH_FLOOR=reply: the floor that also stores the answer, committed to disk
# before its last event (loadfloor -reply), as Parley promises (named
# floor+reply).
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
compare= floor=${BENCH_FLOOR:-} floor_reply=
if [ "$floor" = reply ]; then floor_reply=1; fi
if [ -n "$floor" ]; then
  if [ -n "${BENCH_PARLEY_BIN_B:-}${BENCH_SQL_B:-}" ]; then
    echo "BENCH_FLOOR takes the second server's place: not with BENCH_PARLEY_BIN_B or BENCH_SQL_B" >&2
    exit 2
  fi
  go build -trimpath -o bin/loadfloor ./cmd/loadfloor
fi
if [ -n "${BENCH_PARLEY_BIN_B:-}${BENCH_SQL_B:-}$floor" ]; then
  compare=1
  parley_b=${BENCH_PARLEY_BIN_B:-$parley}
fi
go build -trimpath -o bin/fakellm ./cmd/fakellm
go build -trimpath -o bin/loadgen ./cmd/loadgen
echo "$parley: $(stat -c %s "$parley") bytes"
if [ -n "$compare" ] && [ -z "$floor" ]; then echo "$parley_b (B): $(stat -c %s "$parley_b") bytes"; fi
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
# prepare <parley binary> <database URL> <statements>: the schema, the
# tenant, the seeded conversations, then the experiment's statements.
prepare() {
  DATABASE_URL=$2 "$1" migrate >/dev/null
  DATABASE_URL=$2 "$1" tenant create --slug load --name "Load Co" --plan scale >/dev/null
  # The scale plan's 25,000 conversations a month, plus 1,000 per bot seat: out of the way.
  psql "$2" -qc "UPDATE tenants SET bot_seats = 1000 WHERE slug = 'load'"
  # BENCH_SEED: conversations seeded before the run (parley seed-conversations,
  # ten messages each, then VACUUM ANALYZE), so that the tables a turn writes
  # are of a size a tenant in use has, not new and tiny (whose first growth
  # sets autovacuum's analyses off during the rounds). 0 for none.
  if [ "$seed" -gt 0 ]; then
    DATABASE_URL=$2 "$1" seed-conversations --tenant load --conversations "$seed" >/dev/null
    psql "$2" -qc 'VACUUM ANALYZE'
  fi
  # BENCH_SQL (BENCH_SQL_B for the second server): statements run on the
  # database before the server starts (an experiment's index or setting), e.g.
  # BENCH_SQL='DROP INDEX messages_content_trgm'.
  if [ -n "$3" ]; then psql "$2" -qc "$3"; fi
}
seed=${BENCH_SEED:-20000}
url=http://$PARLEY_ADDR
prepare "$parley" "$DATABASE_URL" "${BENCH_SQL:-}"
if [ -n "$compare" ]; then
  db_b=$("$parley_b" dev-db --dir "${BENCH_PG_DIR:-.data/pgload}" --port "$pg_port" --db parley_load_b --recreate)
  psql "$db_b" -qc 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements'
  if [ -n "$floor" ]; then
    # Parley's schema and tenant, for the load generator's counts (the floor
    # writes a table of its own); no seeded conversations, which it never reads.
    (seed=0; prepare "$parley" "$db_b" "")
  else
    prepare "$parley_b" "$db_b" "${BENCH_SQL_B:-}"
  fi
fi
bin/fakellm -addr "$model_addr" -chunks 50 > "$state/fakellm.log" 2>&1 &
model_pid=$!
"$parley" serve ${BENCH_CPUPROFILE:+--cpuprofile "$BENCH_CPUPROFILE"} 2> "$state/serve.log" &
pid=$!
pids="$pid $model_pid"
trap 'kill $pids 2>/dev/null || true; wait $pids 2>/dev/null || true' EXIT
urls=$url dbs=$DATABASE_URL servers=$pid
if [ -n "$compare" ]; then
  addr_b=127.0.0.1:${BENCH_PORT_B:-8154}
  if [ -n "$floor" ]; then
    bin/loadfloor -addr "$addr_b" -db "$db_b" -model "http://$model_addr/v1" ${floor_reply:+-reply} 2> "$state/serve-b.log" &
  else
    DATABASE_URL=$db_b PARLEY_ADDR=$addr_b "$parley_b" serve 2> "$state/serve-b.log" &
  fi
  pid_b=$!
  pids="$pids $pid_b"
  urls="$urls,http://$addr_b" dbs="$dbs,$db_b" servers="$servers,$pid_b"
fi
for u in ${urls//,/ }; do
  for _ in $(seq 100); do curl -sf -o /dev/null "$u/healthz" && break; sleep 0.2; done
  curl -sf -o /dev/null "$u/healthz" || { echo "the server at $u did not start: $state/serve*.log" >&2; exit 1; }
done
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(uname -sr)"
names=()
if [ -n "$floor" ]; then
  names=(-names "${BENCH_NAMES:-Parley,floor${floor_reply:++reply}}")
elif [ -n "$compare" ]; then
  names=(-names "${BENCH_NAMES:-A,B}")
fi
bin/loadgen -parley "$urls" -model "http://$model_addr/v1" -tenant load -db "$dbs" \
  -parley-pid "$servers" -model-pid "$model_pid" "${names[@]}" "$@"
