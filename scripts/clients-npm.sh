#!/usr/bin/env bash
# The TypeScript client's packages (clients/typescript/node_modules, not
# committed), installed by npm ci exactly as package-lock.json pins them,
# again only when the lock file changed since the last install (npm's cache
# keeps the packages after the first fetch from the npm registry). Used by
# make clients and by make test's type-check (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/../clients/typescript"
stamp=node_modules/.parley-package-lock.json
if ! cmp -s package-lock.json "$stamp" 2>/dev/null; then
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
  cp package-lock.json "$stamp"
fi
