"""The little Markdown the SOUL files are written in: headings, fenced blocks, list items.

Owns: finding a section by its heading outside fenced blocks, and the lines of a list. Must
not: know what any SOUL file holds (the loader, `soul.files`, does).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# --- markdown ---------------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)[ \t]*([\w+-]*)")
BULLET = re.compile(r"^[-*+][ \t]+(.*)$")
NUMBERED = re.compile(r"^\d+[.)][ \t]+(.*)$")


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and set(stripped) == {fence[0]}


def _lines_outside_fences(markdown: str) -> Iterator[tuple[str, bool]]:
    """Each line with whether it belongs to a fenced code block (the fences included)."""
    fence: str | None = None
    for line in markdown.splitlines():
        if fence is None:
            opener = _FENCE.match(line)
            if opener:
                fence = opener.group(1)
            yield line, opener is not None
        else:
            if _closes(line, fence):
                fence = None
            yield line, True


def fenced_blocks(markdown: str) -> list[tuple[str, str]]:
    """(language, content) for every closed fenced code block, in order."""
    blocks: list[tuple[str, str]] = []
    fence: str | None = None
    language = ""
    content: list[str] = []
    for line in markdown.splitlines():
        if fence is None:
            opener = _FENCE.match(line)
            if opener:
                fence, language, content = opener.group(1), opener.group(2).lower(), []
        elif _closes(line, fence):
            blocks.append((language, "\n".join(content)))
            fence = None
        else:
            content.append(line)
    return blocks


def sections(markdown: str, level: int) -> list[tuple[str, str]]:
    """(title, body) for every heading of exactly `level`, in order. A body runs to the next
    heading of the same or a higher level; headings inside code fences are text."""
    found: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    for line, fenced in _lines_outside_fences(markdown):
        heading = None if fenced else _HEADING.match(line)
        if heading and len(heading.group(1)) <= level:
            if len(heading.group(1)) == level:
                current = []
                found.append((heading.group(2).strip(), current))
            else:
                current = None  # a higher heading closes the section and owns what follows
            continue
        if current is not None:
            current.append(line)
    return [(title, "\n".join(body).strip()) for title, body in found]


def unwrap(text: str) -> str:
    """Hard-wrapped paragraphs as single lines. The files wrap at 99 columns for the people who
    edit them; a chat message or a prompt should not inherit those breaks. Blank lines still
    part paragraphs, and list items keep their own lines."""
    paragraphs: list[str] = []
    for paragraph in re.split(r"\n[ \t]*\n", text.strip()):
        lines: list[str] = []
        for raw in paragraph.splitlines():
            line = raw.strip()
            if lines and line and not (BULLET.match(line) or NUMBERED.match(line)):
                lines[-1] = f"{lines[-1]} {line}"
            elif line:
                lines.append(line)
        if lines:
            paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def section(markdown: str, title: str) -> str:
    """The body of the first `## title` section, stripped; "" when there is none.

    The body runs to the next `#` or `##` heading; `###` subsections belong to it, and
    headings inside fenced code blocks are text, not structure.
    """
    wanted = title.strip()
    for found, body in sections(markdown, 2):
        if found == wanted:
            return body
    return ""


