"""Just enough Markdown for the docs tests: fenced blocks, headings, links and their anchors.

Fences may be indented (a block inside a numbered step); their text comes back dedented. Links
and headings are read from the prose only, never from inside a code block or a code span.
Anchors are made as GitHub makes them, so a link that works here works on the rendered page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^`\s]*)[ \t]*$")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)(?:[ \t]+\"[^\"]*\")?\)")
_CODE_SPAN = re.compile(r"`+[^`]*`+")


@dataclass(frozen=True)
class Block:
    info: str  # the fence's info string: "sh", "dotenv", "" when none
    text: str
    line: int  # where the opening fence is, counting from 1
    heading: str  # the nearest heading above it, "" before the first


def blocks(page: str) -> list[Block]:
    """Every fenced block of the page, in order."""
    found: list[Block] = []
    lines = page.splitlines()
    heading = ""
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            title = _HEADING.match(lines[i])
            if title is not None:
                heading = _plain(title.group(2))
            i += 1
            continue
        indent = len(opening.group("indent"))
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not re.fullmatch(r"[ \t]*```[ \t]*", lines[j]):
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        if j == len(lines):
            raise ValueError(f"the code block opened on line {i + 1} is never closed")
        found.append(Block(opening.group("info"), "\n".join(body) + "\n", i + 1, heading))
        i = j + 1
    return found


def prose(page: str) -> str:
    """The page without its fenced blocks and code spans (each block left as one blank line)."""
    kept: list[str] = []
    inside = False
    for line in page.splitlines():
        if _FENCE.match(line) or (inside and re.fullmatch(r"[ \t]*```[ \t]*", line)):
            inside = not inside
            kept.append("")
            continue
        kept.append("" if inside else _CODE_SPAN.sub(" ", line))
    return "\n".join(kept)


def links(page: str) -> list[str]:
    """The target of every inline link in the page's prose."""
    return [m.group("target") for m in _LINK.finditer(prose(page))]


def headings(page: str) -> list[str]:
    """The text of every heading outside code blocks, markup removed."""
    found = []
    for line in _without_blocks(page).splitlines():
        title = _HEADING.match(line)
        if title is not None:
            found.append(_plain(title.group(2)))
    return found


def anchors(page: str) -> set[str]:
    """The anchor GitHub gives each heading: lower case, punctuation dropped, spaces as
    hyphens, and -1, -2, ... after a repeated one."""
    seen: dict[str, int] = {}
    made = set()
    for title in headings(page):
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        made.add(slug if count == 0 else f"{slug}-{count}")
    return made


def _without_blocks(page: str) -> str:
    kept: list[str] = []
    inside = False
    for line in page.splitlines():
        if _FENCE.match(line) or (inside and re.fullmatch(r"[ \t]*```[ \t]*", line)):
            inside = not inside
            continue
        if not inside:
            kept.append(line)
    return "\n".join(kept)


def _plain(title: str) -> str:
    """A heading's text as rendered: code spans keep their words, links their text."""
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)
    return re.sub(r"`+([^`]*)`+", r"\1", title).replace("*", "").strip()
