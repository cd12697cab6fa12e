"""Reading a document sent in chat: its text, page by page or section by section, cut into
passages of a few paragraphs, each with a short line that situates it.

Formats: plain text, markdown (its headings name the sections), PDF (pypdf: one section per
page) and Word's docx (its XML read with the standard library: paragraphs, headings by their
style). A file that is none of these, is empty, is not text, or that pypdf cannot read is
refused with `Unreadable`, whose message is written for the member who sent it.

Owns: parsing and cutting. Must not: touch the store, or keep the bytes it was given.
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from dataclasses import dataclass
from pathlib import PurePath
from xml.etree import ElementTree as ET

log = logging.getLogger("hearth.knowledge")

MAX_BYTES = 20 * 1024 * 1024  # Telegram hands a bot files up to 20 MB
MAX_PAGES = 2_000
PASSAGE_CHARS = 900  # a passage: a few paragraphs, what one question's answer usually needs
PASSAGE_MOST = 1_500  # a paragraph longer than this is cut at sentence ends
FORMATS = {".txt": "txt", ".text": "txt", ".md": "md", ".markdown": "md", ".pdf": "pdf",
           ".docx": "docx"}
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


class Unreadable(ValueError):
    """A file she cannot read; the message says why, for the member."""


@dataclass(frozen=True)
class Section:
    """A stretch of a document: one page of a PDF, or the text under one heading."""

    text: str
    page: int | None = None
    heading: str | None = None


@dataclass(frozen=True)
class Passage:
    """One passage to store: its words, where it sits, and the line that situates it."""

    seq: int
    text: str
    page: int | None
    section: str | None

    def situated(self, title: str) -> str:
        """What is embedded: the document and place first, so a passage that never names its
        subject ("press RESET for 5 seconds") is still found by a question about the boiler."""
        where = [title]
        if self.section:
            where.append(self.section)
        if self.page is not None:
            where.append(f"p. {self.page}")
        return " — ".join(where) + "\n" + self.text


def format_of(name: str, data: bytes) -> str:
    """The format by the file's name, else by its first bytes; `Unreadable` when neither says."""
    suffix = PurePath(name).suffix.lower()
    if suffix in FORMATS:
        return FORMATS[suffix]
    if data.startswith(b"%PDF"):
        return "pdf"
    if data.startswith(b"PK\x03\x04") and _is_docx(data):
        return "docx"
    if _looks_like_text(data):
        return "txt"
    raise Unreadable("I can read text, markdown, PDF and Word (.docx) files, not this one")


def read(name: str, data: bytes) -> tuple[str, list[Section]]:
    """The format and the sections of a file. CPU work: run it off the event loop."""
    if not data:
        raise Unreadable("the file is empty")
    if len(data) > MAX_BYTES:
        raise Unreadable(f"the file is larger than {MAX_BYTES // (1024 * 1024)} MB")
    fmt = format_of(name, data)
    sections = {"txt": _text, "md": _markdown, "pdf": _pdf, "docx": _docx}[fmt](data)
    sections = [s for s in sections if s.text.strip()]
    if not sections:
        raise Unreadable("I found no text in it (a scan without text is a picture to me)")
    return fmt, sections


def passages(sections: list[Section]) -> list[Passage]:
    """Cut sections into passages of about PASSAGE_CHARS: whole paragraphs together, a long
    paragraph at its sentences; a passage never spans two sections."""
    out: list[Passage] = []
    for section in sections:
        held: list[str] = []
        size = 0
        for paragraph in _paragraphs(section.text):
            if held and size + len(paragraph) > PASSAGE_CHARS:
                out.append(Passage(len(out), "\n\n".join(held), section.page, section.heading))
                held, size = [], 0
            held.append(paragraph)
            size += len(paragraph) + 2
        if held:
            out.append(Passage(len(out), "\n\n".join(held), section.page, section.heading))
    return out


