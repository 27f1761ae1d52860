#!/usr/bin/env python3
"""Checks on Linux that the code builds on the Apple platforms Package.swift declares.

Usage: scripts/platform-check.py            fail on a use the declared platforms lack
       scripts/platform-check.py --list     also print the APIs checked, with their versions

The compiler ignores Apple availability on Linux, so a use of an API newer than the declared
minimums builds here and fails a user's first build on a Mac (issue 32: `Atomic`, macOS 15, with
macOS 13 declared). This script reads the minimums from Package.swift's `platforms:` and the
availability of the toolchain's own Swift modules from their .swiftinterface files, which keep
the Apple versions on Linux too (`@available(macOS 15.0, iOS 18.0, …)`). Every top-level type,
protocol and function of those modules that is newer than a declared minimum on some platform
(all of its overloads, for a function) is then looked for, as a whole word outside comments and
string literals, in the Swift files of Sources, Tests, Benchmarks and Examples. A use passes
inside a declaration marked `@available` with versions at least the API's, inside an
`if #available` block, or inside `#if os(Linux)`. A name the package declares itself (a
`typealias Job`) is taken to be its own and not looked for.

It also fails on a package of Examples that declares older platforms than this one (it depends
on it), and on a `/proc/` path in the library products' sources outside `#if os(Linux)`:
Apple platforms have no /proc.

What it does not see: members (a method or initializer added to an older type), Foundation
(Linux's Foundation is another implementation and carries no Apple versions), and the C
libraries. Those are left to a build on a Mac.
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLATFORMS = ["macOS", "iOS", "tvOS", "watchOS", "visionOS"]
SCANNED = ["Sources", "Tests", "Benchmarks", "Examples"]
LIBRARY_TARGETS = ["Storage", "SQLiteBackend", "FileArchiveBackend", "LMDBBackend", "PostgreSQLBackend",
                   "StorageTestSupport"]
MODULES = ["Swift", "_Concurrency", "Synchronization", "Observation", "Distributed", "RegexBuilder",
           "_StringProcessing", "Runtime", "Dispatch"]


def version(text):
    """`15`, `15.0` and `15.0.0` as the same (15, 0, 0)."""
    parts = [int(part) for part in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def declared_platforms(manifest_path=os.path.join(ROOT, "Package.swift")):
    """The minimums of a manifest's `platforms:`, as {"macOS": (15, 0, 0), …}."""
    manifest = open(manifest_path, encoding="utf-8").read()
    match = re.search(r"platforms:\s*\[(.*?)\]", manifest, re.S)
    if not match:
        sys.exit(f"platform-check: {os.path.relpath(manifest_path, ROOT)} declares no platforms")
    found = {}
    for name, number in re.findall(r"\.(macOS|iOS|tvOS|watchOS|visionOS)\(\.v(\d+(?:_\d+)*)\)", match.group(1)):
        found[name] = version(number.replace("_", "."))
    missing = [name for name in PLATFORMS if name not in found]
    if missing:
        # SwiftPM's default for an undeclared platform is older than anything checked here.
        sys.exit(f"platform-check: {os.path.relpath(manifest_path, ROOT)} declares no minimum for " + ", ".join(missing))
    return found


def shown(value):
    """(15, 0, 0) as 15, (13, 3, 0) as 13.3."""
    parts = list(value)
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return ".".join(map(str, parts))


def availability(attributes):
    """The Apple versions an `@available(…)` list names, as {"macOS": (15, 0), …}; {} for none."""
    versions = {}
    for name, number in re.findall(r"\b(macOS|iOS|tvOS|watchOS|visionOS)\s+(\d+(?:\.\d+)*)", attributes):
        versions[name] = version(number)
    return versions


def toolchain_apis():
    """Each top-level public declaration of the toolchain's Swift modules: {name: (module, versions)},
    the versions being the oldest over its declarations (an overload may be older)."""
    swift = os.path.realpath(os.popen("command -v swift").read().strip())
    folder = os.path.join(os.path.dirname(os.path.dirname(swift)), "lib", "swift", "linux")
    declaration = re.compile(
        r"^((?:@\w+(?:\([^()]*(?:\([^()]*\)[^()]*)*\))?\s+)*)public\s+(?:final\s+)?"
        r"(?:struct|enum|class|protocol|actor|typealias|func)\s+([A-Za-z][A-Za-z0-9_]*)"
    )
    apis = {}
    for module in MODULES:
        for path in glob.glob(os.path.join(folder, module + ".swiftmodule", "*-linux-gnu.swiftinterface")):
            lines = open(path, encoding="utf-8").read().split("\n")
            for index, line in enumerate(lines):
                match = declaration.match(line)
                if not match:
                    continue
                attributes = match.group(1)
                back = index - 1
                while back >= 0 and lines[back].startswith("@"):
                    attributes += " " + lines[back]
                    back -= 1
                versions = {}
                for listed in re.findall(r"@available\(([^)]*)\)", attributes):
                    versions.update(availability(listed))
                name = match.group(2)
                if name in apis:
                    # The oldest declaration wins: a platform missing from either is available always.
                    old = apis[name][1]
                    versions = {p: min(old[p], versions[p]) for p in PLATFORMS if p in old and p in versions}
                apis[name] = (module, versions)
    if not apis:
        sys.exit("platform-check: found no .swiftinterface under " + folder)
    return apis


