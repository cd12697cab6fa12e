"""The SOUL folder: read it, check it, and hand back one frozen `Soul`.

Owns: loading the folder, the constitution pin, the shape of every SOUL file (required `## `
sections, the temperament block, lorebook entries, examples, return greetings, the bootstrap's
cold open and journey) and `lore_hits`, the one rule for which lorebook entries a message
wakes. The manifest's schema and its profiles (the budgets and sampling a small model gets
instead of the full ones) are `soul.manifest`; the Markdown reader is `soul.markdown`.

Must not: write anything. The constitution is immutable to hearth: no code path here, or
anywhere, opens it (or any other SOUL file) for writing, and a test keeps it so; changing it is
a person's deliberate edit followed by a person's re-pin (NOTES.md says how). Must not read the
environment either: `HEARTH_SOUL_DIR` belongs to the settings, which pass the folder in.

Every failure is a `SoulError` whose message is one line naming the file and the problem. YAML
and pydantic errors are folded into that line and never surface as their own tracebacks.
"""

from __future__ import annotations

import hashlib
import re
import string
from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import ValidationError

from soul.manifest import (
    DROPPABLE,
    FULL,
    MANIFEST,
    NEVER_DROPPED,
    PROFILES,
    SMALL,
    Example,
    LoreEntry,
    Manifest,
    Sampling,
    Soul,
    SoulError,
    Temperament,
    describe,
)
from soul.markdown import BULLET, NUMBERED, fenced_blocks, section, sections, unwrap

# What the soul's users import from here, the loader: the schema and the Markdown reader are
# files of their own (`soul.manifest`, `soul.markdown`).
__all__ = [
    "DROPPABLE", "FULL", "MANIFEST", "NEVER_DROPPED", "PROFILES", "SMALL", "Manifest",
    "Sampling", "Soul", "SoulError", "default_soul_dir", "load_soul", "lore_hits", "section",
]

_PIN_SHOWN = 12  # hex digits of a hash quoted in an error: enough to compare by eye


# --- loading ----------------------------------------------------------------------------------


def default_soul_dir() -> Path:
    """The bundled SOUL folder (Wren), beside this module, installed as package data."""
    return Path(__file__).resolve().parent / "default"


def load_soul(root: Path | None = None, *, profile: str = FULL) -> Soul:
    """Load and validate the SOUL folder at `root` (the bundled one when None), composed for
    `profile`: "small" takes the manifest's `profiles.small` budgets and sampling, or the full
    ones when the manifest declares none (`Soul.profile` says which it got).

    Raises SoulError, with one line naming the file and the problem, on a missing folder, file
    or section, a malformed manifest or block, or a constitution that does not match its pin.
    """
    if profile not in PROFILES:
        raise SoulError(f"soul: no profile {profile!r} (choose {' or '.join(PROFILES)})")
    folder = default_soul_dir() if root is None else Path(root)
    if not folder.is_dir():
        raise SoulError(f"soul: {folder} is not a folder")
    declared = _read_manifest(folder)
    manifest = declared.profiled(profile)
    files = manifest.files

    # Every listed file must exist before any is judged, so the first complaint is the plainest.
    for name in files.names():
        if not (folder / name).is_file():
            raise SoulError(f"soul: {name} is missing from {folder}")
    raw = {name: _read_bytes(folder / name, name) for name in files.names()}

    # The pin is checked on the exact bytes, before anything is decoded or normalised, so that
    # one changed byte anywhere (a BOM, a line ending) refuses to load.
    found = hashlib.sha256(raw[files.constitution]).hexdigest()
    if found != manifest.constitution_sha256:
        raise SoulError(
            f"soul: {files.constitution} does not match its pin in {MANIFEST} "
            f"(expected {manifest.constitution_sha256[:_PIN_SHOWN]}…, "
            f"found {found[:_PIN_SHOWN]}…)"
        )

    texts = {name: _decode(data, name) for name, data in raw.items()}
    for name, titles in manifest.required_sections.items():
        for title in titles:
            _require_section(texts[name], name, title)

    greetings_body = _require_section(texts[files.scenario], files.scenario, "Return greetings")
    cold_open = unwrap(_require_section(texts[files.bootstrap], files.bootstrap, "Cold open"))
    journey_body = _require_section(texts[files.bootstrap], files.bootstrap, "Journey")
    if not cold_open:
        raise SoulError(f"soul: {files.bootstrap}: the section 'Cold open' is empty")
    _check_placeholders(cold_open, files.bootstrap, "the cold open")
    greetings = _list_items(greetings_body, BULLET, files.scenario, "Return greetings")
    for greeting in greetings:
        _check_placeholders(greeting, files.scenario, "a return greeting")
    journey = _list_items(journey_body, NUMBERED, files.bootstrap, "Journey")

    try:
        return Soul(
            root=folder,
            manifest=manifest,
            constitution=texts[files.constitution],
            persona=texts[files.persona],
            scenario=texts[files.scenario],
            examples=_parse_examples(texts[files.examples], files.examples),
            lore=_parse_lore(texts[files.world], files.world),
            notes=texts[files.notes],
            bootstrap=texts[files.bootstrap],
            temperament=_parse_temperament(texts[files.persona], files.persona),
            return_greetings=greetings,
            cold_open=cold_open,
            journey=journey,
            sha256=found,
            profile=profile if profile in declared.profiles else FULL,
        )
    except ValidationError as error:  # pragma: no cover - every part was validated above
        raise SoulError(f"soul: {folder}: {describe(error)}") from None


