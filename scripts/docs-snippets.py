#!/usr/bin/env python3
"""Extracts the Swift code blocks of the DocC articles into a test file that the build compiles.

Usage: scripts/docs-snippets.py            write Tests/DocumentationTests/ArticleSnippets.swift
       scripts/docs-snippets.py --check    fail when that file is not what the articles give
       scripts/docs-snippets.py --readme DIR   write the README's programs into DIR, one folder
                                               each (ReadmeSnippetTests type-checks them)

Every ```swift block of Sources/*/*.docc/*.md is one of three kinds, said by an HTML comment on
the line before it (DocC does not render the comment):

  <!-- not compiled: REASON -->   left out; the reason is required (a fragment, shell, a server)
  <!-- compiled at file scope --> declarations (types, extensions, imports) put at file scope
  (no comment)                     statements: the body of an `async throws` function

The README's Swift blocks say where a reader pastes them, each by a comment too:

  <!-- not compiled: REASON -->                                left out
  <!-- compiled as main.swift -->                              a program's main.swift (top-level
                                                               code, which calls the blocking
                                                               methods)
  <!-- compiled as another file of the quick start's target --> one more file of the program of
                                                               the main.swift block before it

A README block without one of these is an error.

Blocks of one module share one Swift module, so a statement block may use a type declared in
another article (the `Person` of "Models and the type mapping"); names declared at file scope
must not clash across articles. A statement block that opens only in-memory stores
(`.sqliteInMemory()`) and reads no file, or only files of Tests/Fixtures, is also run by
ArticleSnippetTests.
"""

import difflib
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "Tests", "DocumentationTests", "ArticleSnippets.swift")
ALWAYS_IMPORTED = {"Foundation", "Storage", "SQLiteBackend"}

FENCE = re.compile(r"^```(\S*)\s*$")
NOT_COMPILED = re.compile(r"^<!--\s*not compiled:\s*(.*?)\s*-->\s*$")
FILE_SCOPE = re.compile(r"^<!--\s*compiled at file scope\s*-->\s*$")


class SnippetError(Exception):
    pass


