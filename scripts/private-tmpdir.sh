# Sourced by the scripts that run the Swift toolchain (`. scripts/private-tmpdir.sh`).
#
# The Swift driver leaves an empty `TemporaryDirectory.XXXXXX` folder (holding `.keep-directory`)
# in TMPDIR for each compile job it runs, and SwiftPM leaves its lock files there: a build leaves
# dozens, every `swift test` a few. The script gets a TMPDIR of its own, removed when it exits.
# Readable by all: the PostgreSQL tests' private cluster, run as the postgres user, lives in it.
storage_tmpdir="$(mktemp -d "${TMPDIR:-/tmp}/storage-tmp.XXXXXX")"
chmod 755 "$storage_tmpdir"
export TMPDIR="$storage_tmpdir"
trap 'rm -rf "$storage_tmpdir"' EXIT
