#!/usr/bin/env bash
# make clients: the typed clients generated from web/openapi.json (README,
# "Typed clients"), written into the repository, where they are committed:
#   - clients/parleyclient/client.gen.go, the Go client, by oapi-codegen
#     (the version pinned here, run with go run so that its own go.mod picks
#     its dependencies) from an OpenAPI 3.0 copy of the document that
#     clients/openapi30 writes (.data/clients/openapi-3.0.json: the
#     generator reads 3.0 and only part of 3.1);
#   - clients/typescript/schema.d.ts, the TypeScript types, by
#     openapi-typescript (pinned in clients/typescript/package-lock.json),
#     from the 3.1 document itself;
#   - clients/SHA256SUMS, the digests of what they were made from and of
#     what was made, which web's TestClientsGenerated compares with the
#     files (make test fails when the document changed and the clients were
#     not generated again, or a generated file was edited by hand).
# The same inputs always give the same files. make openapi runs it after
# assembling the document.
set -euo pipefail
cd "$(dirname "$0")/.."
oapi_codegen=github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2

mkdir -p .data/clients
go run ./clients/openapi30 web/openapi.json .data/clients/openapi-3.0.json
go run "$oapi_codegen" -config clients/parleyclient/oapi-codegen.yaml .data/clients/openapi-3.0.json

scripts/clients-npm.sh
(cd clients/typescript && node_modules/.bin/openapi-typescript ../../web/openapi.json --output schema.d.ts)

# The list web/clients_test.go checks: inputs first, then outputs.
sha256sum web/openapi.json scripts/clients.sh clients/openapi30/main.go clients/parleyclient/oapi-codegen.yaml \
  clients/typescript/package-lock.json clients/parleyclient/client.gen.go clients/typescript/schema.d.ts \
  >clients/SHA256SUMS
echo "clients generated from web/openapi.json (clients/SHA256SUMS)"
