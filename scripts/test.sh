#!/usr/bin/env bash
# `npm test`: installs what is missing, makes sure Postgres and Redis are up and the environment-server
# examples' Python can run, runs every suite
# (unit, integration, end-to-end, learning). Extra arguments go to Jest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-if-needed.sh
bash scripts/ensure-services.sh
bash scripts/ensure-python-env.sh
exec npx jest "$@"
