#!/usr/bin/env python3
"""What scripts/docs-check.sh asks of the built site and of the pages Chromium rendered.

Usage: scripts/docs-pages.py page RENDERED.html   the words of prose on the page, on the first
                                                  line; then each paragraph that holds a table
                                                  left as Markdown, one a line
       scripts/docs-pages.py articles SITE        the path of every article page of the site
       scripts/docs-pages.py tables SITE          every paragraph of any page's render JSON that
                                                  holds a table left as Markdown

A table whose delimiter row does not match its header (4 cells above 3) is not a table to the
Markdown parser: it stays a paragraph of `|` text. Such a paragraph holds a delimiter (`|---`,
rendered `|—`) or a line starting with `|`. Prose is the text of the page's content (the abstract, paragraphs,
lists and headings) without code blocks, tables, the navigator and the topic lists.
"""

import glob
import html.parser
import json
import os
import re
import sys

# (DocC typesets `---` in a paragraph as an em dash.)
UNRENDERED_TABLE = re.compile(r"\|\s*:?(-{3}|\u2014)|(^|\n)\s*\|")


class RenderedPage(html.parser.HTMLParser):
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
    CONTENT = {"primary-content", "abstract"}
    EXCLUDED = {"pre", "table", "script", "style", "nav"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.paragraphs = []
        self.prose = []

    def handle_starttag(self, tag, attributes):
        if tag in self.VOID:
            return
        classes = set((dict(attributes).get("class") or "").split())
        self.stack.append((tag, classes))
        if tag == "p":
            self.paragraphs.append("")

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        tags = [tag for tag, _ in self.stack]
        if "p" in tags and self.paragraphs:
            self.paragraphs[-1] += data
        in_content = any(classes & self.CONTENT for _, classes in self.stack)
        if in_content and not any(tag in self.EXCLUDED for tag in tags):
            self.prose.append(data)


def page(path):
    rendered = RenderedPage()
    rendered.feed(open(path, encoding="utf-8", errors="replace").read())
    print(len(" ".join(rendered.prose).split()))
    for paragraph in rendered.paragraphs:
        if UNRENDERED_TABLE.search(paragraph):
            print(" ".join(paragraph.split())[:120])


def articles(site):
    for path in sorted(glob.glob(os.path.join(site, "data", "documentation", "*", "*.json"))):
        node = json.load(open(path, encoding="utf-8"))
        if node.get("kind") == "article":
            print(os.path.relpath(path, os.path.join(site, "data"))[: -len(".json")])


def paragraphs(node):
    if isinstance(node, dict):
        if node.get("type") == "paragraph":
            yield node
        for key, value in node.items():
            if key != "references":
                yield from paragraphs(value)
    elif isinstance(node, list):
        for value in node:
            yield from paragraphs(value)


def inline_text(node):
    if isinstance(node, list):
        return "".join(inline_text(value) for value in node)
    if not isinstance(node, dict):
        return ""
    own = "\n" if node.get("type") == "softBreak" else node.get("text") or node.get("code") or ""
    return own + inline_text(node.get("inlineContent", []))


def tables(site):
    for path in sorted(glob.glob(os.path.join(site, "data", "**", "*.json"), recursive=True)):
        for paragraph in paragraphs(json.load(open(path, encoding="utf-8"))):
            text = inline_text(paragraph.get("inlineContent", []))
            if UNRENDERED_TABLE.search(text):
                print(os.path.relpath(path, site) + ": " + " ".join(text.split())[:100])


def main():
    commands = {"page": page, "articles": articles, "tables": tables}
    if len(sys.argv) != 3 or sys.argv[1] not in commands:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    commands[sys.argv[1]](sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
