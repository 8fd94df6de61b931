#!/usr/bin/env bash
# make cluster: Parley as it runs on more than one machine, on loopback
# (README, "Running more than one instance" and "Database failover").
#
#   scripts/cluster.sh [start]   a PostgreSQL primary with a synchronous
#                                streaming standby, CLUSTER_INSTANCES (3)
#                                `parley serve` and HAProxy in front of them
#   scripts/cluster.sh plan      the connection budget only (exits 1 when it
#                                cannot fit)
#   scripts/cluster.sh status    what runs, HAProxy's view of the instances,
#                                and which database is the primary
#   scripts/cluster.sh failover  stops the primary as a crash would (pg_ctl
#                                stop -m immediate) and promotes the standby
#   scripts/cluster.sh requests  with CLUSTER_HAPROXY_LOG=1: HAProxy's chat
#                                requests by status and termination state, and
#                                the longest time without an answered turn
#   scripts/cluster.sh stop      stops everything it started (make cluster-stop)
#
# Each start begins anew: the clusters under CLUSTER_DIR are made again, the
# schema migrated and the demo tenant seeded (its owner login and API token
# are printed). Knobs (not PARLEY_ names: the server refuses PARLEY_
# variables it does not know):
#   CLUSTER_INSTANCES (3), CLUSTER_DIR (.data/cluster), CLUSTER_PORT (HAProxy,
#   8170), CLUSTER_INSTANCE_PORT (the first instance's, 8171; the others
#   follow), CLUSTER_PG_PORT (the primary's, 5456; the standby's is the next),
#   CLUSTER_PG_MAX_CONNECTIONS (PostgreSQL's max_connections, 100),
#   CLUSTER_FAKE_MODEL=1 (the instances talk to cmd/fakellm on
#   CLUSTER_MODEL_PORT, 8169, 50 chunks an answer: for cmd/loadgen),
#   CLUSTER_FAST=1 (fsync off: a test's durability, not production's),
#   CLUSTER_ONE_PORT (also a second HAProxy frontend on this port in front of
#   the first instance alone, to compare one instance with all in one run),
#   CLUSTER_HAPROXY_LOG=1 (HAProxy logs every request to run/haproxy.log).
# PARLEY_DB_MAX_CONNS (by default 4 a core, from 8 to 20) and the other PARLEY_ variables reach the
# instances as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-start}
n=${CLUSTER_INSTANCES:-3}
dir=${CLUSTER_DIR:-.data/cluster}
lb_port=${CLUSTER_PORT:-8170}
first_port=${CLUSTER_INSTANCE_PORT:-8171}
pg_port=${CLUSTER_PG_PORT:-5456}
standby_port=$((pg_port + 1))
pg_max=${CLUSTER_PG_MAX_CONNECTIONS:-100}
# The instances' pool as parley serve sizes it unless PARLEY_DB_MAX_CONNS
# says (web.DefaultDBMaxConns): four connections a core, from 8 to 20.
cores=$(nproc)
pool=${PARLEY_DB_MAX_CONNS:-$((cores * 4 < 8 ? 8 : (cores * 4 > 20 ? 20 : cores * 4)))}
model_port=${CLUSTER_MODEL_PORT:-8169}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
state=$dir/run # pid files and logs

# budget checks the connection budget and prints it; it returns 1 when the
# plan cannot fit. Each instance holds its pool (PARLEY_DB_MAX_CONNS) and
# two connections of its own beside it: River's listener (taken from the
# pool, then kept apart from it) and the live hub's LISTEN connection
# (db/live). Beside the instances: a migration or a command of parley's
# (its own small pool, up to 4) and a psql of the operator's, 6 in all,
# and PostgreSQL's superuser_reserved_connections (3), kept for the
# administrator when everything else is taken.
budget() {
  local per=$((pool + 2)) headroom=6 reserved=3
  local need=$((n * per + headroom + reserved))
  echo "connection budget: $n instances x ($pool pool + 2 listeners) + $headroom for migrations and psql + $reserved reserved for superusers = $need of max_connections $pg_max"
  if [ "$need" -gt "$pg_max" ]; then
    local fit=$(((pg_max - headroom - reserved) / n - 2))
    echo "cluster: this plan cannot fit: $need connections are needed and PostgreSQL allows $pg_max." >&2
    if [ "$fit" -ge 1 ]; then
      echo "cluster: set PARLEY_DB_MAX_CONNS=$fit or less, run fewer instances (CLUSTER_INSTANCES), or raise max_connections (CLUSTER_PG_MAX_CONNECTIONS)." >&2
    else
      echo "cluster: run fewer instances (CLUSTER_INSTANCES) or raise max_connections (CLUSTER_PG_MAX_CONNECTIONS)." >&2
    fi
    return 1
  fi
}

