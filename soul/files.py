"""The SOUL folder: read it, check it, and hand back one frozen `Soul`.

Owns: the manifest (`soul.yaml`) and its profiles (the budgets and sampling a small model gets
instead of the full ones), the constitution pin, the shape of every SOUL file (required
`## ` sections, the temperament block, lorebook entries, examples, return greetings, the
bootstrap's cold open and journey) and `lore_hits`, the one rule for which lorebook entries a
message wakes.

Must not: write anything. The constitution is immutable to hearth: no code path here, or
anywhere, opens it (or any other SOUL file) for writing, and a test keeps it so; changing it is
a person's deliberate edit followed by a person's re-pin (NOTES.md says how). Must not read the
environment either: `HEARTH_SOUL_DIR` belongs to the settings, which pass the folder in.

Every failure is a `SoulError` whose message is one line naming the file and the problem. YAML
and pydantic errors are folded into that line and never surface as their own tracebacks.
"""

from __future__ import annotations

import hashlib
import math
import re
import string
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Final

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    ValidationError,
    field_validator,
    model_validator,
)

from memory import HearthError

MANIFEST: Final = "soul.yaml"

# The surfaces the assembler may leave out when the window is full, and the ones it never may.
# "honesty" is not a budget of its own: it names the constitution's honesty rule, which must
# survive even a prompt that trims everything else.
DROPPABLE: Final = frozenset({"examples", "memories", "lore"})
NEVER_DROPPED: Final = frozenset({"constitution", "persona", "partner", "honesty"})

_PIN_SHOWN = 12  # hex digits of a hash quoted in an error: enough to compare by eye

# "full" is the manifest's top level (budgets, window, reply_reserve, sampling); any other
# profile is declared under `profiles:` and says only what it changes.
FULL: Final = "full"
SMALL: Final = "small"
PROFILES: Final = (FULL, SMALL)


class SoulError(HearthError):
    """The SOUL folder is missing, malformed, or its constitution does not match the pin."""


# --- value checks ---------------------------------------------------------------------------
# Written as before-validators so that YAML's loose typing ("512" as a string, `yes` as a bool,
# 1.5 as a budget) is refused with our own wording instead of being coerced or described in
# pydantic's.


def _positive_int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError("must be a positive integer")
    return value


