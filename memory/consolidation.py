"""Consolidation and compaction: what the tick asks the model, and how answers become memory.

Owns: the batch size and cadence, the extraction schema (a pydantic model sent as the
`response_format` json_schema), the extraction prompt with its worked examples and the summary
prompt, and turning an extraction into assertions of one scope with `extracted` provenance and
source line ids (what merely echoes the examples is dropped).
It also keeps the tick's bookkeeping (`ConsolidationBook`): which scopes and chats have lines
waiting (ids and counts only, through the census), the next batch of one scope (read through
the gate by that scope's own lane), the watermarks a stored batch moves, and the count of
unusable answers. Must not: call a model (the soul's gateway does, handed these messages). A
batch holds lines of exactly one scope; nothing here can combine two.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from memory.beliefs import MAX_PROPOSITION_CHARS, Assertion, BeliefBook, normalize
from memory.errors import InvalidRequest
from memory.gate import Census, Gate
from memory.models import (
    AccessContext,
    Kind,
    Provenance,
    Role,
    Sensitivity,
    Turn,
    WriteOutcome,
    check_scope,
    scope_owner,
)
from memory.store import Store
from memory.transcript import turn_from_row

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


# The schema is exact: every field required, no key beside them, no defaults but an item's
# `private`, which only raises a class (a docstring here would be sent to the model as the
# schema's description). An answer of `{}` or
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
    # Strict mode sends it as required (null allowed); a stand-in that leaves it out still
    # validates as "no class given".
    private: Literal["health", "finance", "credentials"] | None = Field(
        default=None,
        description="health (body, mind, illness, treatment), finance (money, debts, "
        "accounts, pay) or credentials (a way into an account, a door, an alarm or a device: "
        "codes, passwords, logins) when the item is about one of them; otherwise null.",
    )


class Extraction(BaseModel):
    """What the model returns for one batch."""

    model_config = ConfigDict(extra="forbid")

    items: list[ExtractedItem]


EXTRACTION_INSTRUCTIONS = """\
You read a short transcript between household members and their companion, {assistant}, and \
note what is worth remembering about the people in it: facts about their lives, preferences, \
plans and promises, goals, and the people they know.

Rules:
- Only what a member said. What {assistant} says is never evidence.
- Each item is one short sentence in the third person that names the person, never "I" or "you".
- Small talk gives no items. Never copy passwords, keys, codes, card or account numbers.
- "lines" are the numbers of the lines the item comes from.
- kind is one of: fact, preference, commitment, goal, person.
- private is health, finance or credentials when the item is about that, in any words or \
language; otherwise null.
Answer with JSON only, like the examples."""

# Worked examples, sent as earlier turns of the same chat: a small model copies the shape of an
# answer far better than it follows a rule. Invented people (no member is called Kofi or Ines):
# a first-person fact, a fact about someone else, her own line ignored, and small talk giving
# nothing. An item naming their people or places is the model echoing these, not the transcript.
_EXAMPLES: tuple[tuple[str, tuple[ExtractedItem, ...]], ...] = (
    (
        "1. Kofi: I'm allergic to shellfish, so no prawns for me\n"
        "2. {assistant}: Noted, no shellfish.\n"
        "3. Kofi: my brother Sam lives in Accra",
        (
            ExtractedItem(statement="Kofi is allergic to shellfish", kind="fact", about="Kofi",
                          lines=[1], private="health"),
            ExtractedItem(statement="Kofi's brother Sam lives in Accra", kind="person",
                          about="Kofi", lines=[3]),
        ),
    ),
    (
        "1. Ines: Kofi starts at the library on Monday\n"
        "2. {assistant}: Lovely! Do you still play the cello, Ines?\n"
        "3. Ines: ha",
        (
            ExtractedItem(statement="Kofi starts a job at the library on Monday", kind="fact",
                          about="Kofi", lines=[1]),
        ),
    ),
    (
        "1. Ines: morning! grey again out there\n"
        "2. {assistant}: Morning, Ines. Tea weather.\n"
        "3. Ines: lol yes",
        (),
    ),
)
_EXAMPLE_NAMES = frozenset({"Kofi", "Ines", "Sam", "Accra"})
_NAME_WORD = re.compile(r"[A-Z][a-z]+")

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
    """The prompt for one batch: the instructions, the worked examples, and that batch's lines
    (the last message), nothing else."""
    messages = [
        {"role": "system", "content": EXTRACTION_INSTRUCTIONS.format(assistant=assistant)}
    ]
    for transcript, answer in _EXAMPLES:
        messages.append(
            {"role": "user", "content": "Transcript:\n" + transcript.format(assistant=assistant)}
        )
        messages.append(
            {"role": "assistant", "content": Extraction(items=list(answer)).model_dump_json()}
        )
    messages.append(
        {"role": "user", "content": "Transcript:\n" + _numbered(batch.turns, names, assistant)}
    )
    return messages


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


def _echoes_an_example(statement: str, batch: Batch) -> bool:
    """An item naming someone only the worked examples name: a small model copying the
    prompt's examples, not reading the transcript."""
    named = _EXAMPLE_NAMES.intersection(_NAME_WORD.findall(statement))
    return any(
        not any(re.search(rf"\b{name}\b", turn.text) for turn in batch.turns) for name in named
    )