# The data directories: under CLUSTER_DIR, or, as root when the postgres
# user cannot reach it (a checkout under /root), in a temporary directory
# named after it, as `parley dev-db` does.
pgdata=$dir
if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$dir" 2>/dev/null; then
  pgdata=${TMPDIR:-/tmp}/parley-cluster-$(printf %s "$dir" | sha256sum | cut -c1-8)
fi
primary=$pgdata/primary
standby=$pgdata/standby

pgbin() {
  if command -v pg_ctl >/dev/null 2>&1; then dirname "$(readlink -f "$(command -v pg_ctl)")"; return; fi
  ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1
}
# pg runs one of PostgreSQL's programs, as the postgres user when root.
pg() {
  local prog=$1; shift
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$(pgbin)/$prog" "$@"; else "$(pgbin)/$prog" "$@"; fi
}
url() { echo "postgres://postgres@127.0.0.1:$1/${2:-parley}?sslmode=disable"; }

stop_pid() { # stop_pid <name>: SIGTERM, then wait for it to end (30 s at most)
  local f=$state/$1.pid
  [ -s "$f" ] || return 0
  local pid; pid=$(cat "$f")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$f"
}

stop_all() {
  for i in $(seq 1 64); do [ -e "$state/parley-$i.pid" ] && stop_pid "parley-$i"; done
  stop_pid haproxy
  stop_pid fakellm
  for d in "$primary" "$standby"; do
    if [ -f "$d/postmaster.pid" ]; then pg pg_ctl stop -D "$d" -m fast -w -t 60 >/dev/null 2>&1 || true; fi
  done
}

primary_of() { # which of the two answers as a primary
  for p in "$pg_port" "$standby_port"; do
    if [ "$(psql "$(url "$p" postgres)" -Atc 'SELECT NOT pg_is_in_recovery()' 2>/dev/null)" = t ]; then echo "$p"; return; fi
  done
  echo none
}

case $cmd in
plan)
  budget
  exit
  ;;
stop)
  stop_all
  echo "cluster stopped"
  exit
  ;;
status)
  for f in "$state"/*.pid; do
    [ -e "$f" ] || continue
    name=$(basename "$f" .pid)
    if kill -0 "$(cat "$f")" 2>/dev/null; then echo "$name: running (pid $(cat "$f"))"; else echo "$name: not running"; fi
  done
  echo "PostgreSQL primary: port $(primary_of)"
  psql "$(url "$(primary_of)" postgres)" -Atc "SELECT 'standby ' || application_name || ': ' || state || ', ' || sync_state FROM pg_stat_replication" 2>/dev/null || true
  for f in "$state"/parley-*.pid; do
    [ -e "$f" ] || continue
    i=${f##*/parley-}; i=${i%.pid}
    echo "instance $i (127.0.0.1:$((first_port + i - 1))) /readyz: $(curl -s -m 2 "http://127.0.0.1:$((first_port + i - 1))/readyz" || echo 'no answer')"
  done
  exit
  ;;
