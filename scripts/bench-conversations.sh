#!/usr/bin/env bash
# The conversations API benchmarks of BENCHMARKS.md (issue 12): a real server,
# its own process, on make run's PostgreSQL cluster (.data/pg, port 5438,
# default durability; BENCH_PG_PORT for another port) in a database of its own, parley_bench, seeded once by
# `parley seed-conversations` with 100,000 conversations and about 1,000,000
# messages (about 30 s; kept for the next run, about 400 MB in the cluster).
# BENCH_RESEED=1 starts again from an empty database. (Not PARLEY_ names: the
# server refuses PARLEY_ variables it does not know.)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .data bin
go build -o bin/parley ./cmd/parley
scripts/pg-install.sh
state=.data/bench-conversations
mkdir -p "$state"
recreate=()
if [ ! -s "$state/token" ] || [ -n "${BENCH_RESEED:-}" ]; then
  rm -f "$state/token"
  recreate=(--recreate)
fi
DATABASE_URL=$(bin/parley dev-db --dir .data/pg --port "${BENCH_PG_PORT:-5438}" --db parley_bench "${recreate[@]}")
export DATABASE_URL
if [ ! -s "$state/secret.key" ]; then
  (umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > "$state/secret.key")
fi
PARLEY_SECRET_KEY=$(cat "$state/secret.key")
export PARLEY_SECRET_KEY
export PARLEY_ADDR=127.0.0.1:${BENCH_PORT:-8097} PARLEY_LOG_FORMAT=text
url=http://$PARLEY_ADDR
bin/parley migrate >/dev/null
bin/parley serve 2> "$state/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf -o /dev/null "$url/healthz" && break; sleep 0.2; done
curl -sf -o /dev/null "$url/healthz" || { echo "the server did not start: $state/serve.log" >&2; exit 1; }
if [ ! -s "$state/token" ]; then
  bin/parley tenant create --slug bench --name "Bench Co" --plan scale | sed -n 's/.*"token": "\(.*\)".*/\1/p' > "$state/token.new"
  for s in sales support; do
    curl -sf -o /dev/null -H "Authorization: Bearer $(cat "$state/token.new")" -H 'Content-Type: application/json' \
      -d "{\"slug\":\"$s\",\"name\":\"$s\",\"systemPrompt\":\"You help with $s.\"}" "$url/tenants/bench/segments"
  done
  bin/parley seed-conversations --tenant bench --conversations 100000 --messages-per 10 --days 365
  mv "$state/token.new" "$state/token"
fi
PARLEY_LOAD_URL=$url PARLEY_LOAD_TENANT=bench PARLEY_LOAD_TOKEN=$(cat "$state/token") PARLEY_LOAD_PID=$pid \
  go test -run '^$' -bench BenchmarkConversationsAPI -benchtime "${BENCH_TIMES:-60x}" -count "${BENCH_COUNT:-1}" ./web/
