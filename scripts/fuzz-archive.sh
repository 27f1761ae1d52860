#!/usr/bin/env bash
# The archive decoder's fuzz target alone: scripts/fuzz-archive.sh [seconds] (default 60).
# scripts/fuzz-run.sh builds and runs every target; see docs/FUZZING.md.
exec "$(dirname "$0")/fuzz-run.sh" archive "${1:-60}"