def lore_hits(soul: Soul, text: str) -> list[LoreEntry]:
    """The lorebook entries that `text` mentions, in file order, each at most once.

    A key matches as a whole word or phrase, in any case, with any run of whitespace between
    the words of a phrase: "bins" wakes on "when do the bins go out", not on "cabinsize".
    """
    return [entry for entry in soul.lore if any(_key_pattern(k).search(text) for k in entry.keys)]


@lru_cache(maxsize=1024)
def _key_pattern(key: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(word) for word in key.split())
    # Look-arounds rather than \b: a key may begin or end with punctuation ("wi-fi", "c++"),
    # where \b would demand a word character on the wrong side.
    return re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)


def _read_manifest(folder: Path) -> Manifest:
    path = folder / MANIFEST
    if not path.is_file():
        raise SoulError(f"soul: {MANIFEST} is missing from {folder}")
    text = _decode(_read_bytes(path, MANIFEST), MANIFEST)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise SoulError(f"soul: {MANIFEST} is not valid YAML ({_yaml_problem(error)})") from None
    if not isinstance(data, dict):
        raise SoulError(f"soul: {MANIFEST} must be a mapping of settings, not {_kind(data)}")
    try:
        return Manifest.model_validate(data)
    except ValidationError as error:
        raise SoulError(f"soul: {MANIFEST}: {describe(error)}") from None


