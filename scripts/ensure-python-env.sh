#!/usr/bin/env bash
# Makes sure the Python the environment-server tests start (STARLAB_PYTHON, default /usr/bin/python3,
# the distribution's) can run examples/environments/: Python 3 for the standard-library server, and
# the websockets package for the OpenEnv-style one. Idempotent. Installs what is missing from the
# distribution's packages (apt-get install python3 python3-websockets) as root or with passwordless
# sudo on Debian or Ubuntu; otherwise says in one line what to install, and exits 1.
set -euo pipefail

PYTHON="${STARLAB_PYTHON:-/usr/bin/python3}"
say() { echo "ensure-python-env: $*" >&2; }
ready() { [ -x "$PYTHON" ] && "$PYTHON" -c 'import websockets' 2>/dev/null; }

ready && exit 0

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO=none; fi
fi
if [ "$SUDO" != none ] && [ "$PYTHON" = /usr/bin/python3 ] && command -v apt-get >/dev/null; then
  say "installing python3 and python3-websockets from the distribution's packages (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -qq python3 python3-websockets >/dev/null 2>&1 \
    || { $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq python3 python3-websockets >/dev/null; }
  ready && exit 0
fi
echo "The environment-server tests need $PYTHON with the websockets package: run this as root on Debian or Ubuntu (it installs python3-websockets), or install it yourself, or point STARLAB_PYTHON at a Python that has it." >&2
exit 1
