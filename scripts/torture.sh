#!/usr/bin/env bash
# The long kill -9 run: kills the crash writer KILLS times per backend (default 1,000) at random
# moments and checks the store after every kill, on a fresh store every 100 kills (see
# Tests/ReliabilityTests/KillTortureTests.swift
# and docs/RELIABILITY.md, "1. Kill -9 torture"). CI runs the same test with 30 kills.
#
# Usage: scripts/torture.sh [KILLS] [MAX_DELAY_US] [BACKENDS]
#   KILLS         kills per backend (default 1000)
#   MAX_DELAY_US  longest wait between the writer's first commit and its kill, in microseconds
#                 (default 50000)
#   BACKENDS      comma-separated: sqlite,lmdb,archive (default all three)
# Prints one line per backend: kills survived, batches committed, time taken.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/private-tmpdir.sh  # the build leaves a folder in TMPDIR per compile

kills="${1:-1000}"
delay="${2:-50000}"
backends="${3:-sqlite,lmdb,archive}"

scripts/setup.sh
swift build --build-tests
TORTURE_KILLS="$kills" TORTURE_MAX_DELAY_US="$delay" TORTURE_BACKENDS="$backends" \
    swift test --skip-build --filter 'killedWriterLosesNoAcknowledgedBatch' 2>&1 \
    | grep -E '^kill torture|passed|failed|Expectation|error' 
