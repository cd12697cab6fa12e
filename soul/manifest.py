"""What a SOUL folder must hold: the manifest (`soul.yaml`) with its budgets, sampling and
profiles, and the frozen `Soul` the loader hands back, each field checked as it is read.

Owns: the schema and its value checks, and `SoulError`. Must not: read a file (the loader,
`soul.files`, does) or parse Markdown (`soul.markdown`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Final

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
DROPPABLE: Final = frozenset({"examples", "memories", "lore", "shelf", "snapshot"})
NEVER_DROPPED: Final = frozenset({"constitution", "persona", "partner", "honesty"})

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
    # Passages of the documents on the shelf that answer the message. A soul written before the
    # shelf existed gets this much, and its overflow drops them after what it declares.
    shelf: Allowance = 300
    # The chat's snapshot from the last tick: who has been around, what is open, what is due
    # soon. A soul written before it gets this much, and its overflow drops it first.
    snapshot: Allowance = 120


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
            raise ValueError(f"profiles.{name}.budgets.{describe(error)}") from None
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


def describe(error: ValidationError) -> str:
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
