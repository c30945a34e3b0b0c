#!/usr/bin/env bash
# `npm run up`: install, make sure PostgreSQL and Redis run (scripts/ensure-services.sh installs
# or starts them where it may), generate, migrate, build, then run the API and one worker in the
# foreground, and train the example Bandit job through the API. Ctrl-C stops both (the worker
# checkpoints and requeues what it was running). Needs only Node 20 or later besides.
set -euo pipefail
cd "$(dirname "$0")/.."
export PORT="${PORT:-3000}"
export DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/starlab}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
if [ -z "${STARLAB_ADMIN_KEY:-}" ]; then
  STARLAB_ADMIN_KEY="sl_admin_$(node -e "process.stdout.write(require('crypto').randomBytes(18).toString('base64url'))")"
  GENERATED_KEY=1
fi
export STARLAB_ADMIN_KEY

bash scripts/install-if-needed.sh
bash scripts/ensure-services.sh
node scripts/ensure-database.js
npm run --silent db:migrate 2>&1 | grep -v "^$" | tail -n 2
npm run --silent build

node dist/src/main.js & api=$!
node dist/src/worker.js & worker=$!
stop() { kill -TERM "$worker" "$api" 2>/dev/null || true; wait "$worker" "$api" 2>/dev/null || true; }
trap 'stop; exit 0' INT TERM

base="http://localhost:$PORT"
ready() { node -e "fetch('$base/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; }
for _ in $(seq 1 60); do ready && break; sleep 1; done
ready || { echo "the API did not become ready" >&2; stop; exit 1; }
echo
echo "StarLab is up: $base  (dashboard: $base/dashboard, API docs: $base/docs)"
[ -n "${GENERATED_KEY:-}" ] && echo "admin API key for this session: $STARLAB_ADMIN_KEY  (set STARLAB_ADMIN_KEY to choose your own)"
echo "Paste into another shell (for curl, and for the starlab CLI):"
echo "  export K=$STARLAB_ADMIN_KEY B=$base"
echo "  export STARLAB_URL=$base STARLAB_API_KEY=$STARLAB_ADMIN_KEY"
echo
if [ "${STARLAB_DEMO:-1}" != "0" ]; then
  node scripts/demo.js "$base" "$STARLAB_ADMIN_KEY" examples/bandit.json || true
fi
echo "Ctrl-C stops the API and the worker."
wait "$api" "$worker"
