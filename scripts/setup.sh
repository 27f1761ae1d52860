#!/usr/bin/env bash
# Installs the Debian packages this package builds and tests against, when they are missing.
# Usage: scripts/setup.sh && swift test      (or: scripts/setup.sh && swift run -c release Benchmarks)
#        scripts/setup.sh --docs               also what the documentation check needs (a browser)
set -euo pipefail

packages=(
    libsqlite3-dev # CSQLite: SQLite's headers and library
    liblmdb-dev    # CLMDB: LMDB's headers, library and lmdb.pc
    sqlite3        # tests read our databases back with the sqlite3 shell
    pkg-config     # SwiftPM finds system libraries through their .pc files
    strace         # the file archive's tests check the order of a save's system calls
    python3        # the LMDB dead-reader test plays the other processes with python3's ctypes
    libpq-dev      # CPostgreSQL: libpq's headers, library and libpq.pc
    postgresql     # the PostgreSQL tests start a private server (initdb, pg_ctl, pg_basebackup)
    pgbouncer      # and PgBouncer in transaction pooling in front of it (scripts/pgbouncer.sh)
    postgresql-15-auto-failover # the failover test's monitor and nodes: pg_auto_failover's extension
    pg-auto-failover-cli        # and pg_autoctl, which runs them (scripts/pg-auto-failover.sh)
    openssl        # the PostgreSQL TLS test makes a throwaway certificate authority
    valgrind       # CI holds the instructions and allocations of a save and a look-up (count-check.py)
)

# The documentation check (scripts/docs-check.sh) opens the built site in a real browser. Only
# that check needs it, so the tests' set-up stays small: it is installed with --docs.
if [ "${1:-}" = "--docs" ]; then
    packages+=(
        chromium       # headless Chromium renders the DocC site (its pages are built by JavaScript)
        fonts-dejavu-core # a font for the screenshots
    )
fi

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if ((${#missing[@]} > 0)); then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    echo "setup: installing ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
