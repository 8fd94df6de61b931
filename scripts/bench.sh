#!/usr/bin/env bash
# make bench: the benchmarks recorded in BENCHMARKS.md, without the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."
PARLEY_TEST_DATABASE_URL=$(scripts/test-cluster.sh)
export PARLEY_TEST_DATABASE_URL
go test -run '^$' -bench BenchmarkCorpus -benchtime 1000x -count 3 ./db/
# A 50,000-row CSV import through the endpoint's code (handlers/corpus_import_bench_test.go):
# into an empty corpus, then the same file again (every row an unchanged upsert).
go test -run '^$' -bench 'BenchmarkCorpus(Import|Reimport)$' -benchtime 1x -count 5 ./handlers/
# The chat endpoint against a zero-latency model (web/chat_bench_test.go):
# latency and throughput at concurrency 1 and 100, then 1,000 open streams.
go test -run '^$' -bench BenchmarkChat -benchtime 2000x ./web/
# Webhook deliveries through the production River client (jobs/webhook_bench_test.go):
# throughput (burst and backlog of 5,000) and enqueue-to-first-attempt at 500/s and 1,000/s.
go test -run '^$' -bench Webhook -benchtime 1x -count 3 ./jobs/
# One MCP tools/call through the official SDK client, beside the REST read (web/mcp_bench_test.go).
go test -run '^$' -bench BenchmarkMCPToolCall -benchtime 2000x -benchmem ./web/
# The conversations API (issue 12) over HTTP against a server of its own on
# make run's cluster, with default durability, seeded once with 100,000
# conversations (scripts/bench-conversations.sh).
scripts/bench-conversations.sh
# "Improve this answer" on a tenant of 50,000 entries (db/knowledge/corrections_bench_test.go):
# reading the form, a correction that updates its entry, one that creates it.
go test -run '^$' -bench BenchmarkCorrectAnswer -benchtime 500x -count 3 ./db/knowledge/
