#!/usr/bin/env bash
# A throwaway pg_auto_failover formation for the failover test: a monitor, a primary and a
# synchronous secondary (Debian's postgresql-15-auto-failover and pg-auto-failover-cli), every
# server on 127.0.0.1 on a free port, every file in one folder.
#
#   scripts/pg-auto-failover.sh start DIR     create the monitor and two nodes in DIR (each run by
#                                             `pg_autoctl run` in the background), wait until the
#                                             nodes are primary and secondary, and print the
#                                             store's multi-host URL
#                                             (postgresql://127.0.0.1:P1,127.0.0.1:P2/postgres?
#                                             target_session_attrs=read-write&user=postgres)
#   scripts/pg-auto-failover.sh state DIR     print each node's name, port and current state
#   scripts/pg-auto-failover.sh primary DIR   print the port of the node that is primary now
#   scripts/pg-auto-failover.sh kill-primary DIR
#                                             kill -9 the primary's postmaster and its pg_autoctl
#                                             (a machine lost: a keeper left alive would restart
#                                             the postmaster, which is no failover); print its port
#   scripts/pg-auto-failover.sh wait-primary DIR PORT [SECONDS]
#                                             wait until the node on PORT is primary (state
#                                             wait_primary or primary) on the monitor
#   scripts/pg-auto-failover.sh stop DIR      stop every pg_autoctl and server of DIR (kill -9 of
#                                             what does not stop within 10 seconds)
#
# pg_autoctl and PostgreSQL refuse to run as root; when run as root every server runs as the
# `postgres` user. Everything trusts local connections (--auth trust, --no-ssl): for tests only.
#
# The monitor's health checks are made fast (pgautofailover.health_check_period 1 s,
# node_considered_unhealthy_timeout 2 s, primary_demote_timeout 3 s), so a lost primary is
# replaced within seconds rather than the default's half minute or more.
set -euo pipefail

script_name=pg-auto-failover.sh
# shellcheck source=scripts/postgres-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/postgres-lib.sh"
program="${PG_AUTOCTL:-$(command -v pg_autoctl || echo /usr/bin/pg_autoctl)}"

# pg_autoctl stops its services with signals, and keeps the signal mask it was started with: a
# caller that blocks signals (a test runner's thread, whose mask posix_spawn passes on) would
# leave it waiting for services that never see them. Every signal is unblocked before it starts.
unblocked=(python3 -c 'import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execvp(sys.argv[1], sys.argv[1:])')

# pg_autoctl keeps its configuration and state under the XDG folders: all of them in DIR.
autoctl() {
    local dir="$1"
    shift
    as_owner env PATH="$bindir:$PATH" XDG_CONFIG_HOME="$dir/xdg/config" XDG_DATA_HOME="$dir/xdg/data" \
        XDG_RUNTIME_DIR="$dir/xdg/run" PG_CONFIG="$bindir/pg_config" "${unblocked[@]}" "$program" "$@"
}

# Starts `pg_autoctl ARGS...` in the background, its output in DIR/NAME.log, detached from
# whoever started this script (it must not inherit a descriptor of a caller that reads to the
# end), in a session of its own whose id is kept in DIR/NAME.session: `stop` ends that session's
# processes (pg_autoctl's and the server's) whatever became of the rest.
background() {
    local dir="$1" name="$2"
    local log="$dir/$name.log"
    shift 2
    (
        for fd in /proc/$BASHPID/fd/*; do
            fd="${fd##*/}"
            if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
        done
        exec setsid env PATH="$bindir:$PATH" XDG_CONFIG_HOME="$dir/xdg/config" XDG_DATA_HOME="$dir/xdg/data" \
            XDG_RUNTIME_DIR="$dir/xdg/run" PG_CONFIG="$bindir/pg_config" \
            $(if [ "$(id -u)" -eq 0 ]; then echo runuser -u postgres --; fi) "${unblocked[@]}" "$program" "$@" \
            </dev/null >>"$log" 2>&1
    ) &
    echo "$!" >"$dir/$name.session"
}

monitor_url() {
    echo "postgresql://autoctl_node@127.0.0.1:$(cat "$1/monitor.port")/pg_auto_failover?sslmode=disable"
}