def code_lines(text):
    """The file's lines with comments and string literals blanked (multi-line ones too)."""
    text = re.sub(r'"""(?:.|\n)*?"""', lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    text = re.sub(r"/\*(?:.|\n)*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    lines = []
    for line in text.split("\n"):
        line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
        lines.append(line.split("//")[0])
    return lines


def scan(path, too_new, declared):
    """The problems of one file: uses of `too_new` not guarded, and (library sources) /proc paths."""
    problems = []
    raw = open(path, encoding="utf-8").read().split("\n")
    lines = code_lines("\n".join(raw))
    relative = os.path.relpath(path, ROOT)
    in_library = any(relative.startswith(f"Sources/{target}/") for target in LIBRARY_TARGETS)
    depth = 0
    guards = []  # (depth at which the guarded scope closes, versions)
    pending = None  # versions of an @available or #available whose scope has not opened yet
    conditions = []  # one flag per open #if: whether it is Linux-only
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        directive = re.match(r"#(if|elseif|else|endif)\b(.*)", stripped)
        if directive:
            kind, condition = directive.groups()
            if kind == "if":
                conditions.append(bool(re.fullmatch(r"\s*os\(Linux\)\s*", condition)))
            elif kind in ("elseif", "else") and conditions:
                conditions[-1] = False
            elif kind == "endif" and conditions:
                conditions.pop()
            continue
        linux_only = any(conditions)
        marked = re.search(r"[@#]available\(([^)]*)\)", line)
        if marked:
            pending = availability(marked.group(1))
        if not linux_only:
            if in_library and "/proc/" in raw[number - 1] and not raw[number - 1].strip().startswith("//"):
                problems.append(f"{relative}:{number}: a /proc path outside #if os(Linux)")
            guard = {}
            for _, versions in guards:
                for platform, value in versions.items():
                    guard[platform] = max(guard.get(platform, ()), value)
            if pending:
                for platform, value in pending.items():
                    guard[platform] = max(guard.get(platform, ()), value)
            for word in set(re.findall(r"\b[A-Za-z][A-Za-z0-9_]*\b", line)):
                if word not in too_new:
                    continue
                module, versions = too_new[word]
                lacking = [
                    f"{platform} {shown(versions[platform])}"
                    for platform in PLATFORMS
                    if platform in versions and versions[platform] > declared[platform]
                    and guard.get(platform, ()) < versions[platform]
                ]
                if lacking:
                    problems.append(
                        f"{relative}:{number}: {module}.{word} needs {', '.join(lacking)} "
                        "(above Package.swift's platforms); mark the declaration @available or raise the platforms"
                    )
        for character in line:
            if character == "{":
                depth += 1
                if pending is not None:
                    guards.append((depth, pending))
                    pending = None
            elif character == "}":
                while guards and guards[-1][0] == depth:
                    guards.pop()
                depth -= 1
    return problems


def main():
    declared = declared_platforms()
    apis = toolchain_apis()
    paths = [
        path
        for folder in SCANNED
        for path in sorted(glob.glob(os.path.join(ROOT, folder, "**", "*.swift"), recursive=True))
        if "/.build/" not in path
    ]
    # A name this package declares itself (StoreExecutor's `typealias Job`) means its own.
    own = set()
    for path in paths:
        own.update(re.findall(r"\b(?:struct|class|enum|protocol|actor|typealias|func)\s+([A-Za-z][A-Za-z0-9_]*)",
                              "\n".join(code_lines(open(path, encoding="utf-8").read()))))
    too_new = {
        name: (module, versions)
        for name, (module, versions) in apis.items()
        if any(versions.get(platform, ()) > declared[platform] for platform in PLATFORMS)
    }
    shadowed = own & set(too_new)
    for name in shadowed:
        del too_new[name]
    if "--list" in sys.argv:
        print("declared: " + ", ".join(f"{p} {shown(declared[p])}" for p in PLATFORMS))
        for name, (module, versions) in sorted(too_new.items()):
            print(f"{module}.{name}: " + ", ".join(f"{p} {shown(v)}" for p, v in versions.items()))
        if shadowed:
            print("declared by this package too, so not looked for: " + ", ".join(sorted(shadowed)))
    problems = []
    # A package that depends on this one may not declare older platforms (SwiftPM refuses it).
    for manifest in sorted(glob.glob(os.path.join(ROOT, "Examples", "*", "Package.swift"))):
        theirs = declared_platforms(manifest)
        older = [f"{p} {shown(theirs[p])}" for p in PLATFORMS if theirs[p] < declared[p]]
        if older:
            problems.append(f"{os.path.relpath(manifest, ROOT)}: declares {', '.join(older)}, older than Package.swift's")
    for path in paths:
        problems += scan(path, too_new, declared)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        sys.exit(f"platform-check: {len(problems)} uses the declared platforms lack")
    print(f"platform-check: no use of the {len(too_new)} toolchain APIs newer than Package.swift's platforms "
          "outside @available, #available or #if os(Linux)", file=sys.stderr)


if __name__ == "__main__":
    main()
