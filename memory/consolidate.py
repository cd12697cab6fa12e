"""Consolidation and compaction: what the tick asks the model, and how answers become memory.

Owns: the batch size and cadence, the extraction schema (a pydantic model sent as the
`response_format` json_schema), the extraction and summary prompts, and turning an extraction
into assertions of one scope with `extracted` provenance and source line ids.
Must not: call a model (the soul's gateway does, handed these messages) or read the database
(the facade hands over a `Batch` it read through the gate). A batch holds lines of exactly one
scope; nothing here can combine two.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from memory.beliefs import MAX_PROPOSITION_CHARS, Assertion, normalize
from memory.models import Kind, Provenance, Role, Turn, scope_owner

# A scheduled tick consolidates a scope when this many lines wait, or when its chat has been
# quiet for a tick; one model call per batch, so a busy chat costs one call per BATCH_LINES.
BATCH_LINES = 32
# Compaction refreshes a chat's rolling summary once this many lines are new since the last one.
COMPACT_AFTER_LINES = 16
# Lines a summary is rewritten from (the newest ones; the previous summary carries the rest).
COMPACT_WINDOW = 60
# Evidence weight for an extraction about someone other than the people who said it: second-hand,
# so reliability x weight (0.75 x 0.8) stays under the quarantine floor until corroborated.
SECOND_HAND_WEIGHT = 0.8
MAX_ITEMS_PER_BATCH = 24
_LINE_CHARS = 600  # a batch line is clipped to this in the prompt; the transcript keeps it whole


# The schema is exact: every field required, no key beside them, no defaults (a docstring here
# would be sent to the model as the schema's description). An answer of `{}` or
# `{"facts": [...]}` would otherwise validate as "nothing to remember" and the batch's lines
# would be passed over for good; failing validation makes it an unusable answer, retried at
# the next tick like any other (soul.tick). Only `{"items": []}` says nothing is worth keeping.


class ExtractedItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    statement: str = Field(
        description="One short standalone sentence in the third person, naming who it is about."
    )
    kind: Literal["fact", "preference", "commitment", "goal", "person"] = Field(
        description="fact, preference (likes/dislikes), commitment (a promise or plan), "
        "goal (something someone wants to achieve), or person (a relationship or who someone is)"
    )
    about: str | None = Field(description="The first name of the person it is about, or null.")
    lines: list[int] = Field(description="The numbers of the lines it comes from.")


class Extraction(BaseModel):
    """What the model returns for one batch."""

    model_config = ConfigDict(extra="forbid")

    items: list[ExtractedItem]


EXTRACTION_INSTRUCTIONS = """\
You read a short transcript between household members and their companion, {assistant}, and \
note what is worth remembering about the people in it: facts about their lives, preferences, \
commitments and plans, goals, and the people they are related to.

Rules:
- Only what a speaker actually said. Do not guess, and do not record small talk.
- Each item is one short standalone sentence in the third person that names the person \
(for example "Ana is allergic to peanuts"), never "I" or "you".
- Never copy passwords, keys, codes, card or account numbers.
- Give the numbers of the lines each item comes from.
- If nothing is worth remembering, answer {{"items": []}}.

Answer with JSON only, in this shape:
{{"items": [{{"statement": "...", "kind": "fact", "about": "Ana", "lines": [1]}}]}}
kind is one of: fact, preference, commitment, goal, person."""

SUMMARY_INSTRUCTIONS = """\
You keep a short running summary of one conversation for {assistant}, a household companion. \
Rewrite the summary so it covers the earlier summary and the new lines: who said what that \
matters, open questions, plans and promises. At most 120 words, plain prose, third person, no \
preamble. Never copy passwords, keys, codes, card or account numbers."""


@dataclass(frozen=True)
class Batch:
    """The next lines of one scope, in order, after that scope's watermark."""

    scope: str
    turns: tuple[Turn, ...]  # the lines the lens lets consolidation use (all, in practice)
    after_turn_id: int  # the watermark this batch was read against
    read_through: int  # the last line read; the watermark moves here when the batch is stored
    read_count: int  # how many lines were read (the lens may have held some back)


