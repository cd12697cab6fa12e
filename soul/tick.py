"""The tick and the dream: the scheduled work that turns what she heard into memory.

Owns: the order of a tick (consolidation, compaction, then each active chat's snapshot) and of
a dream (her moods re-centred, persona proposals, then memory's own dream pass), and what a model
failure does (the batch or summary stays pending for the next tick; nothing is lost, nothing is
stored twice; a batch the model reads nothing usable in is still learnt from its plain
first-person statements).
Must not: read memory except through the facade, or put lines of two scopes in one prompt: every
batch and every summary is read by one scope's own lane, and each model call carries only that.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol, TypeVar

from pydantic import BaseModel

from memory import SHARED, AccessContext, Activity, HearthError, Kind, Memory
from memory.consolidation import (
    BATCH_LINES,
    COMPACT_AFTER_LINES,
    COMPACT_WINDOW,
    Extraction,
    assertions_from,
    extraction_messages,
    summary_messages,
)
from memory.statements import statements_in
from soul.affect import Affect
from soul.assembler import current_affect
from soul.files import Soul
from soul.judge import wanted
from soul.model import UnusableAnswer

log = logging.getLogger("hearth.tick")

T = TypeVar("T", bound=BaseModel)

# A scheduled tick takes at most this many batches of one scope, so a backlog (after the model
# was down for a day) drains over a few ticks instead of holding one tick for minutes.
MAX_BATCHES_PER_SCOPE = 4
DRAIN_LIMIT = 1000
# A batch the model answered unusably this many times (not a connection failure: it answered)
# is passed over, so one unreadable batch cannot stop a scope's consolidation for good.
MAX_UNUSABLE_ANSWERS = 3  # `hearth tick` drains everything, up to this many batches per scope
SUMMARY_TOKENS = 300
PERSONA_CONFIDENCE = 0.7
_ABOUT_HER = ("you ", "your ", "reply", "replies", "answer", "talk", "message", "call ")


class TickModel(Protocol):
    """What the tick needs of a model: `soul.model.Gateway` is one."""

    async def reply(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int = ...,
        temperature: float = ...,
        patient: bool = ...,
        stop: Sequence[str] = ...,
    ) -> str: ...

    async def extract(self, messages: list[dict[str, str]], schema: type[T]) -> T: ...


@dataclass
class TickReport:
    batches: int = 0
    beliefs: int = 0
    failed: int = 0
    skipped: int = 0
    summaries: int = 0
    pending_lines: int = 0
    plain: int = 0  # batches learnt from their plain statements alone
    snapshots: int = 0  # chats whose snapshot was made again

    def lines(self) -> list[str]:
        return [
            f"consolidated {self.batches} batch(es) into {self.beliefs} belief(s)",
            f"{self.failed} model call(s) failed; their lines stay pending for the next tick",
            f"{self.skipped} batch(es) passed over after {MAX_UNUSABLE_ANSWERS} unusable answers",
            f"{self.plain} batch(es) the model read nothing usable in, learnt from their plain"
            " statements",
            f"wrote {self.summaries} rolling summary(ies)",
            f"made {self.snapshots} chat snapshot(s)",
            f"{self.pending_lines} line(s) wait for a fuller batch or a quiet chat",
        ]


@dataclass
class DreamReport:
    report_id: int
    counts: dict[str, int] = field(default_factory=dict)

    def lines(self) -> list[str]:
        return [f"dream report #{self.report_id}"] + [
            f"{name.replace('_', ' ')}: {value}" for name, value in sorted(self.counts.items())
        ]


async def run_tick(
    memory: Memory,
    model: TickModel,
    *,
    now: datetime,
    assistant: str = "hearth",
    quiet_after: timedelta = timedelta(minutes=5),
    drain: bool = False,
    model_classes: bool = False,
) -> TickReport:
    """One tick: consolidate each scope's pending batch, refresh due summaries, then make
    the snapshot of each chat with news (`memory.snapshots`).

    A scope is consolidated when a full batch waits or its newest line is older than
    `quiet_after`; `drain` (the `hearth tick` command) takes everything pending now.
    `model_classes`: the model is a capable one (`soul.judge.wanted`), and the class it gives
    each item (health, finance, credentials) raises its belief's.
    """
    report = TickReport()
    people = await memory.people.list()
    names = {p.person_id: p.name for p in people}
    by_name = {p.name.lower(): p.person_id for p in people}
    quiet_before = (now - quiet_after).isoformat()
    limit = DRAIN_LIMIT if drain else MAX_BATCHES_PER_SCOPE
    for scope, pending, newest in await memory.consolidation.pending_scopes():
        quiet = drain or newest <= quiet_before
        waiting = pending
        for _ in range(limit):
            if waiting <= 0 or not (quiet or waiting >= BATCH_LINES):
                break
            batch = await memory.consolidation.next_batch(scope)
            if batch is None:
                break
            items = []
            if batch.turns:
                try:
                    extraction = await model.extract(
                        extraction_messages(batch, names, assistant), Extraction
                    )
                except UnusableAnswer as exc:
                    kind = "shared" if scope == SHARED else "private"
                    if await memory.consolidation.note_unusable(batch) < MAX_UNUSABLE_ANSWERS:
                        log.warning("consolidation of a %s batch failed: %s", kind, exc)
                        report.failed += 1
                        break
                    # The model reads this batch wrong every time: pass over it (its lines stay
                    # in the transcript) rather than block every later line of the scope.
                    log.warning("passed over a %s batch the model could not read %d times",
                                kind, MAX_UNUSABLE_ANSWERS)
                    report.skipped += 1
                    extraction = Extraction(items=[])
                except HearthError as exc:
                    log.warning("consolidation of a %s batch failed: %s",
                                "shared" if scope == SHARED else "private", exc)
                    report.failed += 1
                    break
                items = assertions_from(batch, extraction, by_name,
                                        model_classes=model_classes)
                if not items:
                    # Nothing usable (a small model often answers nothing, or only echoes):
                    # the plain first-person statements members made are still learnt, by
                    # the same path, so scope, weight and evidence lines are the model's.
                    items = assertions_from(batch, statements_in(batch, names), by_name)
                    report.plain += bool(items)
            outcomes = await memory.consolidation.commit(batch, items)
            if outcomes is None:  # another tick stored this batch first
                break
            report.batches += 1
            report.beliefs += sum(o.status in ("created", "reinforced") for o in outcomes)
            waiting -= batch.read_count
        report.pending_lines += max(0, waiting)
    report.summaries = await _compact(memory, model, names, assistant, drain=drain)
    # Last, so a snapshot sees what this tick stored; no model call, so it costs a few reads.
    report.snapshots = await memory.snapshots.refresh(now, every=drain)
    return report


async def _compact(
    memory: Memory, model: TickModel, names: dict[str, str], assistant: str, *, drain: bool
) -> int:
    """Refresh each due chat's rolling summary from that chat's lines of one scope."""
    written = 0
    for chat_id, scope, new_lines, through in await memory.consolidation.chats_to_compact():
        if new_lines < (1 if drain else COMPACT_AFTER_LINES):
            continue
        ctx = AccessContext.for_scope(
            scope, Activity.COMPACTION, "refresh one chat's rolling summary"
        )
        turns = await memory.transcript.lines(
            ctx, chat_id=chat_id, scope=scope, after_turn_id=through, limit=COMPACT_WINDOW
        )
        if not turns:  # everything new is held back by the lens (no compaction grant)
            continue
        previous = await memory.summaries.get(ctx, chat_id)
        earlier = previous.text if previous is not None and previous.scope == scope else None
        try:
            text = await model.reply(
                summary_messages(earlier, turns, names, assistant),
                max_tokens=SUMMARY_TOKENS,
                temperature=0.2,
                patient=True,
            )
        except HearthError as exc:
            log.warning("compaction failed: %s", exc)
            continue
        if text.strip():
            made_from = [t.sensitivity for t in turns]
            if earlier is not None and previous is not None:
                made_from.append(previous.sensitivity)
            await memory.summaries.write(scope, chat_id, text, turns[-1].turn_id, made_from)
            written += 1
    return written


async def tick(memory: Memory, soul: Soul, model: TickModel, *, now: datetime,
               quiet_after: timedelta = timedelta(minutes=5),
               drain: bool = False) -> TickReport:
    """The tick as every face runs it (the bot's job, the terminal's chat, `hearth tick`): what
    other processes wrote joins this one's vectors first, so consolidation reads their meaning
    too; then `run_tick` under this soul's name, the model classing items when it is able."""
    await memory.vectors.sync()
    return await run_tick(memory, model, now=now, assistant=soul.manifest.name,
                          quiet_after=quiet_after, drain=drain,
                          model_classes=wanted(soul, model))


