# Sourced by scripts/postgres.sh, scripts/pgbouncer.sh and scripts/pg-auto-failover.sh: what each
# needs to find PostgreSQL's programs, run them as their owner and pick a port. The sourcing script
# sets `script_name` (for its messages) first.

# PostgreSQL's server programs: $POSTGRES_BINDIR, else the newest /usr/lib/postgresql/*/bin
# (empty when there is none; each script says what it needs).
bindir="${POSTGRES_BINDIR:-}"
if [ -z "$bindir" ]; then
    bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
fi

# Runs a command as the `postgres` user when this is root (PostgreSQL, PgBouncer and pg_autoctl
# refuse to run as root), else as this user.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Prints a TCP port of 127.0.0.1 that nothing listens on now (a server may still take it first:
# callers that bind retry with another).
free_port() {
    local port
    for _ in $(seq 1 50); do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
    echo "$script_name: no free port found" >&2
    exit 1
}