def speaker_label(turn: Turn, names: Mapping[str, str], assistant: str) -> str:
    if turn.role == Role.ASSISTANT:
        return assistant
    if turn.speaker_id is None:
        return "Someone"
    return names.get(turn.speaker_id, "Someone")


def _numbered(turns: Sequence[Turn], names: Mapping[str, str], assistant: str) -> str:
    lines = []
    for n, turn in enumerate(turns, start=1):
        text = " ".join(turn.text.split())
        if len(text) > _LINE_CHARS:
            text = text[: _LINE_CHARS - 1] + "…"
        lines.append(f"{n}. {speaker_label(turn, names, assistant)}: {text}")
    return "\n".join(lines)


def extraction_messages(
    batch: Batch, names: Mapping[str, str], assistant: str
) -> list[dict[str, str]]:
    """The prompt for one batch: the instructions and that batch's lines, nothing else."""
    return [
        {"role": "system", "content": EXTRACTION_INSTRUCTIONS.format(assistant=assistant)},
        {"role": "user", "content": "Transcript:\n" + _numbered(batch.turns, names, assistant)},
    ]


def summary_messages(
    previous: str | None, turns: Sequence[Turn], names: Mapping[str, str], assistant: str
) -> list[dict[str, str]]:
    """The prompt for a rolling summary: the chat's previous summary and its new lines."""
    earlier = previous.strip() if previous else "(none yet)"
    return [
        {"role": "system", "content": SUMMARY_INSTRUCTIONS.format(assistant=assistant)},
        {
            "role": "user",
            "content": f"Earlier summary:\n{earlier}\n\nNew lines:\n"
            + _numbered(turns, names, assistant)
            + "\n\nThe updated summary:",
        },
    ]


def _says_something(statement: str) -> bool:
    """A statement worth a belief: two or more words, within the size a belief may have (a
    small model sometimes answers "..." or a lone name)."""
    words = [w for w in normalize(statement).split() if any(c.isalnum() for c in w)]
    return len(words) >= 2 and len(statement) <= MAX_PROPOSITION_CHARS


def assertions_from(
    batch: Batch, extraction: Extraction, people_by_name: Mapping[str, str]
) -> list[Assertion]:
    """The extraction as evidence in the batch's own scope, with `extracted` provenance.

    `people_by_name` maps a lower-cased member name to their person id. Lines are the batch's
    own (numbers outside it are dropped). An item resting only on her own lines is dropped: what
    she said is not evidence of what is true. An item about a member who is not among the
    speakers of its lines, or citing no line at all, is second-hand and weighs less (it waits
    in quarantine until corroborated).
    """
    owner = scope_owner(batch.scope)
    if not batch.turns:
        return []
    source = f"consolidation:{batch.scope}:{batch.after_turn_id + 1}-{batch.read_through}"
    out: list[Assertion] = []
    for item in extraction.items[:MAX_ITEMS_PER_BATCH]:
        statement = " ".join(item.statement.replace("\x00", "").split())
        if not _says_something(statement):
            continue
        picked = sorted({n for n in item.lines if 1 <= n <= len(batch.turns)})
        turns = [batch.turns[n - 1] for n in picked]
        said = [t for t in turns if t.role == Role.USER]
        if turns and not said:
            continue  # only her own lines: a member never said it, so it is not evidence
        speakers = {t.speaker_id for t in said if t.speaker_id}
        if owner is not None and said:
            speakers.add(owner)  # in a DM, every member line is the owner's own word
        subject = people_by_name.get((item.about or "").strip().lower())
        # Uncited items cannot be checked against what anyone said: they wait, like hearsay.
        first_hand = bool(said) and (subject is None or subject in speakers)
        out.append(
            Assertion(
                proposition=statement,
                scope=batch.scope,
                provenance=Provenance.EXTRACTED,
                source=source,
                kind=Kind(item.kind),
                subject_id=subject,
                weight=1.0 if first_hand else SECOND_HAND_WEIGHT,
                turn_ids=tuple(t.turn_id for t in turns),
            )
        )
    return out