def blocks(path):
    """Yields (line number, language, marker line, code) for every fenced block of a file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        start = index
        language = match.group(1)
        marker = lines[start - 1] if start > 0 else ""
        index += 1
        body = []
        while index < len(lines) and not lines[index].startswith("```"):
            body.append(lines[index])
            index += 1
        if index == len(lines):
            raise SnippetError(f"{path}:{start + 1}: a code block is never closed")
        index += 1
        yield start + 1, language, marker, "\n".join(body)


def type_name(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    module = os.path.basename(os.path.dirname(path)).removesuffix(".docc")
    return re.sub(r"[^A-Za-z0-9]", "", module + stem) + "Snippets"


def swift_array(entries):
    if not entries:
        return "[]\n"
    return "[\n" + ",\n".join("    " + entry for entry in entries) + ",\n]\n"


def generate():
    imports = set(ALWAYS_IMPORTED)
    declarations = []
    functions = []
    runnable = []
    reading = []
    counted = {"compiled": 0, "file scope": 0, "not compiled": 0}
    paths = sorted(glob.glob(os.path.join(ROOT, "Sources", "*", "*.docc", "**", "*.md"), recursive=True))
    for path in paths:
        relative = os.path.relpath(path, ROOT)
        statements = []
        for line, language, marker, code in blocks(path):
            if language != "swift":
                continue
            where = f"{relative}:{line}"
            reason = NOT_COMPILED.match(marker)
            if reason:
                if not reason.group(1):
                    raise SnippetError(f"{where}: 'not compiled' needs a reason")
                counted["not compiled"] += 1
                continue
            if FILE_SCOPE.match(marker):
                kept = []
                for text in code.split("\n"):
                    imported = re.match(r"^import (\w+)\s*$", text)
                    if imported:
                        imports.add(imported.group(1))
                    else:
                        kept.append(text)
                declarations.append(f"// {where}\n" + "\n".join(kept).strip("\n"))
                counted["file scope"] += 1
                continue
            if re.search(r"^import ", code, re.MULTILINE):
                raise SnippetError(f"{where}: imports belong in a block compiled at file scope")
            name = f"block{line}"
            body = "\n".join("    " + text if text else "" for text in code.split("\n"))
            statements.append(f"    /// {where}\n    static func {name}() async throws {{\n{body}\n    }}")
            if ".sqliteInMemory()" in code and "path:" not in code:
                files = re.findall(r'URL\(fileURLWithPath: "([^"]*)"\)', code)
                if all(file.startswith("Tests/Fixtures/") for file in files) and code.count("URL(") == len(files):
                    (reading if files else runnable).append(f'("{where}", {type_name(path)}.{name})')
            counted["compiled"] += 1
        if statements:
            functions.append(f"enum {type_name(path)} {{\n" + "\n\n".join(statements) + "\n}")

    header = (
        "// Generated by scripts/docs-snippets.py from the Swift code blocks of the DocC articles\n"
        "// (Sources/*/*.docc). Do not edit: change the article and run the script again.\n"
    )
    source = (
        header
        + "\n".join(f"import {name}" for name in sorted(imports))
        + "\n\n"
        + "\n\n".join(declarations)
        + "\n\n"
        + "\n\n".join(functions)
        + "\n\n/// The statement blocks that open only in-memory stores, which the tests run.\n"
        + "let runnableArticleSnippets: [(String, @Sendable () async throws -> Void)] = "
        + swift_array(runnable)
        + "\n/// The statement blocks that open only in-memory stores and read files of Tests/Fixtures\n"
        + "/// (by paths relative to the package's root), which the tests run from there.\n"
        + "let fixtureReadingArticleSnippets: [(String, @Sendable () async throws -> Void)] = "
        + swift_array(reading)
    )
    formatted = subprocess.run(
        ["swift", "format", "format", "--assume-filename", OUTPUT],
        input=source,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if formatted.returncode != 0:
        raise SnippetError("swift format failed on the generated file:\n" + formatted.stderr + source)
    return formatted.stdout, counted


README = os.path.join(ROOT, "README.md")
MAIN_FILE = re.compile(r"^<!--\s*compiled as main\.swift\s*-->\s*$")
ANOTHER_FILE = re.compile(r"^<!--\s*compiled as another file of the quick start's target\s*-->\s*$")


def readme_programs():
    """The README's programs: a list of (name, {file name: code}), in the README's order."""
    programs = []
    for line, language, marker, code in blocks(README):
        if language != "swift":
            continue
        where = f"README.md:{line}"
        reason = NOT_COMPILED.match(marker)
        if reason:
            if not reason.group(1):
                raise SnippetError(f"{where}: 'not compiled' needs a reason")
        elif MAIN_FILE.match(marker):
            programs.append((f"readme-{line}", {"main.swift": code + "\n"}))
        elif ANOTHER_FILE.match(marker):
            if not programs:
                raise SnippetError(f"{where}: another file of a program, but no main.swift block before it")
            programs[-1][1][f"File{line}.swift"] = code + "\n"
        else:
            raise SnippetError(f"{where}: a README block says where it is pasted, or why it is not compiled")
    return programs


def write_readme_programs(directory):
    programs = readme_programs()
    for name, files in programs:
        folder = os.path.join(directory, name)
        os.makedirs(folder, exist_ok=True)
        for file, code in files.items():
            with open(os.path.join(folder, file), "w", encoding="utf-8") as output:
                output.write(code)
    print(f"docs-snippets: wrote {len(programs)} README programs into {directory}", file=sys.stderr)


def main():
    if sys.argv[1:2] == ["--readme"] and len(sys.argv) == 3:
        try:
            write_readme_programs(sys.argv[2])
        except SnippetError as error:
            print(f"docs-snippets: {error}", file=sys.stderr)
            return 1
        return 0
    check = "--check" in sys.argv[1:]
    try:
        source, counted = generate()
    except SnippetError as error:
        print(f"docs-snippets: {error}", file=sys.stderr)
        return 1
    summary = ", ".join(f"{count} {kind}" for kind, count in counted.items())
    if check:
        current = open(OUTPUT, encoding="utf-8").read() if os.path.exists(OUTPUT) else ""
        if current != source:
            diff = difflib.unified_diff(
                current.splitlines(True), source.splitlines(True), "checked in", "from the articles"
            )
            sys.stderr.writelines(diff)
            print(
                "docs-snippets: Tests/DocumentationTests/ArticleSnippets.swift is out of date:"
                " run scripts/docs-snippets.py",
                file=sys.stderr,
            )
            return 1
        print(f"docs-snippets: up to date ({summary})", file=sys.stderr)
        return 0
    with open(OUTPUT, "w", encoding="utf-8") as file:
        file.write(source)
    print(f"docs-snippets: wrote {os.path.relpath(OUTPUT, ROOT)} ({summary})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