def assertions_from(
    batch: Batch, extraction: Extraction, people_by_name: Mapping[str, str], *,
    model_classes: bool = False,
) -> list[Assertion]:
    """The extraction as evidence in the batch's own scope, with `extracted` provenance.

    `people_by_name` maps a lower-cased member name to their person id. Lines are the batch's
    own (numbers outside it are dropped). An item resting only on her own lines is dropped: what
    she said is not evidence of what is true. So is an item echoing the prompt's worked
    examples. An item about a member who is not among the speakers of its lines, or citing no
    line at all, is second-hand and weighs less (it waits in quarantine until corroborated).
    With `model_classes` (a capable model, never the embedded one), the class the model gave
    an item raises its belief's (`Assertion.model_class`).
    """
    owner = scope_owner(batch.scope)
    if not batch.turns:
        return []
    source = f"consolidation:{batch.scope}:{batch.after_turn_id + 1}-{batch.read_through}"
    out: list[Assertion] = []
    for item in extraction.items[:MAX_ITEMS_PER_BATCH]:
        statement = " ".join(item.statement.replace("\x00", "").split())
        if not _says_something(statement) or _echoes_an_example(statement, batch):
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
                model_class=(Sensitivity(item.private)
                             if model_classes and item.private is not None else None),
            )
        )
    return out


async def _watermark(census: Census, scope: str) -> int:
    through = await census.value("consolidation_marks", "through_turn_id", "scope = ?", (scope,))
    return 0 if through is None else int(str(through))


