#!/usr/bin/env bash
# Builds the documentation site with the toolchain's own DocC into .build/docs/, one archive per
# product module merged into one site, DocC warnings treated as errors (a broken ``symbol`` link
# fails the build).
# Usage: scripts/docs.sh            build .build/docs/
#        scripts/docs.sh --serve    build, then serve it on http://127.0.0.1:${DOCS_PORT:-8000}/
#        scripts/docs.sh --serve-only   serve what was built
set -euo pipefail
cd "$(dirname "$0")/.."

# The product modules. Each is its own archive; `docc merge` makes them one site. (This docc's
# experimental `--dependency` resolves no link into another archive, so a backend's pages name
# Storage's symbols in code voice rather than as ``links``.)
modules=(Storage SQLiteBackend LMDBBackend FileArchiveBackend PostgreSQLBackend StorageTestSupport)
output=.build/docs
work=.build/docs-work
port="${DOCS_PORT:-8000}"

serve() {
    echo "docs: serving http://127.0.0.1:$port/documentation/ (Ctrl-C stops)" >&2
    exec python3 -m http.server "$port" --bind 127.0.0.1 --directory "$output"
}

if [ "${1:-}" = "--serve-only" ]; then serve; fi
. scripts/private-tmpdir.sh  # dump-symbol-graph's build leaves folders in TMPDIR

# docc is not on PATH on Linux (no xcrun): it sits beside the swift driver.
swift_bin="$(dirname "$(readlink -f "$(command -v swift)")")"
docc="${DOCC:-$swift_bin/docc}"
if [ ! -x "$docc" ]; then
    echo "docs: no docc beside $swift_bin/swift (set DOCC=/path/to/docc)" >&2
    exit 1
fi

# Symbol graphs of the public API. dump-symbol-graph reuses the ordinary debug build (the one
# `swift test` makes), so after the tests it only extracts. It also tries the two test-runner
# modules SwiftPM synthesizes (swift_storagePackageTests, ...DiscoveredTests), which it cannot
# load, and then exits with 1: those two errors are expected, any other fails the build.
mkdir -p .build
stamp=.build/docs-stamp
touch "$stamp"
listing="$(swift package dump-symbol-graph --minimum-access-level public 2>&1)" || true
unexpected="$(echo "$listing" | grep -E '^error:' | grep -vE "symbol graph for 'swift_storagePackage(Discovered)?Tests'" || true)"
graphs="$(echo "$listing" | sed -n 's/^Files written to //p' | tail -1)"
if [ -n "$unexpected" ] || [ -z "$graphs" ] || [ ! -d "$graphs" ]; then
    echo "$listing" >&2
    echo "docs: swift package dump-symbol-graph failed" >&2
    exit 1
fi
for module in "${modules[@]}"; do
    if [ ! "$graphs/$module.symbols.json" -nt "$stamp" ]; then
        echo "docs: no fresh symbol graph for $module in $graphs" >&2
        exit 1
    fi
done

rm -rf "$work" "$output"
mkdir -p "$work"
archives=()
for module in "${modules[@]}"; do
    # Only this module's graphs: its own and its extensions of other modules (Module@Other).
    mkdir -p "$work/graphs/$module"
    cp "$graphs/$module.symbols.json" "$work/graphs/$module/"
    for extension in "$graphs/$module@"*.symbols.json; do
        if [ -e "$extension" ]; then cp "$extension" "$work/graphs/$module/"; fi
    done
    # --enable-experimental-overloaded-symbol-presentation: the sync and async overloads of one
    # name (save(_:) and its async twin) are one page and one sidebar entry, where the
    # extension files' topic groups name the method once (Storage.docc/ObjectStore.md).
    archive="$work/$module.doccarchive"
    log="$work/$module.log"
    if ! "$docc" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$work/graphs/$module" \
        --output-path "$archive" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.swift-storage.$module" \
        --transform-for-static-hosting \
        --enable-experimental-overloaded-symbol-presentation \
        --warnings-as-errors >"$log" 2>&1; then
        cat "$log" >&2
        echo "docs: docc convert failed for $module" >&2
        exit 1
    fi
    # --warnings-as-errors turns DocC's warnings into errors; anything else it says is a fault too.
    if grep -qiE 'warning:|error:' "$log"; then
        cat "$log" >&2
        echo "docs: docc reported problems for $module" >&2
        exit 1
    fi
    archives+=("$archive")
done

"$docc" merge "${archives[@]}" --output-path "$output" \
    --synthesized-landing-page-name swift-storage \
    --synthesized-landing-page-kind Package >"$work/merge.log" 2>&1 || {
    cat "$work/merge.log" >&2
    exit 1
}
# The merged site's front page: docs/FRONT_PAGE.md, above the modules (docc merge takes no page
# of our own, so the script writes it into the page the merge synthesized).
python3 scripts/docs-front-page.py "$output"
echo "docs: built $output (open /documentation/ on a server: scripts/docs.sh --serve)" >&2

if [ "${1:-}" = "--serve" ]; then
    rm -rf "$TMPDIR"  # exec skips the EXIT trap
    serve
fi
