#!/usr/bin/env bash
# Type-checks ordinary user code against the package's debug build and fails on any warning or
# error: every file of Tests/TypeCheckCorpus (bulk saves built by closures, predicates comparing
# every convertible type, arithmetic in closures beside `Column` expressions, engine codes), the
# README's programs (written from the README itself by `scripts/docs-snippets.py --readme`, so
# there is no copy to keep in step) and the DocC articles' snippets
# (Tests/DocumentationTests/ArticleSnippets.swift, which scripts/docs-snippets.py generates). An expression that takes more than 500 ms to
# type-check, or a function body that takes more, is a warning: a change to the public API that
# makes users' code slow to type-check fails here (issue 32: the async `save(contentsOf:)` made
# a bulk save fail to type-check after 33 s). Each file is checked on its own, in Swift 6 mode,
# as a client of the package sees it (only the modules it imports).
#
# Usage: scripts/typecheck-corpus.sh           after `swift build` or `swift test`: the check
#        scripts/typecheck-corpus.sh --times   and each file's type-check time (the fastest of
#                                              three), and without `import Storage` for a file
#                                              that marks itself `typecheck-corpus: without-import`
#                                              (it calls no Storage API): the docs/BENCHMARKS.md table
set -euo pipefail
cd "$(dirname "$0")/.."

times=false
if [ "${1:-}" = "--times" ]; then times=true; fi

modules="$(swift build --show-bin-path)/Modules"
if [ ! -f "$modules/Storage.swiftmodule" ]; then
    echo "typecheck-corpus: no $modules/Storage.swiftmodule; run swift build first" >&2
    exit 1
fi

# The system-library targets' module maps, and libpq's header folder, which clients of the
# backend modules need to load them; a module cache of our own, kept between runs.
flags=(
    -typecheck -swift-version 6 -warnings-as-errors -I "$modules"
    -I Sources/CSQLite -I Sources/CLMDB -I Sources/CPostgreSQL
    -module-cache-path .build/typecheck-corpus-cache
    -Xfrontend -warn-long-expression-type-checking=500 -Xfrontend -warn-long-function-bodies=500
)
for include in $(pkg-config --cflags-only-I libpq sqlite3 lmdb); do flags+=(-Xcc "$include"); done

files=(Tests/TypeCheckCorpus/*.swift Tests/DocumentationTests/ArticleSnippets.swift)
output="$(mktemp)"
readme="$(mktemp -d)"
trap 'rm -f "$output"; rm -rf "$readme"' EXIT
# Each README program is a folder: its main.swift and the files the README says go beside it.
python3 scripts/docs-snippets.py --readme "$readme" >/dev/null
for program in "$readme"/*/; do files+=("${program%/}"); done

# Type-checks "$1" (a file, or a README program's folder); prints its wall-clock time in
# milliseconds; fails on any diagnostic.
check() {
    local start end sources=("$1")
    if [ -d "$1" ]; then sources=("$1"/*.swift); fi
    start=$(date +%s%N)
    if ! swiftc "${flags[@]}" "${sources[@]}" >"$output" 2>&1 || grep -q -E '(warning|error):' "$output"; then
        echo "typecheck-corpus: $1 type-checks with diagnostics:" >&2
        grep -E '^[^ ].*(warning|error):' "$output" >&2 || cat "$output" >&2
        return 1
    fi
    end=$(date +%s%N)
    echo "$(((end - start) / 1000000))"
}

# The fastest of three runs of check, in seconds with two decimals.
fastest() {
    local best="" run ms
    for run in 1 2 3; do
        ms=$(check "$1") || return 1
        if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
    done
    printf '%d.%02d' $((best / 1000)) $((best % 1000 / 10))
}

failed=0
if ! $times; then
    for file in "${files[@]}"; do
        check "$file" >/dev/null || failed=1
    done
    if ((failed)); then exit 1; fi
    echo "typecheck-corpus: ${#files[@]} files and README programs type-check without a warning" >&2
    exit 0
fi

plain="$(mktemp -d)"
trap 'rm -f "$output"; rm -rf "$readme" "$plain"' EXIT
echo "| file | lines | with \`import Storage\` (s) | without (s) |"
echo "|---|---|---|---|"
for file in "${files[@]}"; do
    with=$(fastest "$file") || {
        failed=1
        continue
    }
    without="(calls Storage)"
    if [ -f "$file" ] && grep -q 'typecheck-corpus: without-import' "$file"; then
        grep -v '^import Storage$' "$file" >"$plain/$(basename "$file")"
        without=$(fastest "$plain/$(basename "$file")") || failed=1
    fi
    if [ -d "$file" ]; then
        echo "| README program \`$(basename "$file")\` | $(cat "$file"/*.swift | wc -l) | $with | $without |"
    else
        echo "| \`$file\` | $(wc -l <"$file") | $with | $without |"
    fi
done
exit "$failed"
