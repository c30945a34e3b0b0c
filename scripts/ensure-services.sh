#!/usr/bin/env bash
# Makes sure the PostgreSQL and Redis of DATABASE_URL and REDIS_URL answer (defaults: the local
# ones on 127.0.0.1:5432 and :6379), for `npm run up` and `npm test`. Idempotent. In order:
#   1. both answer: nothing to do;
#   2. installed but stopped: start them with the machine's own commands;
#   3. missing, on Debian or Ubuntu as root (or with passwordless sudo): install the
#      distribution's packages (apt-get install postgresql redis-server), let local connections
#      in without a password (trust, on 127.0.0.1 and ::1, as a development database), start them;
#   4. missing, with Docker and its compose plugin: docker compose up the two services of
#      docker/compose.yml, published on 127.0.0.1 (docker/compose.services.yml);
#   5. otherwise: say in one line what to install, and exit 1.
# STARLAB_SERVICES_WAIT_S (default 30) bounds each wait for a service to answer.
set -euo pipefail
cd "$(dirname "$0")/.."

DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/starlab}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
WAIT_S="${STARLAB_SERVICES_WAIT_S:-30}"
# Where Debian keeps its PostgreSQL clusters' configuration (a test points it elsewhere).
PG_ETC="${STARLAB_PG_ETC:-/etc/postgresql}"
# host and port of a URL (scheme://[user[:password]@]host[:port][/…]); IPv6 hosts in brackets.
host_of() { local rest="${1#*://}"; rest="${rest#*@}"; rest="${rest%%/*}"; if [[ "$rest" == \[* ]]; then rest="${rest#[}"; echo "${rest%%]*}"; else echo "${rest%%:*}"; fi; }
port_of() { local rest="${1#*://}"; rest="${rest#*@}"; rest="${rest%%/*}"; rest="${rest##*]}"; [[ "$rest" == *:* ]] && echo "${rest##*:}" || echo "$2"; }
PG_HOST="$(host_of "$DATABASE_URL")"; PG_PORT="$(port_of "$DATABASE_URL" 5432)"
REDIS_HOST="$(host_of "$REDIS_URL")"; REDIS_PORT="$(port_of "$REDIS_URL" 6379)"

say() { echo "ensure-services: $*" >&2; }
# PostgreSQL accepts connections (pg_isready where installed, else a TCP connect).
pg_up() {
  if command -v pg_isready >/dev/null; then pg_isready -h "$PG_HOST" -p "$PG_PORT" -q 2>/dev/null; return; fi
  (exec 3<>"/dev/tcp/$PG_HOST/$PG_PORT") 2>/dev/null
}
# Redis answers PING with PONG (redis-cli where installed, else the protocol over bash's /dev/tcp).
redis_up() {
  if command -v redis-cli >/dev/null; then redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; return; fi
  local reply=""
  { exec 3<>"/dev/tcp/$REDIS_HOST/$REDIS_PORT" && printf 'PING\r\n' >&3 && IFS= read -r -t 2 reply <&3; } 2>/dev/null || return 1
  [[ "$reply" == +PONG* ]]
}
wait_for() { local check=$1; for _ in $(seq 1 "$WAIT_S"); do "$check" && return 0; sleep 1; done; "$check"; }
local_host() { [[ "$1" == 127.0.0.1 || "$1" == localhost || "$1" == ::1 ]]; }

pg_up && redis_up && exit 0

# 2. Installed here but stopped. STARTED says whether anything was started (so is worth waiting for).
STARTED=0
start_installed() {
  if ! pg_up && local_host "$PG_HOST" && command -v pg_ctlcluster >/dev/null && [ -n "$(ls "$PG_ETC" 2>/dev/null)" ]; then
    say "starting PostgreSQL"
    $SUDO pg_ctlcluster --skip-systemctl-redirect "$(ls "$PG_ETC" | sort -V | tail -1)" main start || true
    STARTED=1
  fi
  if ! redis_up && local_host "$REDIS_HOST" && command -v redis-server >/dev/null; then
    say "starting Redis"
    $SUDO redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" --save "" --appendonly no >/dev/null || true
    STARTED=1
  fi
}

# Root, or passwordless sudo: what may install packages and start system services.
SUDO=""
MAY_ADMINISTER=0
if [ "$(id -u)" = 0 ]; then MAY_ADMINISTER=1; elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; MAY_ADMINISTER=1; fi
debian_like() { [ -r /etc/os-release ] && grep -qiE '^(ID|ID_LIKE)=.*(debian|ubuntu)' /etc/os-release; }

start_installed
if [ "$STARTED" = 1 ] && wait_for pg_up && wait_for redis_up; then exit 0; fi

# 3. Missing on Debian or Ubuntu, and we may install: the distribution's packages.
if [ "$MAY_ADMINISTER" = 1 ] && command -v apt-get >/dev/null && debian_like && local_host "$PG_HOST" && local_host "$REDIS_HOST"; then
  missing=()
  command -v pg_ctlcluster >/dev/null && [ -n "$(ls "$PG_ETC" 2>/dev/null)" ] || missing+=(postgresql)
  command -v redis-server >/dev/null || missing+=(redis-server)
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]} from the distribution's packages (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >/dev/null
    $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
    if [[ " ${missing[*]} " == *" postgresql "* ]] && [ -n "$(ls "$PG_ETC" 2>/dev/null)" ]; then
      # A fresh cluster asks for passwords on TCP; the service connects as postgres without one.
      hba="$PG_ETC/$(ls "$PG_ETC" | sort -V | tail -1)/main/pg_hba.conf"
      say "letting local connections to the new PostgreSQL in without a password ($hba)"
      $SUDO sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
    fi
  fi
  start_installed
  if wait_for pg_up && wait_for redis_up; then exit 0; fi
  say "PostgreSQL ($PG_HOST:$PG_PORT) or Redis ($REDIS_HOST:$REDIS_PORT) still does not answer after installing and starting them"
  exit 1
fi

# 4. Docker with the compose plugin: the two services of docker/compose.yml on this machine's loopback.
if command -v docker >/dev/null && docker compose version >/dev/null 2>&1 && local_host "$PG_HOST" && local_host "$REDIS_HOST"; then
  say "starting PostgreSQL and Redis with docker compose (docker/compose.yml, docker/compose.services.yml)"
  docker compose -p starlab-services -f docker/compose.yml -f docker/compose.services.yml up -d postgres redis >&2
  if wait_for pg_up && wait_for redis_up; then exit 0; fi
  say "the docker compose services did not answer on $PG_HOST:$PG_PORT and $REDIS_HOST:$REDIS_PORT"
  exit 1
fi

# 5. Nothing we may do here.
what=""
pg_up || what="PostgreSQL 15 or later on $PG_HOST:$PG_PORT"
redis_up || what="${what:+$what and }Redis 7 or later on $REDIS_HOST:$REDIS_PORT"
echo "StarLab needs $what: run this as root on Debian or Ubuntu (it installs them), or install Docker with the compose plugin, or install them yourself and set DATABASE_URL and REDIS_URL." >&2
exit 1