def _read_bytes(path: Path, name: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise SoulError(f"soul: {name} cannot be read ({error.strerror or error})") from None


def _decode(data: bytes, name: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SoulError(f"soul: {name} is not valid UTF-8 (at byte {error.start})") from None
    # Parsing sees one line-ending style and no BOM; the pin has already judged the raw bytes.
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _require_section(markdown: str, name: str, title: str) -> str:
    bodies = [body for found, body in sections(markdown, 2) if found == title]
    if not bodies:
        raise SoulError(f"soul: {name} lacks the section '{title}'")
    if len(bodies) > 1:
        raise SoulError(f"soul: {name} has the section '{title}' more than once")
    return bodies[0]


def _list_items(body: str, marker: re.Pattern[str], name: str, title: str) -> tuple[str, ...]:
    """The items of a markdown list; indented lines continue the item above them, and prose
    before the list is an introduction, not an item."""
    items: list[str] = []
    for line in body.splitlines():
        item = marker.match(line)
        if item:
            items.append(item.group(1).strip())
        elif items and line[:1].isspace() and line.strip():
            items[-1] = f"{items[-1]} {line.strip()}"
    items = [item for item in items if item]
    if not items:
        raise SoulError(f"soul: {name}: the section '{title}' has no list items")
    return tuple(items)


def _check_placeholders(text: str, name: str, what: str) -> None:
    # Greetings and the cold open are filled with str.format(name=...); catch a stray brace or
    # an unknown field here, at load, rather than as a KeyError in the middle of a chat.
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(text) if field is not None]
    except ValueError:
        raise SoulError(
            f"soul: {name}: {what} has a stray brace (write {{{{ or }}}} for a literal one)"
        ) from None
    for field in fields:
        if field != "name":
            raise SoulError(f"soul: {name}: {what} uses {{{field}}}; only {{name}} is filled in")


def _parse_temperament(markdown: str, name: str) -> Temperament:
    body = _require_section(markdown, name, "Temperament")
    blocks = [text for language, text in fenced_blocks(body) if language in {"yaml", "yml"}]
    if len(blocks) != 1:
        raise SoulError(
            f"soul: {name}: the section 'Temperament' needs exactly one ```yaml block "
            f"(found {len(blocks)})"
        )
    try:
        data = yaml.safe_load(blocks[0])
    except yaml.YAMLError as error:
        raise SoulError(
            f"soul: {name}: the Temperament block is not valid YAML ({_yaml_problem(error)})"
        ) from None
    if not isinstance(data, dict):
        raise SoulError(
            f"soul: {name}: the Temperament block must be a mapping, not {_kind(data)}"
        )
    try:
        return Temperament.model_validate(data)
    except ValidationError as error:
        raise SoulError(f"soul: {name}: Temperament: {describe(error)}") from None


def _parse_lore(markdown: str, name: str) -> tuple[LoreEntry, ...]:
    entries: list[LoreEntry] = []
    titles: set[str] = set()
    for title, body in sections(markdown, 2):
        if title in titles:
            raise SoulError(f"soul: {name} has two entries titled '{title}'")
        titles.add(title)
        first, _, rest = body.partition("\n")
        keys = re.fullmatch(r"keys[ \t]*:[ \t]*(.*)", first.strip(), re.IGNORECASE)
        if not keys:
            raise SoulError(f"soul: {name}: the entry '{title}' needs a 'keys:' line first")
        try:
            entries.append(
                LoreEntry(title=title, keys=tuple(keys.group(1).split(",")), text=unwrap(rest))
            )
        except ValidationError as error:
            raise SoulError(f"soul: {name}: the entry '{title}': {describe(error)}") from None
    return tuple(entries)


def _parse_examples(markdown: str, name: str) -> tuple[Example, ...]:
    examples: list[Example] = []
    for heading, body in sections(markdown, 3):
        if not heading.startswith("Example:"):
            continue
        title = heading.removeprefix("Example:").strip()
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        for line in lines:
            if not line.startswith(("{{user}}:", "{{char}}:")):
                raise SoulError(
                    f"soul: {name}: the example '{title}' has a line that is neither "
                    "{{user}}: nor {{char}}:"
                )
        if not any(line.startswith("{{char}}:") for line in lines):
            raise SoulError(f"soul: {name}: the example '{title}' has no {{{{char}}}}: line")
        try:
            examples.append(Example(title=title, text="\n".join(lines)))
        except ValidationError as error:
            raise SoulError(f"soul: {name}: an example: {describe(error)}") from None
    return tuple(examples)


def _yaml_problem(error: yaml.YAMLError) -> str:
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        problem = error.problem or error.context or "cannot be parsed"
        return " ".join(f"line {error.problem_mark.line + 1}: {problem}".split())
    return " ".join(str(error).split())


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"