class ConsolidationBook:
    """`memory.consolidation`: the tick's view of what waits, and its watermarks."""

    def __init__(self, store: Store, gate: Gate, beliefs: BeliefBook,
                 now: Callable[[], datetime]) -> None:
        self._store = store
        self._gate = gate
        self._beliefs = beliefs
        self._now = now

    async def pending_scopes(self) -> list[tuple[str, int, str]]:
        """Scopes with lines past their consolidation watermark: (scope, how many, the newest
        line's time). Counts and times only; no line is read here."""
        async with self._store.transaction() as tx:
            rows = await Census(tx).select(
                "turns t LEFT JOIN consolidation_marks m ON m.scope = t.scope",
                "t.scope AS scope, count(*) AS n, max(t.at) AS newest",
                "t.turn_id > coalesce(m.through_turn_id, 0)",
                group="t.scope", order="min(t.turn_id)",
            )
        return [(str(r["scope"]), int(r["n"]), str(r["newest"])) for r in rows]

    async def next_batch(self, scope: str, *, limit: int = BATCH_LINES) -> Batch | None:
        """The next pending lines of one scope, oldest first, read by that scope's own
        consolidation lane (receipted). None when nothing waits."""
        check_scope(scope)
        ctx = AccessContext.for_batch(scope, "consolidate the next pending batch of one scope")
        async with self._gate.read(ctx, "consolidation_batch", scope) as read:
            after = await _watermark(read.census(), scope)
            rows = await read.select("turns", "scope = ? AND turn_id > ?", (scope, after),
                                     order="turn_id", limit=max(1, limit))
            allowed = await read.usable(rows)
            if not rows:
                return None
            turns = tuple(turn_from_row(r) for r in allowed)
            read.returned([t.turn_id for t in turns], [scope] * len(turns))
        # The watermark moves past every line read, even one the lens held back, so a
        # held-back line never blocks its scope; `through` is the last line read.
        return Batch(scope=scope, turns=turns, after_turn_id=after,
                     read_through=int(rows[-1]["turn_id"]), read_count=len(rows))

    async def commit(
        self, batch: Batch, items: Sequence[Assertion]
    ) -> list[WriteOutcome] | None:
        """Store a batch's extractions and advance its scope's watermark in one transaction.

        None, with nothing stored, when the watermark has moved since the batch was read (the
        batch was already consolidated): a re-run stores nothing twice.
        """
        if any(item.scope != batch.scope for item in items):
            raise InvalidRequest("a batch's extractions belong to the batch's own scope")
        async with self._gate.writing() as tx:
            if await _watermark(Census(tx), batch.scope) != batch.after_turn_id:
                return None
            outcomes = await self._beliefs.assert_in(tx, items)
            await tx.execute(
                "INSERT INTO consolidation_marks(scope, through_turn_id, updated_at)"
                " VALUES (?, ?, ?) ON CONFLICT(scope) DO UPDATE SET"
                " through_turn_id = excluded.through_turn_id, updated_at = excluded.updated_at",
                (batch.scope, batch.read_through, self._now().isoformat()),
            )
        await self._beliefs.embed_created(items, outcomes)
        return outcomes

    async def note_unusable(self, batch: Batch) -> int:
        """Count one unusable model answer for this batch; returns how many it has had."""
        async with self._store.transaction() as tx:
            row = await tx.fetchone(
                "SELECT after_turn_id, attempts FROM consolidation_failures WHERE scope = ?",
                (batch.scope,),
            )
            attempts = 1
            if row is not None and int(row["after_turn_id"]) == batch.after_turn_id:
                attempts = int(row["attempts"]) + 1
            await tx.execute(
                "INSERT INTO consolidation_failures(scope, after_turn_id, attempts, at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT(scope) DO UPDATE SET"
                " after_turn_id = excluded.after_turn_id, attempts = excluded.attempts,"
                " at = excluded.at",
                (batch.scope, batch.after_turn_id, attempts, self._now().isoformat()),
            )
        return attempts

    async def chats_to_compact(self) -> list[tuple[str, str, int, int]]:
        """Chats with lines newer than their summary: (chat id, scope, new lines, the summary's
        last line id). Ids and counts only. A chat whose lines span scopes is listed once per
        scope, and each scope is summarised on its own."""
        async with self._store.transaction() as tx:
            rows = await Census(tx).select(
                "turns t LEFT JOIN summaries s ON s.chat_id = t.chat_id AND s.scope = t.scope",
                "t.chat_id AS chat_id, t.scope AS scope, count(*) AS n,"
                " coalesce(s.through_turn_id, 0) AS through",
                "t.turn_id > coalesce(s.through_turn_id, 0)",
                group="t.chat_id, t.scope", order="min(t.turn_id)",
            )
        return [
            (str(r["chat_id"]), str(r["scope"]), int(r["n"]), int(r["through"])) for r in rows
        ]