def _number(low: float, high: float, *, open_low: bool = False) -> Callable[[object], float]:
    bracket = "(" if open_low else "["
    wording = f"must be a number in {bracket}{low:g}, {high:g}]"

    def check(value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(wording)
        number = float(value)
        too_low = number <= low if open_low else number < low
        if not math.isfinite(number) or too_low or number > high:
            raise ValueError(wording)
        return number

    return check


def _positive_number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a positive number")
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise ValueError("must be a positive number")
    return number


def _text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be non-empty text")
    return value.strip()


def _file_name(value: object) -> str:
    # A bare name keeps every SOUL file inside its folder: no "../", no absolute paths.
    if not isinstance(value, str) or not value or Path(value).name != value:
        raise ValueError("must be a plain file name inside the SOUL folder")
    if value.startswith(".") or value == MANIFEST:
        raise ValueError(f"must be a plain file name other than {MANIFEST} or a hidden file")
    return value


def _headings(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple) or not all(
        isinstance(item, str) and item.strip() for item in value
    ):
        raise ValueError("must be a list of section titles")
    return tuple(item.strip() for item in value)


def _optional(check: Callable[[object], Any]) -> Callable[[object], Any]:
    def maybe(value: object) -> Any:
        return None if value is None else check(value)

    return maybe


def _allowance(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("must be a whole number, 0 or more (0 leaves the surface out)")
    return value


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _stops(value: object) -> tuple[str, ...]:
    # Kept exactly as written: a stop's leading newline is what makes it a new line.
    if not isinstance(value, list | tuple) or not all(
        isinstance(item, str) and item.strip() for item in value
    ):
        raise ValueError('must be a list of texts, like ["\\nUser:"]')
    return tuple(dict.fromkeys(value))


PositiveInt = Annotated[int, BeforeValidator(_positive_int)]
Allowance = Annotated[int, BeforeValidator(_allowance)]
PositiveFloat = Annotated[float, BeforeValidator(_positive_number)]
Fraction = Annotated[float, BeforeValidator(_number(0, 1))]
Text = Annotated[str, BeforeValidator(_text)]
FileName = Annotated[str, BeforeValidator(_file_name)]
Headings = Annotated[tuple[str, ...], BeforeValidator(_headings)]
Cap = Annotated[int | None, BeforeValidator(_optional(_positive_int))]
Penalty = Annotated[float | None, BeforeValidator(_optional(_number(-2, 2)))]
Multiplier = Annotated[float | None, BeforeValidator(_optional(_number(0, 2, open_low=True)))]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- the manifest ---------------------------------------------------------------------------


class Budgets(_Frozen):
    """Token ceilings per prompt surface (DESIGN §8); the assembler spends within them."""

    constitution: PositiveInt
    persona: PositiveInt
    scenario: PositiveInt
    examples: Allowance  # droppable surfaces may be left out of a profile altogether
    lore: Allowance
    situation: PositiveInt
    partner: PositiveInt
    memories: PositiveInt
    summary: PositiveInt
    affect: PositiveInt
    goals: PositiveInt
    recent_turns: Allowance  # 0: each reply sees the message, not the conversation before it


SURFACES: Final = tuple(Budgets.model_fields)


class Overflow(_Frozen):
    """Who loses when the window is full: a declared order, never an accident of assembly."""

    drop_order: tuple[str, ...]
    never_drop: tuple[str, ...]

    @field_validator("drop_order")
    @classmethod
    def _drops_only_what_may_go(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for surface in value:
            if surface not in DROPPABLE:
                allowed = ", ".join(sorted(DROPPABLE))
                raise ValueError(f"may name only {allowed}, not {surface!r}")
        if len(set(value)) != len(value):
            raise ValueError("names a surface twice")
        return value

    @field_validator("never_drop")
    @classmethod
    def _keeps_who_she_is(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        known = {*SURFACES, "honesty"}
        for surface in value:
            if surface not in known:
                raise ValueError(f"names {surface!r}, which is not a surface")
        missing = sorted(NEVER_DROPPED - set(value))
        if missing:
            raise ValueError(f"must include {', '.join(missing)}")
        return value

    @model_validator(mode="after")
    def _no_surface_is_both(self) -> Overflow:
        both = sorted(set(self.drop_order) & set(self.never_drop))
        if both:
            raise ValueError(f"names {both[0]!r} both to drop and never to drop")
        return self


class SoulFiles(_Frozen):
    """Which file in the folder plays which part."""

    constitution: FileName
    persona: FileName
    scenario: FileName
    examples: FileName
    world: FileName
    notes: FileName
    bootstrap: FileName

    def names(self) -> tuple[str, ...]:
        """The file names, in manifest order."""
        return tuple(str(getattr(self, part)) for part in type(self).model_fields)

    @model_validator(mode="after")
    def _one_part_per_file(self) -> SoulFiles:
        names = self.names()
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f"lists {name} for two parts")
        return self


class Sampling(_Frozen):
    """How a reply is sampled (the gateway's `reply`). The defaults are the full profile's,
    what a large model needs and nothing more; a small model's profile adds what keeps it from
    looping and rambling.

    `max_tokens` caps one reply; `frequency_penalty` and `presence_penalty` are OpenAI's;
    `repeat_penalty` is llama.cpp's own and is sent only when set; `stop` ends a reply at any of
    these texts; `stop_at_new_speaker` also ends it at a new line opening the way the prompt
    labels a turn (`\\nMaya:`, `\\nWren:`).
    """

    temperature: Annotated[float, BeforeValidator(_number(0, 2))] = 0.7
    max_tokens: Cap = None
    frequency_penalty: Penalty = None
    presence_penalty: Penalty = None
    repeat_penalty: Multiplier = None
    stop: Annotated[tuple[str, ...], BeforeValidator(_stops)] = ()
    stop_at_new_speaker: Annotated[bool, BeforeValidator(_flag)] = False


class Profile(_Frozen):
    """A profile under `profiles:`: the budgets it changes (the others are the top level's),
    its window and reply reserve when they differ, and its whole sampling."""

    window: Cap = None
    reply_reserve: Cap = None
    budgets: dict[str, Any] = {}  # validated as Budgets once merged (see Manifest.profiled)
    sampling: Sampling = Sampling()

    @field_validator("budgets", mode="before")
    @classmethod
    def _names_surfaces(cls, value: object) -> object:
        if not isinstance(value, dict):
            raise ValueError("must map surfaces to token budgets")
        for surface in value:
            if surface not in SURFACES:
                raise ValueError(f"names {surface!r}, which is not a surface")
        return value


class Manifest(_Frozen):
    """`soul.yaml`: the folder's table of contents, its constitution pin, its budgets and
    sampling (the full profile) and the profiles that differ from them."""

    name: Text
    version: PositiveInt
    files: SoulFiles
    constitution_sha256: str
    required_sections: dict[str, Headings]
    budgets: Budgets
    window: PositiveInt
    reply_reserve: PositiveInt
    overflow: Overflow
    sampling: Sampling = Sampling()
    profiles: dict[str, Profile] = {}

    @field_validator("profiles", mode="before")
    @classmethod
    def _known_profiles(cls, value: object) -> object:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError("must map profile names to profiles")
        for name in value:
            if name not in PROFILES or name == FULL:
                raise ValueError(
                    f"may declare only {SMALL!r} (the top level is {FULL!r}), not {name!r}"
                )
        return value

    def profiled(self, name: str) -> Manifest:
        """The manifest as the profile `name` composes: its budgets, window, reply reserve and
        sampling in place of the top level's. A profile that is not declared is the full one."""
        profile = self.profiles.get(name)
        if profile is None:
            return self
        try:
            budgets = Budgets.model_validate({**self.budgets.model_dump(), **profile.budgets})
        except ValidationError as error:
            raise ValueError(f"profiles.{name}.budgets.{_describe(error)}") from None
        return self.model_copy(update={
            "budgets": budgets,
            "window": profile.window or self.window,
            "reply_reserve": profile.reply_reserve or self.reply_reserve,
            "sampling": profile.sampling,
        })

    @field_validator("constitution_sha256", mode="before")
    @classmethod
    def _is_a_sha256(cls, value: object) -> str:
        if not isinstance(value, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", value.strip()):
            raise ValueError("must be 64 hex digits (the output of `sha256sum`)")
        return value.strip().lower()

    @model_validator(mode="after")
    def _fits_together(self) -> Manifest:
        listed = set(self.files.names())
        for name in self.required_sections:
            if name not in listed:
                raise ValueError(f"required_sections names {name}, which files does not list")
        self._fits_its_window("")
        for name in self.profiles:
            self.profiled(name)._fits_its_window(f"profiles.{name}: ")
        return self

    def _fits_its_window(self, where: str) -> None:
        kept = sum(
            getattr(self.budgets, surface)
            for surface in self.overflow.never_drop
            if surface in SURFACES
        )
        if self.window <= self.reply_reserve + kept:
            raise ValueError(
                f"{where}window ({self.window}) must exceed reply_reserve "
                f"({self.reply_reserve}) plus the never-dropped budgets ({kept})"
            )
        cap = self.sampling.max_tokens
        if cap is not None and cap > self.reply_reserve:
            raise ValueError(
                f"{where}sampling.max_tokens ({cap}) must fit in reply_reserve "
                f"({self.reply_reserve})"
            )


# --- what the files hold --------------------------------------------------------------------


class Baseline(_Frozen):
    valence: Annotated[float, BeforeValidator(_number(-1, 1))]
    arousal: Fraction


class Temperament(_Frozen):
    """Who she is at rest (PERSONA.md): mood decays toward `baseline` with `half_life_hours`,
    and no single event moves a value by more than `max_delta`."""

    baseline: Baseline
    half_life_hours: PositiveFloat
    max_delta: Annotated[float, BeforeValidator(_number(0, 1, open_low=True))]
    drives: dict[str, Fraction]

    @field_validator("drives", mode="before")
    @classmethod
    def _drives_are_named(cls, value: object) -> object:
        if not isinstance(value, dict) or not value:
            raise ValueError("must map at least one drive name to a number in [0, 1]")
        for name in value:
            # Drives are named in prompts and in affect state; plain words keep both readable.
            if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z_]*", name):
                raise ValueError(f"names must be lower-case words, not {name!r}")
        return value


class LoreEntry(_Frozen):
    """One lorebook entry (WORLD.md): it joins a turn when the turn mentions one of its keys."""

    title: Text
    keys: tuple[str, ...]
    text: Text

    @field_validator("keys", mode="before")
    @classmethod
    def _normalise_keys(cls, value: object) -> tuple[str, ...]:
        if not isinstance(value, list | tuple):
            raise ValueError("must be a list of words or phrases")
        keys: list[str] = []
        for key in value:
            if not isinstance(key, str):
                raise ValueError("must be a list of words or phrases")
            folded = " ".join(key.lower().split())
            if folded and folded not in keys:
                keys.append(folded)
        if not keys:
            raise ValueError("must hold at least one word or phrase")
        return tuple(keys)


class Example(_Frozen):
    """One demonstrated exchange (EXAMPLES.md): `{{user}}:` and `{{char}}:` lines."""

    title: Text
    text: Text


class Soul(_Frozen):
    """A loaded, validated SOUL folder. The texts are the files as read (line endings as `\\n`);
    `sha256` is the constitution's hash, which matched the pin."""

    root: Path
    manifest: Manifest
    constitution: str
    persona: str
    scenario: str
    examples: tuple[Example, ...]
    lore: tuple[LoreEntry, ...]
    notes: str
    bootstrap: str
    temperament: Temperament
    return_greetings: tuple[str, ...]
    cold_open: str
    journey: tuple[str, ...]
    sha256: str
    # The profile `manifest` was resolved for: its budgets, window, reply reserve and sampling
    # are that profile's (the top level's for "full").
    profile: str = FULL


# --- markdown ---------------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)[ \t]*([\w+-]*)")
_BULLET = re.compile(r"^[-*+][ \t]+(.*)$")
_NUMBERED = re.compile(r"^\d+[.)][ \t]+(.*)$")


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


def _fenced_blocks(markdown: str) -> list[tuple[str, str]]:
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


def _sections(markdown: str, level: int) -> list[tuple[str, str]]:
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


def _unwrap(text: str) -> str:
    """Hard-wrapped paragraphs as single lines. The files wrap at 99 columns for the people who
    edit them; a chat message or a prompt should not inherit those breaks. Blank lines still
    part paragraphs, and list items keep their own lines."""
    paragraphs: list[str] = []
    for paragraph in re.split(r"\n[ \t]*\n", text.strip()):
        lines: list[str] = []
        for raw in paragraph.splitlines():
            line = raw.strip()
            if lines and line and not (_BULLET.match(line) or _NUMBERED.match(line)):
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
    for found, body in _sections(markdown, 2):
        if found == wanted:
            return body
    return ""


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
    cold_open = _unwrap(_require_section(texts[files.bootstrap], files.bootstrap, "Cold open"))
    journey_body = _require_section(texts[files.bootstrap], files.bootstrap, "Journey")
    if not cold_open:
        raise SoulError(f"soul: {files.bootstrap}: the section 'Cold open' is empty")
    _check_placeholders(cold_open, files.bootstrap, "the cold open")
    greetings = _list_items(greetings_body, _BULLET, files.scenario, "Return greetings")
    for greeting in greetings:
        _check_placeholders(greeting, files.scenario, "a return greeting")
    journey = _list_items(journey_body, _NUMBERED, files.bootstrap, "Journey")

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
        raise SoulError(f"soul: {folder}: {_describe(error)}") from None


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
        raise SoulError(f"soul: {MANIFEST}: {_describe(error)}") from None


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
    bodies = [body for found, body in _sections(markdown, 2) if found == title]
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
    blocks = [text for language, text in _fenced_blocks(body) if language in {"yaml", "yml"}]
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
        raise SoulError(f"soul: {name}: Temperament: {_describe(error)}") from None


def _parse_lore(markdown: str, name: str) -> tuple[LoreEntry, ...]:
    entries: list[LoreEntry] = []
    titles: set[str] = set()
    for title, body in _sections(markdown, 2):
        if title in titles:
            raise SoulError(f"soul: {name} has two entries titled '{title}'")
        titles.add(title)
        first, _, rest = body.partition("\n")
        keys = re.fullmatch(r"keys[ \t]*:[ \t]*(.*)", first.strip(), re.IGNORECASE)
        if not keys:
            raise SoulError(f"soul: {name}: the entry '{title}' needs a 'keys:' line first")
        try:
            entries.append(
                LoreEntry(title=title, keys=tuple(keys.group(1).split(",")), text=_unwrap(rest))
            )
        except ValidationError as error:
            raise SoulError(f"soul: {name}: the entry '{title}': {_describe(error)}") from None
    return tuple(entries)


def _parse_examples(markdown: str, name: str) -> tuple[Example, ...]:
    examples: list[Example] = []
    for heading, body in _sections(markdown, 3):
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
            raise SoulError(f"soul: {name}: an example: {_describe(error)}") from None
    return tuple(examples)


def _describe(error: ValidationError) -> str:
    """One line for the first problem pydantic found, in our words where they are ours."""
    problems = error.errors(include_url=False)
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"])
    ctx: dict[str, Any] = dict(first.get("ctx") or {})
    if first["type"] == "value_error":
        # Our validators phrase their messages to follow the key: "budgets.memories must ...".
        message = str(ctx.get("error", first["msg"]))
        text = f"{where} {message}" if where else message
    elif first["type"] == "missing":
        text = f"{where} is missing"
    elif first["type"] == "extra_forbidden":
        text = f"{where} is not a known setting"
    else:
        message = first["msg"]
        text = f"{where}: {message[:1].lower()}{message[1:]}" if where else message
    if len(problems) > 1:
        more = len(problems) - 1
        text += f" (and {more} more problem{'s' if more > 1 else ''})"
    return " ".join(text.split())


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
