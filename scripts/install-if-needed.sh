#!/usr/bin/env bash
# Installs dependencies when node_modules is missing or older than package-lock.json, and
# generates the Prisma client when it is missing or older than the schema.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "installing dependencies (npm ci)" >&2
  npm ci --no-audit --no-fund
fi
if [ ! -f src/generated/prisma/client.ts ] || [ prisma/schema.prisma -nt src/generated/prisma/client.ts ]; then
  npm run --silent db:generate >/dev/null
fi