async def run_dream(memory: Memory, soul: Soul, *, now: datetime) -> DreamReport:
    """The nightly dream: moods re-centred, persona proposals from shared preferences about
    how she talks (for the owner to approve), then memory's dream pass over every scope."""
    recentred = 0
    for key in await memory.state.affect_keys():
        mood: Affect = await current_affect(memory, soul, key, now)
        await memory.state.save_affect(key, mood.valence, mood.arousal, mood.drives,
                                       now.isoformat())
        recentred += 1
    proposed = await _propose_persona_edits(memory, soul)
    report_id, counts = await memory.dream.run(
        {"affect_recentred": recentred, "persona_proposed": proposed}, now=now
    )
    return DreamReport(report_id, counts)


async def _propose_persona_edits(memory: Memory, soul: Soul) -> int:
    """Shared, confident preferences about how she should talk become proposals; nothing
    changes until the owner approves one. Only shared beliefs: a persona is heard by all."""
    ctx = AccessContext.for_group(Activity.DREAM, "notice how the household wants her to talk")
    preferences = await memory.beliefs.in_scope(ctx, SHARED, kind=Kind.PREFERENCE)
    known = {p.text for p in await memory.state.persona_proposals()}
    her = soul.manifest.name.lower()
    made = 0
    for belief in preferences:
        text = belief.proposition.lower() + " "
        if belief.confidence < PERSONA_CONFIDENCE or belief.status != "active":
            continue
        if her not in text and not any(word in text for word in _ABOUT_HER):
            continue
        proposal = f"The household has said: {belief.proposition}"
        if proposal in known:
            continue
        await memory.state.propose_persona(
            proposal,
            f"a shared preference (belief {belief.ref}, confidence"
            f" {belief.confidence:.2f}) noticed in the dream",
            "hearth:dream",
        )
        made += 1
    return made
