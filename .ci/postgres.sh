#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests.
#
#   .ci/postgres.sh start DIR   initdb in DIR, start on a free loopback port,
#                               print the DSN (postgres://recsys@127.0.0.1:PORT/postgres)
#   .ci/postgres.sh stop DIR    stop the cluster and remove DIR
#
# It runs the Debian binaries (/usr/lib/postgresql/*/bin) as an unprivileged
# user ("nobody" when run as root: initdb and postgres refuse root). The
# cluster trusts loopback connections and runs with fsync off unless
# PGFSYNC=on: it lives as long as one CI run. The storage tests find it
# through RECSYS_TEST_POSTGRES (storage/postgres/pgtest).
set -euo pipefail
cmd=${1:?usage: postgres.sh start|stop DIR}
dir=${2:?usage: postgres.sh start|stop DIR}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin" ]; then
  echo "PostgreSQL is not installed: apt-get install postgresql" >&2
  exit 1
fi
as() {
  if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}
case "$cmd" in
start)
  mkdir -p "$dir"
  chmod 0755 "$dir"
  mkdir -p "$dir/data"
  if [ "$(id -u)" = 0 ]; then chown nobody:nogroup "$dir/data"; fi
  as "$bin/initdb" -D "$dir/data" -U recsys --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  for attempt in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 30000))
    if as "$bin/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -w -t 60 start \
      -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir/data -c fsync=${PGFSYNC:-off} -c max_connections=300 -c shared_buffers=64MB" \
      >/dev/null 2>&1; then
      echo "postgres://recsys@127.0.0.1:$port/postgres?sslmode=disable"
      exit 0
    fi
  done
  cat "$dir/data/server.log" >&2
  exit 1
  ;;
stop)
  if [ -d "$dir/data" ]; then as "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: postgres.sh start|stop DIR" >&2
  exit 2
  ;;
esac
