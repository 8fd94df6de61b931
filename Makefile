.PHONY: run test build generate openapi clients bench bench-load bench-retrieval cluster cluster-stop

# Start Parley at http://localhost:8080 with a private PostgreSQL cluster under .data/.
run:
	scripts/run.sh

# The whole test suite, against its own private PostgreSQL cluster.
test:
	scripts/test.sh

# A release build: no file system paths (-trimpath), no symbol table or DWARF
# (-s -w): 51.2 MB rather than 72 MB (BENCHMARKS.md). Debug with `go build`.
build:
	go build -trimpath -ldflags "-s -w" -o bin/parley ./cmd/parley

# Regenerate the templ components (the generated files are committed).
generate:
	go tool templ generate -path views

# Assemble web/openapi.json from its parts: web/openapi_base.json and each
# surface's handlers/*/openapi.json (edit those; make test fails when the
# assembled document is out of date), then the typed clients generated from it.
openapi:
	go test -count=1 -run '^TestOpenAPIAssembled$$' ./web/ -args -update
	scripts/clients.sh

# The typed clients (Go and TypeScript) generated from web/openapi.json and
# committed (README, "Typed clients"; scripts/clients.sh).
clients:
	scripts/clients.sh

# The benchmarks of BENCHMARKS.md.
bench:
	scripts/bench.sh

# Chat as users run it (BENCHMARKS.md, issue 18): parley serve, a fake model
# and a load generator, three processes, on a durable private cluster.
bench-load:
	scripts/bench-load.sh

# Which knowledge-base entry reaches the model, per kind of question (issue 34,
# BENCHMARKS.md): web/testdata/retrieval through the chat endpoint, on make test's cluster.
bench-retrieval:
	scripts/bench-retrieval.sh

# Parley on more than one instance, on loopback (README, "Running more than
# one instance"): a PostgreSQL primary with a synchronous standby, three
# parley serve and HAProxy in front (scripts/cluster.sh; stop with make
# cluster-stop).
cluster:
	scripts/cluster.sh start

cluster-stop:
	scripts/cluster.sh stop