failover)
  p=$(primary_of)
  if [ "$p" != "$pg_port" ]; then echo "cluster: the primary on $pg_port is not running as one (primary: $p)" >&2; exit 1; fi
  start=$(date +%s%N)
  pg pg_ctl stop -D "$primary" -m immediate -w >/dev/null
  pg pg_ctl promote -D "$standby" -w >/dev/null
  # The new primary has no standby: commits must not wait for one.
  psql "$(url "$standby_port" postgres)" -qc "ALTER SYSTEM SET synchronous_standby_names = ''" -c 'SELECT pg_reload_conf()' >/dev/null
  echo "failover: the standby on port $standby_port is the primary (in $((($(date +%s%N) - start) / 1000000)) ms); the old primary is stopped"
  exit
  ;;
requests)
  # HAProxy's httplog: ... [30/Nov/2026:06:27:06.398] front back/server Tq/Tw/Tc/Tr/Tt status bytes - - state ...
  awk '/POST \/chat\// {
      split($2, d, ":"); sub(/\]/, "", d[4]); split($5, tm, "/")
      t = (d[2] * 3600 + d[3] * 60 + d[4]) * 1000
      kind = "status " $6 " " $10; n[kind]++
      # Lines come as requests end, so the answered turns end in order.
      if ($6 == 200 && $10 == "----") {
        e = t + tm[5]
        if (last && e - last > gap) { gap = e - last; at = last }
        if (e > last) last = e
      }
    }
    END {
      for (x in n) print n[x] "\t" x
      printf "longest time without an answered turn: %d ms, after %02d:%02d:%06.3f\n", gap, at / 3600000, (at / 60000) % 60, (at % 60000) / 1000
    }' "$state/haproxy.log" | sort -k2
  exit
  ;;
start) ;;
*)
  echo "usage: scripts/cluster.sh [start|plan|status|failover|requests|stop]" >&2
  exit 2
  ;;
esac

budget
if ! command -v haproxy >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "cluster: HAProxy not found: install it with 'sudo apt-get install haproxy'" >&2
    exit 1
  fi
  echo "Installing HAProxy (apt-get)..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends haproxy >/dev/null 2>&1 ||
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends haproxy >/dev/null; }
fi
scripts/pg-install.sh
for p in "$lb_port" "$pg_port" "$standby_port" $(seq "$first_port" $((first_port + n - 1))); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    echo "cluster: port $p on 127.0.0.1 is taken (a cluster already running? make cluster-stop)" >&2
    exit 1
  fi
done
stop_all
mkdir -p bin "$state"
# The build make test and make run use (the compiled packages are cached).
go build -o bin/parley ./cmd/parley

# The primary, then its standby from a base backup: -R writes the standby's
# primary_conninfo and standby.signal. Commits wait for the standby's flush
# (synchronous_commit on, the default, with synchronous_standby_names): a
# turn Parley answered is on both machines.
rm -rf "$primary" "$standby"
mkdir -p "$pgdata"
if [ "$(id -u)" -eq 0 ]; then chown postgres: "$pgdata"; fi
pg initdb -D "$primary" -U postgres --auth=trust -E UTF8 --no-locale >/dev/null
opts="-c listen_addresses=127.0.0.1 -c max_connections=$pg_max -c wal_level=replica -c max_wal_senders=4 -c hot_standby=on"
if [ -n "${CLUSTER_FAST:-}" ]; then opts="$opts -c fsync=off -c full_page_writes=off"; fi
pg pg_ctl start -D "$primary" -l "$primary/server.log" -w -t 60 -o "-p $pg_port -k $pgdata $opts" >/dev/null
psql "$(url "$pg_port" postgres)" -qc 'CREATE DATABASE parley'
pg pg_basebackup -h 127.0.0.1 -p "$pg_port" -U postgres -D "$standby" -R -X stream -c fast
pg pg_ctl start -D "$standby" -l "$standby/server.log" -w -t 60 -o "-p $standby_port -k $pgdata $opts" >/dev/null
psql "$(url "$pg_port" postgres)" -qc "ALTER SYSTEM SET synchronous_standby_names = '*'" -c 'SELECT pg_reload_conf()' >/dev/null
for _ in $(seq 100); do
  [ "$(psql "$(url "$pg_port" postgres)" -Atc "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")" = 1 ] && break
  sleep 0.1
