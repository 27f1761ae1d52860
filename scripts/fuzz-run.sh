#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ (with `swiftc -sanitize=fuzzer,address`, linked by lld)
# and runs each for the time given. See docs/FUZZING.md.
#
# Usage: scripts/fuzz-run.sh [target|all] [seconds]     (defaults: all, 60)
#   targets: archive  the archive decoder (Fuzz/FuzzArchive.swift, in FileArchiveBackend)
#            json     the JSON ingest path, into an in-memory store (Fuzz/FuzzJSON.swift)
#            records  the LMDB record and key decoders (Fuzz/FuzzRecords.swift, in LMDBBackend)
#            rows     the reflective row decoder (Fuzz/FuzzRows.swift, in Storage)
#
# Each target has its corpus in .build/fuzz/<target>/corpus (seeded on the first run) and writes
# findings there as crash-*, leak-*, oom-* or timeout-* files; the script then fails.
# FUZZ_JOBS=n runs n targets at once (default 1).
set -euo pipefail

which="${1:-all}"
seconds="${2:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.build/fuzz"
cd "$root"
. scripts/private-tmpdir.sh  # swiftc leaves a folder in TMPDIR per compile

flags=(
    -swift-version 6 -package-name swift_storage
    -enable-upcoming-feature ExistentialAny
    -enable-upcoming-feature MemberImportVisibility
    -enable-upcoming-feature InternalImportsByDefault
    -sanitize=fuzzer,address -parse-as-library -O -g
    # The whole module in one frontend, as optimized builds are made: without it swiftc ran one
    # frontend per file, each parsing the whole module again (the Storage module has 67 files).
    -whole-module-optimization
)
sources() { find "$@" -name '*.swift' | sort; }
# Runs swiftc in `folder`: a whole-module compile with -g leaves the module it emits for the
# debugger (`<Module>-1.swiftmodule`, .swiftdoc, .swiftsourceinfo) in the working directory, and
# the rows target and the library, both the Storage module, build at once. Paths given are absolute.
swiftc_in() { local folder="$1"; shift; (cd "$folder" && swiftc "$@"); }

# The Storage module as a static library, for the targets that are not inside it.
build_storage_library() {
    [ -f "$out/lib/libStorage.a" ] && return 0
    mkdir -p "$out/lib"
    swiftc_in "$out/lib" "${flags[@]}" -module-name Storage -emit-library -static -emit-module \
        -emit-module-path "$out/lib/Storage.swiftmodule" -o "$out/lib/libStorage.a" \
        $(sources "$root/Sources/Storage")
}

build() {
    local target="$1"
    local binary="$out/$target/fuzz-$target"
    mkdir -p "$out/$target/corpus"
    echo "fuzz: building $target" >&2
    case "$target" in
    archive)
        build_storage_library
        swiftc_in "$out/$target" "${flags[@]}" -module-name FileArchiveBackend -I "$out/lib" -L "$out/lib" \
            -lStorage -use-ld=lld -o "$binary" $(sources "$root/Sources/FileArchiveBackend") \
            "$root/Fuzz/FuzzArchive.swift"
        ;;
    json)
        build_storage_library
        swiftc_in "$out/$target" "${flags[@]}" -module-name FuzzJSON -I "$out/lib" -L "$out/lib" -lStorage \
            -use-ld=lld -o "$binary" "$root/Sources/StorageTestSupport/InMemoryStorageBackend.swift" \
            "$root/Fuzz/FuzzJSON.swift"
        ;;
    records)
        build_storage_library
        swiftc_in "$out/$target" "${flags[@]}" -module-name LMDBBackend -I "$out/lib" -L "$out/lib" -lStorage \
            -I "$root/Sources/CLMDB" -use-ld=lld -o "$binary" $(sources "$root/Sources/LMDBBackend") \
            "$root/Fuzz/FuzzRecords.swift"
        ;;
    rows)
        swiftc_in "$out/$target" "${flags[@]}" -module-name Storage -use-ld=lld -o "$binary" \
            $(sources "$root/Sources/Storage") "$root/Fuzz/FuzzRows.swift"
        ;;
    *)
        echo "fuzz: unknown target '$target' (archive, json, records, rows, all)" >&2
        exit 2
        ;;
    esac
}

run() {
    local target="$1"
    cd "$out/$target"
    export SWIFT_BACKTRACE=enable=no
    if [ -z "$(ls -A corpus)" ]; then
        # Each target writes its starting corpus when FUZZ_SEEDS names a folder.
        FUZZ_SEEDS="$out/$target/corpus" "./fuzz-$target" -runs=0 corpus >/dev/null 2>&1 || true
    fi
    echo "fuzz: running $target for ${seconds}s" >&2
    "./fuzz-$target" -max_total_time="$seconds" -malloc_limit_mb=64 -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 corpus >"$out/$target/last-run.log" 2>&1 || {
        tail -n 60 "$out/$target/last-run.log" >&2
        echo "fuzz: $target FAILED; the finding is in $out/$target (see docs/FUZZING.md)" >&2
        return 1
    }
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|cov: ' \
        "$out/$target/last-run.log" | tail -n 4 | sed "s/^/fuzz: $target: /" >&2
}

if [ "$which" = all ]; then targets=(archive json records rows); else targets=("$which"); fi
rm -rf "$out/lib"  # rebuilt from the current sources
if [ "$which" = all ]; then
    # Two builds at once: a whole-module compile runs on one core. The rows target (the Storage module with its entry point inside) builds beside the
    # Storage library and the three targets that link it. (`-enable-batch-mode -j2` would use two
    # cores in one swiftc, but for the static library its autolink step then looked for object
    # files under other names than the compiles wrote, and failed.)
    build rows &
    rows_build=$!
    trap 'kill "$rows_build" 2>/dev/null; rm -rf "$storage_tmpdir"' EXIT
    for target in archive json records; do build "$target"; done
    wait "$rows_build" || { echo "fuzz: building rows failed" >&2; exit 1; }
    trap 'rm -rf "$storage_tmpdir"' EXIT
else
    build "$which"
fi

jobs="${FUZZ_JOBS:-1}"
status=0
pids=()
for target in "${targets[@]}"; do
    (run "$target") &
    pids+=($!)
    if [ "${#pids[@]}" -ge "$jobs" ]; then
        wait "${pids[0]}" || status=1
        pids=("${pids[@]:1}")
    fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit "$status"
