#!/usr/bin/env bash
# PgBouncer in transaction pooling in front of a private cluster of scripts/postgres.sh, for the
# tests (the pooler most deployments put in front of PostgreSQL; Debian's `pgbouncer`).
#
#   scripts/pgbouncer.sh start CLUSTER_DIR [PORT]   start PgBouncer on 127.0.0.1:PORT (a free port
#                                                   when omitted), pool_mode = transaction, in front
#                                                   of the cluster's server, its files in
#                                                   CLUSTER_DIR/pgbouncer; print its URL
#   scripts/pgbouncer.sh stop CLUSTER_DIR           stop it (when it runs)
#
# PgBouncer refuses to run as root; when run as root it runs as the `postgres` user, as the
# server does. It trusts every connection, as the cluster does: it is for tests, not for data.
set -euo pipefail

script_name=pgbouncer.sh
# shellcheck source=scripts/postgres-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/postgres-lib.sh"

program="${PGBOUNCER:-$(command -v pgbouncer || echo /usr/sbin/pgbouncer)}"

command="${1:-}"
case "$command" in
start)
    cluster="${2:?usage: pgbouncer.sh start CLUSTER_DIR [PORT]}"
    if [ ! -x "$program" ]; then
        echo "pgbouncer.sh: pgbouncer was not found (run scripts/setup.sh)" >&2
        exit 1
    fi
    dir="$cluster/pgbouncer"
    mkdir -p "$dir"
    port="${3:-$(free_port)}"
    server_port="$(cat "$cluster/port")"
    # Every user name is accepted (auth_type trust needs the name in the file): the tests' own.
    echo '"postgres" ""' >"$dir/users.txt"
    cat >"$dir/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$server_port

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/users.txt
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 40
server_reset_query =
ignore_startup_parameters = extra_float_digits
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
    if [ "$(id -u)" -eq 0 ]; then chown -R postgres:postgres "$dir"; fi
    # It outlives this script: it must not inherit a descriptor of whoever started it.
    for fd in /proc/$$/fd/*; do
        fd="${fd##*/}"
        if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    as_owner "$program" -d -q "$dir/pgbouncer.ini"
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "postgresql://postgres@127.0.0.1:$port/postgres"
            exit 0
        fi
        sleep 0.05
    done
    echo "pgbouncer.sh: PgBouncer did not start:" >&2
    tail -n 20 "$dir/pgbouncer.log" >&2 || true
    exit 1
    ;;
stop)
    cluster="${2:?usage: pgbouncer.sh stop CLUSTER_DIR}"
    pidfile="$cluster/pgbouncer/pgbouncer.pid"
    if [ -f "$pidfile" ]; then
        pid="$(cat "$pidfile")"
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || exit 0
            sleep 0.05
        done
        kill -9 "$pid" 2>/dev/null || true
    fi
    ;;
*)
    sed -n '2,12p' "$0" >&2
    exit 2
    ;;
esac