# The monitor's psql, as the postgres user on its Unix socket.
monitor_sql() {
    local dir="$1"
    shift
    as_owner "$bindir/psql" -X -q -A -t -v ON_ERROR_STOP=1 \
        "host=$dir/monitor port=$(cat "$dir/monitor.port") user=postgres dbname=pg_auto_failover" -c "$@"
}

# "name port state" per node, from the monitor (its reported state, as `pg_autoctl show state`).
node_states() {
    monitor_sql "$1" "SELECT nodename, nodeport, reportedstate, goalstate FROM pgautofailover.node ORDER BY nodeid" |
        tr '|' ' '
}

wait_for() {
    local dir="$1" seconds="$2" description="$3"
    shift 3
    local deadline=$((SECONDS + seconds))
    while ((SECONDS < deadline)); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.25
    done
    echo "pg-auto-failover.sh: $description within $seconds s; the nodes are:" >&2
    node_states "$dir" >&2 || true
    for log in "$dir"/*.log; do
        echo "--- $log" >&2
        tail -n 15 "$log" >&2 || true
    done
    return 1
}

# Whether node NUMBER is in state STATE (reported and goal).
node_is() {
    local dir="$1" port="$2" state="$3"
    node_states "$dir" | awk -v port="$port" -v state="$state" \
        '$2 == port && $3 == state && $4 == state { found = 1 } END { exit !found }'
}

formation_ready() {
    local dir="$1"
    node_is "$dir" "$(cat "$dir/node1.port")" primary && node_is "$dir" "$(cat "$dir/node2.port")" secondary
}

command="${1:-}"
case "$command" in
start)
    dir="${2:?usage: pg-auto-failover.sh start DIR}"
    if [ ! -x "$program" ] || [ -z "$bindir" ] || [ ! -x "$bindir/pg_ctl" ]; then
        echo "pg-auto-failover.sh: pg_autoctl or PostgreSQL's server programs were not found (run scripts/setup.sh)" >&2
        exit 1
    fi
    if [ ! -d "$bindir/../lib" ] || ! ls /usr/share/postgresql/*/extension/pgautofailover.control >/dev/null 2>&1; then
        echo "pg-auto-failover.sh: the pgautofailover extension was not found (run scripts/setup.sh)" >&2
        exit 1
    fi
    # Socket paths (DIR/NODE/.s.PGSQL.PORT) may be 107 bytes at most.
    if [ "${#dir}" -gt 80 ]; then
        echo "pg-auto-failover.sh: '$dir' is too long for the servers' Unix sockets (80 bytes at most)" >&2
        exit 1
    fi
    mkdir -p "$dir/xdg/config" "$dir/xdg/data" "$dir/xdg/run"
    chmod 0700 "$dir" "$dir/xdg/run"
    if [ "$(id -u)" -eq 0 ]; then chown -R postgres:postgres "$dir"; fi
    free_port >"$dir/monitor.port"
    free_port >"$dir/node1.port"
    free_port >"$dir/node2.port"

    autoctl "$dir" create monitor --pgdata "$dir/monitor" --pgport "$(cat "$dir/monitor.port")" \
        --hostname 127.0.0.1 --auth trust --no-ssl >>"$dir/monitor.log" 2>&1 ||
        { tail -n 20 "$dir/monitor.log" >&2; exit 1; }
    autoctl "$dir" config set --pgdata "$dir/monitor" postgresql.listen_addresses 127.0.0.1 >/dev/null
    echo "unix_socket_directories = '$dir/monitor'" | as_owner tee -a "$dir/monitor/postgresql.conf" >/dev/null
    background "$dir" monitor run --pgdata "$dir/monitor"
    wait_for "$dir" 60 "the monitor did not start" monitor_sql "$dir" "SELECT 1"
    # Fast health checks: a lost primary is seen within about two seconds.
    monitor_sql "$dir" "ALTER SYSTEM SET pgautofailover.health_check_period = 1000" \
        -c "ALTER SYSTEM SET pgautofailover.health_check_timeout = 1000" \
        -c "ALTER SYSTEM SET pgautofailover.health_check_max_retries = 1" \
        -c "ALTER SYSTEM SET pgautofailover.health_check_retry_delay = 500" \
        -c "ALTER SYSTEM SET pgautofailover.node_considered_unhealthy_timeout = 2000" \
        -c "ALTER SYSTEM SET pgautofailover.primary_demote_timeout = 3000" \
        -c "SELECT pg_reload_conf()" >/dev/null

    for node in 1 2; do
        # The second node is made once the first is the formation's single node (it copies it).
        if [ "$node" = 2 ]; then
            wait_for "$dir" 90 "node 1 did not become the single node" node_is "$dir" "$(cat "$dir/node1.port")" single
        fi
        background "$dir" "node$node" create postgres --pgdata "$dir/node$node" \
            --pgport "$(cat "$dir/node$node.port")" --hostname 127.0.0.1 --listen 127.0.0.1 --name "node$node" \
            --monitor "$(monitor_url "$dir")" --auth trust --no-ssl --run
    done
    wait_for "$dir" 120 "the nodes did not become primary and secondary" formation_ready "$dir"
    echo "postgresql://127.0.0.1:$(cat "$dir/node1.port"),127.0.0.1:$(cat "$dir/node2.port")/postgres?target_session_attrs=read-write&user=postgres"
    ;;
state)
    dir="${2:?usage: pg-auto-failover.sh state DIR}"
    node_states "$dir"
    ;;
