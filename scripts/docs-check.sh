#!/usr/bin/env bash
# The documentation in a real browser: serves the built site (.build/docs, from scripts/docs.sh)
# on 127.0.0.1, opens pages in headless Chromium, and checks that their content is in the DOM
# the browser rendered (DocC pages are empty HTML shells filled in by JavaScript, so text found
# only in the files proves nothing). Saves a screenshot of each page under .build/docs-check/.
# Fails on a table left as Markdown (on any page: scripts/docs-pages.py) and on an article with
# fewer than 200 words of prose; opens the front page and every article of every module.
# Usage: scripts/setup.sh --docs && scripts/docs.sh && scripts/docs-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."

site=.build/docs
out=.build/docs-check
if [ ! -f "$site/index.html" ]; then
    echo "docs-check: no site in $site (run scripts/docs.sh first)" >&2
    exit 1
fi
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
    echo "docs-check: no chromium (scripts/setup.sh --docs installs it)" >&2
    exit 1
fi
rm -rf "$out"
mkdir -p "$out"

# A free port, then a server bound to the loopback address only.
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site" >"$out/server.log" 2>&1 &
server=$!
profile="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$profile"' EXIT
for _ in $(seq 50); do
    if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/index.html')" 2>/dev/null; then
        break
    fi
    sleep 0.1
done

# Chromium runs as root in containers only without its sandbox; the profile is a throwaway.
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run
    --user-data-dir="$profile" --hide-scrollbars --window-size=1280,1000 --virtual-time-budget=15000)

failures=0
# check NAME PATH TEXT...: every TEXT must be in the rendered DOM of http://127.0.0.1:PORT/PATH.
check() {
    local name="$1" path="$2"
    shift 2
    local url="http://127.0.0.1:$port/$path"
    timeout 120 "$browser" "${flags[@]}" --dump-dom "$url" >"$out/$name.html" 2>"$out/$name.log" || true
    timeout 120 "$browser" "${flags[@]}" --screenshot="$out/$name.png" "$url" >>"$out/$name.log" 2>&1 || true
    # The text of the rendered page, tags and scripts removed, entities decoded.
    python3 - "$out/$name.html" >"$out/$name.txt" <<'PY'
import html, re, sys
page = open(sys.argv[1], encoding="utf-8", errors="replace").read()
page = re.sub(r"(?is)<(script|style|noscript)\b.*?</\1>", " ", page)
print(re.sub(r"\s+", " ", html.unescape(re.sub(r"(?s)<[^>]+>", " ", page))))
PY
    # A table left as Markdown (docs-pages.py says how it is told), and the words of prose.
    python3 scripts/docs-pages.py page "$out/$name.html" >"$out/$name.prose"
    local words
    words="$(head -n 1 "$out/$name.prose")"
    if [ "$(wc -l <"$out/$name.prose")" -gt 1 ]; then
        echo "docs-check: $name ($url): a table did not render, its Markdown is a paragraph:" >&2
        tail -n +2 "$out/$name.prose" | sed 's/^/    /' >&2
        failures=$((failures + 1))
    fi
    if [ -n "${MIN_WORDS:-}" ] && [ "${words:-0}" -lt "$MIN_WORDS" ]; then
        echo "docs-check: $name ($url): ${words:-0} words of prose, fewer than $MIN_WORDS" >&2
        failures=$((failures + 1))
    fi
    local text
    for text in "$@"; do
        if ! grep -qF -- "$text" "$out/$name.txt"; then
            echo "docs-check: $name ($url): \"$text\" is not in the rendered page" >&2
            failures=$((failures + 1))
        fi
    done
    if [ ! -s "$out/$name.png" ]; then
        echo "docs-check: $name: no screenshot" >&2
        failures=$((failures + 1))
    fi
    echo "docs-check: $name: checked ${#} texts, ${words:-0} words of prose, screenshot $out/$name.png" >&2
}

# The Storage landing page, its overview and Topics; the ObjectStore page with its task groups; an
# article with its code.
check storage "documentation/storage" "Store Swift values with no per-type persistence code" \
    "Essentials" "Getting started" "Implementing a backend" "ObjectStore"
check objectstore "documentation/storage/objectstore" "ObjectStore" "Class" \
    "The typed facade over any" "Saving values" "Transactions" "fetchAll" "transaction"
check article "documentation/storage/gettingstarted" "Getting started" "Describe a model" \
    "San Francisco International" "airports-california.json"

# The front page leads: what the package is, the way to Getting started, choosing an engine, the
# command and PostgreSQL, then the modules with Storage first.
MIN_WORDS=200 check front "documentation/" "swift-storage" "What it is" "Start here" \
    "Getting started" "Choosing a backend" "The storage command" "Connecting and configuring" \
    "Modules" "SQLiteBackend" "LMDBBackend" "FileArchiveBackend" "PostgreSQLBackend" \
    "StorageTestSupport" "Store Swift values with no per-type persistence code" \
    "Stores each collection as a table of typed columns in one SQLite database file"
if ! grep -qE 'What it is .*Start here .*Getting started.*Modules Storage .*SQLite.*LMDB' \
    "$out/front.txt"; then
    echo "docs-check: front: not the introduction, then Start here, then the modules, Storage first" >&2
    failures=$((failures + 1))
fi
check cli "documentation/storage/thestoragecommand" "The storage command" "storage info STORE" \
    "Exit status" "imported 3 records into Person"
check postgresql "documentation/postgresqlbackend/connectingandconfiguring" \
    "Connecting and configuring" "retryLimit" "readingFromPrimary"
check privileges "documentation/postgresqlbackend/retrieserrorsandprivileges" "Privileges" \
    "Faults" "runs the closure again"

# Every article of every module renders, with at least 200 words of prose and no table left as
# Markdown.
articles="$(python3 scripts/docs-pages.py articles "$site")"
if [ "$(echo "$articles" | grep -c .)" -lt 15 ]; then
    echo "docs-check: $(echo "$articles" | grep -c .) articles in $site, expected at least 15" >&2
    failures=$((failures + 1))
fi
for article in $articles; do
    MIN_WORDS=200 check "article-$(basename "$article")" "$article" "Overview"
done

# A table left as Markdown on any page, also the symbol pages no browser opened above.
unrendered="$(python3 scripts/docs-pages.py tables "$site")"
if [ -n "$unrendered" ]; then
    echo "docs-check: tables left as Markdown (a row's cells do not match the header's):" >&2
    echo "$unrendered" | sed 's/^/    /' >&2
    failures=$((failures + 1))
fi

if ((failures > 0)); then
    echo "docs-check: $failures failures (pages and logs in $out)" >&2
    exit 1
fi
echo "docs-check: every page rendered its content (screenshots in $out)" >&2
