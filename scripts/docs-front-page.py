#!/usr/bin/env python3
"""Gives the merged documentation site a front page: docs/FRONT_PAGE.md, written into the page
that `docc merge` synthesizes (data/documentation.json), above its list of modules.

Usage: scripts/docs-front-page.py SITE    (scripts/docs.sh runs it on .build/docs)

This docc's `merge` takes no landing page of our own: it makes one that lists the modules in
alphabetical order, with no text. So this script puts the Markdown's text into that page's render
JSON and lists the modules in the order the merge was given (`Storage` first).

The Markdown is kept simple: `# title`, the abstract on the next paragraph, `## headings`,
paragraphs and `- ` lists, with `code` and <doc:Module/Article> links inline. A link must name a
page of the site: one that does not fails the build.
"""

import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "docs", "FRONT_PAGE.md")
INLINE = re.compile(r"`([^`]+)`|<doc:([A-Za-z0-9_]+)/([A-Za-z0-9_]+)>")


class FrontPageError(Exception):
    pass


def reference(site, references, module, page):
    """The identifier of the site's page Module/Page, its reference added to `references`."""
    path = os.path.join(site, "data", "documentation", module.lower(), page.lower() + ".json")
    if not os.path.exists(path):
        raise FrontPageError(f"<doc:{module}/{page}> names no page of the site ({path})")
    node = json.load(open(path, encoding="utf-8"))
    identifier = node["identifier"]["url"]
    references[identifier] = {
        "type": "topic",
        "kind": "article",
        "role": node.get("metadata", {}).get("role", "article"),
        "identifier": identifier,
        "title": node["metadata"]["title"],
        "url": "/documentation/" + module.lower() + "/" + page.lower(),
        "abstract": node.get("abstract", []),
    }
    return identifier


def inline(site, references, text):
    content = []
    position = 0
    for match in INLINE.finditer(text):
        if match.start() > position:
            content.append({"type": "text", "text": text[position : match.start()]})
        if match.group(1) is not None:
            content.append({"type": "codeVoice", "code": match.group(1)})
        else:
            identifier = reference(site, references, match.group(2), match.group(3))
            content.append({"type": "reference", "identifier": identifier, "isActive": True})
        position = match.end()
    if position < len(text):
        content.append({"type": "text", "text": text[position:]})
    return content


def parse(site, references):
    """(title, abstract, content blocks) of the front page's Markdown."""
    paragraphs = [block.strip() for block in open(SOURCE, encoding="utf-8").read().split("\n\n") if block.strip()]
    if len(paragraphs) < 2 or not paragraphs[0].startswith("# "):
        raise FrontPageError(f"{SOURCE}: expected '# title' and an abstract first")
    title = paragraphs[0][2:].strip()
    abstract = inline(site, references, " ".join(paragraphs[1].split()))
    blocks = []
    for block in paragraphs[2:]:
        if block.startswith("## "):
            text = block[3:].strip()
            blocks.append({"type": "heading", "level": 2, "text": text, "anchor": text.replace(" ", "-")})
        elif block.startswith("- "):
            items = [" ".join(item.split()) for item in re.split(r"(?m)^- ", block) if item.strip()]
            blocks.append(
                {
                    "type": "unorderedList",
                    "items": [
                        {"content": [{"type": "paragraph", "inlineContent": inline(site, references, item)}]}
                        for item in items
                    ],
                }
            )
        else:
            blocks.append({"type": "paragraph", "inlineContent": inline(site, references, " ".join(block.split()))})
    return title, abstract, blocks


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    site = sys.argv[1]
    page_path = os.path.join(site, "data", "documentation.json")
    try:
        page = json.load(open(page_path, encoding="utf-8"))
        references = page.setdefault("references", {})
        title, abstract, blocks = parse(site, references)
        if title != page["metadata"]["title"]:
            raise FrontPageError(f"{SOURCE}: the title '{title}' is not the site's '{page['metadata']['title']}'")
        # The modules in the order of the site's navigator, which follows the merge's arguments.
        navigator = json.load(open(os.path.join(site, "index", "index.json"), encoding="utf-8"))
        order = [child["path"] for child in navigator["interfaceLanguages"]["swift"][0]["children"]]
        modules = [identifier for section in page["topicSections"] for identifier in section["identifiers"]]
        modules.sort(key=lambda identifier: order.index(references[identifier]["url"]))
    except (OSError, KeyError, ValueError, FrontPageError) as error:
        print(f"docs-front-page: {error}", file=sys.stderr)
        return 1
    page["abstract"] = abstract
    page["primaryContentSections"] = [{"kind": "content", "content": blocks}]
    page["topicSections"] = [{"title": "Modules", "identifiers": modules}]
    page["topicSectionsStyle"] = "list"
    with open(page_path, "w", encoding="utf-8") as file:
        json.dump(page, file, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