primary)
    dir="${2:?usage: pg-auto-failover.sh primary DIR}"
    node_states "$dir" | awk '$3 == "primary" || $3 == "wait_primary" { print $2; exit }'
    ;;
kill-primary)
    dir="${2:?usage: pg-auto-failover.sh kill-primary DIR}"
    port="$(node_states "$dir" | awk '$3 == "primary" { print $2; exit }')"
    [ -n "$port" ] || { echo "pg-auto-failover.sh: no node is primary" >&2; exit 1; }
    node=""
    for number in 1 2; do
        if [ "$(cat "$dir/node$number.port")" = "$port" ]; then node="$dir/node$number"; fi
    done
    postmaster="$(head -n 1 "$node/postmaster.pid")"
    # Its pg_autoctl (the process that supervises the postmaster, and their parent, the node's
    # main pg_autoctl, with its other children): all of them at once with the postmaster, or one
    # of them would restart it.
    supervisor="$(ps -o ppid= -p "$postmaster" | tr -d ' ')"
    main="$(ps -o ppid= -p "$supervisor" | tr -d ' ')"
    kill -9 $(pgrep -P "$main" || true) "$main" "$postmaster"
    echo "$port"
    ;;
wait-primary)
    dir="${2:?usage: pg-auto-failover.sh wait-primary DIR PORT [SECONDS]}"
    port="${3:?usage: pg-auto-failover.sh wait-primary DIR PORT [SECONDS]}"
    is_primary() { node_states "$dir" | awk -v port="$port" '$2 == port && ($3 == "primary" || $3 == "wait_primary") { found = 1 } END { exit !found }'; }
    wait_for "$dir" "${4:-60}" "node $port did not become primary" is_primary
    ;;
stop)
    dir="${2:?usage: pg-auto-failover.sh stop DIR}"
    # All three at once (a formation being torn down has no failover to make).
    for node in node1 node2 monitor; do
        [ -d "$dir/$node" ] || continue
        autoctl "$dir" stop --pgdata "$dir/$node" --fast >/dev/null 2>&1 &
    done
    wait || true
    sessions=()
    for file in "$dir"/*.session; do
        [ -f "$file" ] && sessions+=("$(cat "$file")")
    done
    alive() {
        local session
        for session in "${sessions[@]}"; do
            if pgrep -s "$session" >/dev/null 2>&1; then return 0; fi
        done
        return 1
    }
    deadline=$((SECONDS + 10))
    while ((SECONDS < deadline)) && alive; do sleep 0.2; done
    for session in "${sessions[@]}"; do
        for pid in $(pgrep -s "$session" || true); do kill -9 "$pid" 2>/dev/null || true; done
    done
    ;;
*)
    sed -n '2,30p' "$0" >&2
    exit 2
    ;;
esac
