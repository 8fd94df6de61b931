#!/usr/bin/env bash
# make bench-retrieval: the retrieval benchmark of issue 34 (BENCHMARKS.md,
# "Retrieval recall"; web/retrieval_bench_test.go). On the test cluster of
# make test: which labelled knowledge-base entry reaches the model on a
# visitor's first message, per kind of question, through the chat endpoint
# with a scripted model. About a minute of chat on top of the build.
#   PARLEY_RETRIEVAL_SEED=<n>      the shuffled load's seed (default 1)
#   PARLEY_RETRIEVAL_REPORT=<file> one JSON line per question, every phase's outcome
set -euo pipefail
cd "$(dirname "$0")/.."
PARLEY_TEST_DATABASE_URL=$(scripts/test-cluster.sh)
export PARLEY_TEST_DATABASE_URL
go test -run '^$' -bench BenchmarkRetrievalRecall -benchtime 1x ./web/
