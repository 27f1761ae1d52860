#!/usr/bin/env bash
# Builds the archive decoder's libFuzzer target (Fuzz/FuzzArchive.swift with the Storage and
# FileArchiveBackend sources, -sanitize=fuzzer,address) and runs it. See docs/FUZZING.md.
# Usage: scripts/fuzz-archive.sh [seconds]        (default: 60)
# Findings are written to .build/fuzz/ as crash-*, leak-* or oom-* files.
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.build/fuzz"
mkdir -p "$out/corpus"
cd "$root"

flags=(
    -swift-version 6 -package-name swift_storage
    -enable-upcoming-feature ExistentialAny
    -enable-upcoming-feature MemberImportVisibility
    -enable-upcoming-feature InternalImportsByDefault
    -sanitize=fuzzer,address -parse-as-library -O -g
)

echo "fuzz-archive: building" >&2
swiftc "${flags[@]}" -module-name Storage -emit-library -static -emit-module \
    -emit-module-path "$out/Storage.swiftmodule" -o "$out/libStorage.a" \
    $(find Sources/Storage -name '*.swift' | sort)
swiftc "${flags[@]}" -module-name FileArchiveBackend -I "$out" -L "$out" -lStorage -use-ld=lld \
    -o "$out/fuzz-archive" \
    $(find Sources/FileArchiveBackend -name '*.swift' | sort) Fuzz/FuzzArchive.swift

echo "fuzz-archive: running for ${seconds}s" >&2
cd "$out"
export SWIFT_BACKTRACE=enable=no
if [ -z "$(ls -A corpus)" ]; then
    ARCHIVE_FUZZ_SEEDS="$out/corpus" ./fuzz-archive -runs=0 corpus >/dev/null 2>&1 || true
fi
./fuzz-archive -max_total_time="$seconds" -malloc_limit_mb=64 -rss_limit_mb=2048 -print_final_stats=1 corpus