def _paragraphs(text: str) -> list[str]:
    out: list[str] = []
    for raw in re.split(r"\n\s*\n", text):
        block = raw.strip()
        if not block:
            continue
        if len(block) <= PASSAGE_MOST:
            out.append(block)
            continue
        piece = ""
        for said in _SENTENCE_END.split(block):
            sentence = said
            while len(sentence) > PASSAGE_MOST:  # no sentence ends: cut where it must be cut
                if piece:
                    out.append(piece)
                    piece = ""
                out.append(sentence[:PASSAGE_MOST])
                sentence = sentence[PASSAGE_MOST:]
            if piece and len(piece) + len(sentence) > PASSAGE_CHARS:
                out.append(piece)
                piece = ""
            piece = f"{piece} {sentence}".strip()
        if piece:
            out.append(piece)
    return out


def _decode(data: bytes) -> str:
    if not _looks_like_text(data):
        raise Unreadable("it does not look like text")
    encodings = ("utf-16",) if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ("utf-8-sig",)
    for encoding in encodings:
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("cp1252", errors="replace")  # an old Windows text file


def _looks_like_text(data: bytes) -> bool:
    head = data[:8192]
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return True
    if b"\x00" in head:
        return False
    controls = sum(1 for b in head if b < 9 or 13 < b < 32)
    return controls <= len(head) // 100


def _text(data: bytes) -> list[Section]:
    return [Section(_decode(data).replace("\r\n", "\n"))]


def _markdown(data: bytes) -> list[Section]:
    sections: list[Section] = []
    trail: list[tuple[int, str]] = []  # the headings above the current line, by level
    lines: list[str] = []

    def close() -> None:
        if lines:
            heading = " / ".join(h for _, h in trail) or None
            sections.append(Section("\n".join(lines), heading=heading))
            lines.clear()

    fenced = False
    for line in _decode(data).replace("\r\n", "\n").split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        found = None if fenced else _HEADING.match(line)
        if found is None:
            lines.append(line)
            continue
        close()
        level = len(found.group(1))
        trail = [(lvl, h) for lvl, h in trail if lvl < level] + [(level, found.group(2))]
    close()
    return sections


def _pdf(data: bytes) -> list[Section]:
    from pypdf import PdfReader  # noqa: PLC0415 -- loaded when a PDF arrives, not at start
    from pypdf.errors import PdfReadError  # noqa: PLC0415

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("the PDF is locked with a password")
        if len(reader.pages) > MAX_PAGES:
            raise Unreadable(f"the PDF has more than {MAX_PAGES} pages")
        return [Section(page.extract_text() or "", page=n)
                for n, page in enumerate(reader.pages, start=1)]
    except Unreadable:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError,
            RecursionError, OSError, NotImplementedError) as exc:
        log.info("a PDF could not be read: %s", type(exc).__name__)
        raise Unreadable("the PDF looks damaged; I could not read it") from None


def _is_docx(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            return "word/document.xml" in z.namelist()
    except zipfile.BadZipFile:
        return False


def _docx(data: bytes) -> list[Section]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            info = z.getinfo("word/document.xml")
            if info.file_size > 8 * MAX_BYTES:  # a zip bomb is no document
                raise Unreadable("the Word file is too large inside")
            root = ET.fromstring(z.read(info))  # noqa: S314 -- no DTD or entity is expanded
    except (zipfile.BadZipFile, KeyError, ET.ParseError):
        raise Unreadable("the Word file looks damaged; I could not read it") from None
    sections: list[Section] = []
    heading: str | None = None
    lines: list[str] = []
    for paragraph in root.iter(f"{_W}p"):
        text = "".join(t.text or "" for t in paragraph.iter(f"{_W}t")).strip()
        # A heading by its outline level (any language's Word), or by the English style id
        # a file made elsewhere carries.
        style = paragraph.find(f"{_W}pPr/{_W}pStyle")
        is_heading = paragraph.find(f"{_W}pPr/{_W}outlineLvl") is not None or (
            style is not None and "heading" in (style.get(f"{_W}val") or "").lower())
        if is_heading and text:
            if lines:
                sections.append(Section("\n\n".join(lines), heading=heading))
                lines = []
            heading = text
        elif text:
            lines.append(text)
    if lines:
        sections.append(Section("\n\n".join(lines), heading=heading))
    return sections
