#!/usr/bin/env bash
# A private, throwaway PostgreSQL cluster for the tests, the benchmarks and people.
#
#   scripts/postgres.sh start DIR [PORT]      initdb into DIR (when empty), start the server on
#                                             127.0.0.1:PORT (a free port when omitted) with its
#                                             Unix socket in DIR, and print its URL
#   scripts/postgres.sh standby PRIMARY_DIR DIR [PORT]
#                                             a streaming-replication standby of the cluster in
#                                             PRIMARY_DIR (pg_basebackup -R), started; prints its URL
#   scripts/postgres.sh stop DIR              stop the server (fast shutdown)
#   scripts/postgres.sh crash DIR             stop it as a crash would (pg_ctl stop -m immediate)
#   scripts/postgres.sh restart DIR           start a stopped cluster again on its port
#   scripts/postgres.sh reload DIR            make the running server read its configuration again
#   scripts/postgres.sh password DIR ROLE PASSWORD
#                                             create ROLE with PASSWORD and a database of its name
#                                             that it owns, and make the server ask ROLE for the
#                                             password over TCP (scram-sha-256); every other
#                                             connection is still trusted
#
# PostgreSQL refuses to run as root; when run as root the cluster belongs to, and the server runs
# as, the `postgres` user. The cluster trusts local connections: it is for tests, not for data.
set -euo pipefail

script_name=postgres.sh
# shellcheck source=scripts/postgres-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/postgres-lib.sh"
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
    echo "postgres.sh: PostgreSQL's server programs were not found (run scripts/setup.sh)" >&2
    exit 1
fi

prepare_dir() {
    # The server's Unix socket is DIR/.s.PGSQL.PORT, and a socket's path may be 107 bytes at most
    # on Linux, 103 on macOS: past that the server exits at start, saying why only in its log.
    local socket="$1/.s.PGSQL.65535"
    if [ "${#socket}" -gt 103 ]; then
        echo "postgres.sh: '$1' is too long for the server's Unix socket: $1/.s.PGSQL.PORT must stay within 103 bytes" >&2
        exit 1
    fi
    mkdir -p "$1"
    chmod 0700 "$1"
    if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$1"; fi
}

url_of() {
    local dir="$1"
    echo "postgresql:///postgres?host=$dir&port=$(cat "$dir/port")&user=postgres"
}

launch() {
    local dir="$1"
    # The server outlives this script: it must not inherit a descriptor of whoever started it
    # (a pipe a caller reads to its end would never end).
    local fd
    for fd in /proc/$$/fd/*; do
        fd="${fd##*/}"
        if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $(cat "$dir/port") -k $dir" start >/dev/null
}

# Launches the cluster in DIR on PORT, or on a free port when PORT is empty. Another process can
# take a free port between the look and the server's bind (tests start servers in parallel, and
# other programs listen too): then another free port is tried, up to five in all.
launch_on_port() {
    local dir="$1" port="$2" attempt
    for attempt in 1 2 3 4 5; do
        echo "${port:-$(free_port)}" >"$dir/port"
        if [ -f "$dir/server.log" ]; then : >"$dir/server.log"; fi
        if launch "$dir"; then return 0; fi
        if [ -n "$port" ] || ! grep -q "Address already in use" "$dir/server.log" 2>/dev/null; then break; fi
    done
    tail -n 20 "$dir/server.log" >&2
    return 1
}

command="${1:-}"
case "$command" in
start)
    dir="${2:?usage: postgres.sh start DIR [PORT]}"
    prepare_dir "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_owner "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
            --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
        cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
max_connections = 300
shared_buffers = 32MB
fsync = off
full_page_writes = off
wal_level = replica
max_wal_senders = 4
hot_standby = on
client_min_messages = warning
CONF
        echo "host replication all 127.0.0.1/32 trust" >>"$dir/data/pg_hba.conf"
    fi
    launch_on_port "$dir" "${3:-}" || exit 1
    url_of "$dir"
    ;;
standby)
    primary="${2:?usage: postgres.sh standby PRIMARY_DIR DIR [PORT]}"
    dir="${3:?usage: postgres.sh standby PRIMARY_DIR DIR [PORT]}"
    prepare_dir "$dir"
    as_owner "$bindir/pg_basebackup" -h 127.0.0.1 -p "$(cat "$primary/port")" -U postgres -D "$dir/data" -R -c fast \
        -X stream >"$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log" >&2; exit 1; }
    launch_on_port "$dir" "${4:-}" || exit 1
    url_of "$dir"
    ;;
restart)
    dir="${2:?usage: postgres.sh restart DIR}"
    launch "$dir" || { tail -n 20 "$dir/server.log" >&2; exit 1; }
    url_of "$dir"
    ;;
reload)
    dir="${2:?usage: postgres.sh reload DIR}"
    as_owner "$bindir/pg_ctl" -D "$dir/data" reload >/dev/null
    # pg_ctl reload only signals the server; wait until it has read the files again.
    sleep 0.5
    ;;
password)
    dir="${2:?usage: postgres.sh password DIR ROLE PASSWORD}"
    role="${3:?usage: postgres.sh password DIR ROLE PASSWORD}"
    secret="${4:?usage: postgres.sh password DIR ROLE PASSWORD}"
    # The role's line first: the first line that matches a connection decides.
    hba="$dir/data/pg_hba.conf"
    { echo "host all $role 127.0.0.1/32 scram-sha-256"; cat "$hba"; } >"$hba.new"
    cat "$hba.new" >"$hba"
    rm -f "$hba.new"
    # psql interpolates :'secret' and :"role" (quoted as a literal and an identifier) from stdin.
    printf '%s\n' "CREATE ROLE :\"role\" LOGIN PASSWORD :'secret';" "CREATE DATABASE :\"role\" OWNER :\"role\";" |
        "$bindir/psql" -q -X -v ON_ERROR_STOP=1 -v role="$role" -v secret="$secret" \
            "host=$dir port=$(cat "$dir/port") user=postgres dbname=postgres" >/dev/null
    as_owner "$bindir/pg_ctl" -D "$dir/data" reload >/dev/null
    sleep 0.5
    ;;
stop | crash)
    dir="${2:?usage: postgres.sh $command DIR}"
    mode=fast
    if [ "$command" = crash ]; then mode=immediate; fi
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m "$mode" -w stop >/dev/null
    ;;
*)
    sed -n '2,20p' "$0" >&2
    exit 2
    ;;
esac