done
echo "PostgreSQL: primary on 127.0.0.1:$pg_port, synchronous standby on 127.0.0.1:$standby_port ($pgdata)"

# Both hosts in one DSN: pgx tries them in order and keeps the one that
# accepts writes, so after a promotion new connections find the new primary.
DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port,127.0.0.1:$standby_port/parley?sslmode=disable&target_session_attrs=read-write"
export DATABASE_URL
if [ ! -s "$dir/secret.key" ]; then
  (umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > "$dir/secret.key")
fi
PARLEY_SECRET_KEY=$(cat "$dir/secret.key")
export PARLEY_SECRET_KEY PARLEY_TRUSTED_PROXIES=${PARLEY_TRUSTED_PROXIES:-127.0.0.1/32}
export PARLEY_BASE_URL=${PARLEY_BASE_URL:-http://127.0.0.1:$lb_port}
bin/parley migrate >/dev/null
bin/parley seed-demo

if [ -n "${CLUSTER_FAKE_MODEL:-}" ]; then
  go build -trimpath -o bin/fakellm ./cmd/fakellm
  bin/fakellm -addr "127.0.0.1:$model_port" -chunks 50 > "$state/fakellm.log" 2>&1 &
  echo $! > "$state/fakellm.pid"
  export PARLEY_LLM_PROVIDER=openai PARLEY_LLM_BASE_URL=http://127.0.0.1:$model_port/v1 PARLEY_LLM_MODEL=fake PARLEY_LLM_API_KEY=fake
fi

servers=
for i in $(seq "$n"); do
  port=$((first_port + i - 1))
  PARLEY_ADDR=127.0.0.1:$port bin/parley serve > "$state/parley-$i.out" 2> "$state/parley-$i.log" &
  echo $! > "$state/parley-$i.pid"
  servers+="    server p$i 127.0.0.1:$port check"$'\n'
done
for i in $(seq "$n"); do
  port=$((first_port + i - 1))
  for _ in $(seq 150); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.2; done
  curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" || { echo "cluster: instance $i did not start: $state/parley-$i.log" >&2; exit 1; }
done

# HAProxy's configuration, from deploy/haproxy's template.
extra=
if [ -n "${CLUSTER_ONE_PORT:-}" ]; then
  extra=$(printf 'listen parley_one\n    bind 127.0.0.1:%s\n    balance leastconn\n    option httpchk\n    http-check send meth GET uri /readyz\n    server p1 127.0.0.1:%s check' "$CLUSTER_ONE_PORT" "$first_port")
fi
cfg=$(cat deploy/haproxy/haproxy.cfg.tmpl)
cfg=${cfg//'{{BIND}}'/127.0.0.1:$lb_port}
cfg=${cfg//'{{SERVERS}}'/${servers%$'\n'}}
cfg=${cfg//'{{EXTRA}}'/$extra}
if [ -n "${CLUSTER_HAPROXY_LOG:-}" ]; then
  # One line per request on HAProxy's stderr ($state/haproxy.log), with its
  # termination state (SH: the instance died before answering, SD: during
  # the answer).
  cfg=${cfg/$'\nglobal\n'/$'\nglobal\n    log stderr format raw local0 info\n'}
  cfg=${cfg/$'\ndefaults\n'/$'\ndefaults\n    log global\n    option httplog\n'}
fi
printf '%s\n' "$cfg" > "$state/haproxy.cfg"
haproxy -c -q -f "$state/haproxy.cfg"
haproxy -f "$state/haproxy.cfg" > "$state/haproxy.log" 2>&1 &
echo $! > "$state/haproxy.pid"
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$lb_port/readyz" && break; sleep 0.2; done
curl -sf -o /dev/null "http://127.0.0.1:$lb_port/readyz" || { echo "cluster: HAProxy did not start: $state/haproxy.log" >&2; cat "$state/haproxy.log" >&2; exit 1; }
echo "Parley: $n instances on 127.0.0.1:$first_port-$((first_port + n - 1)) behind HAProxy at http://127.0.0.1:$lb_port (logs and pids in $state)"
echo "stop it all with: make cluster-stop"
