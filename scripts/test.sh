#!/usr/bin/env bash
# `npm test`: installs what is missing, makes sure Postgres and Redis are up, runs every suite
# (unit, integration, end-to-end, learning). Extra arguments go to Jest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-if-needed.sh
bash scripts/ensure-services.sh
exec npx jest "$@"
