#!/usr/bin/env bash
# `npm run worker`: one more worker beside those of `npm run up` (same defaults), e.g.
#   STARLAB_WORKER_SLOTS=2 npm run worker
#   STARLAB_BACKEND=tfjs-node-gpu STARLAB_WORKER_DEVICE=gpu npm run worker
set -euo pipefail
cd "$(dirname "$0")/.."
export DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/starlab}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
bash scripts/install-if-needed.sh
if [ ! -f dist/src/worker.js ] || [ -n "$(find src prisma -newer dist/src/worker.js -print -quit)" ]; then
  npm run --silent build
fi
exec node dist/src/worker.js
