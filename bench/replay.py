"""A household's months replayed into a fresh memory, as the bot and its tick would store them.

Every line is stored in the transcript, in time order, in the scope it was said in (a DM line
in its speaker's private scope, a group line shared), with the memory's clock at the line's
time. A fact line is then consolidated as the tick would (but one in `LATE`, which the tick
has not reached yet): its belief (the data's third-person
`belief`, or the line itself) asserted as `extracted` evidence citing the line, about the member
the data names; what one member says about another is second-hand and waits in quarantine,
as consolidation would have it. Used by `bench.recall_quality` and `bench.fit_judge`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.household_memory import Clock, Household, Question, load_household, validate
from memory import (
    SHARED,
    AccessContext,
    Activity,
    Assertion,
    Embedder,
    Memory,
    Person,
    Provenance,
    Role,
    dm_chat,
    group_chat,
    normalize,
    private_scope,
)

HOUSEHOLDS = Path(__file__).resolve().with_name("households")
PURPOSE = "household recall benchmark"
SECOND_HAND = 0.8  # as consolidation weighs what one member says about another
# The tick consolidates a chat once it has been quiet for a while or a batch is full, so a
# recall often finds a member's words before any belief was drawn from them. One fact line in
# LATE is left as it was said, its belief not yet drawn (chosen by its key, the same each run).
LATE = 4


def discover(root: Path = HOUSEHOLDS) -> list[Household]:
    """Every well-formed household under `root`, by folder name."""
    found = []
    for folder in sorted(p for p in root.iterdir() if (p / "household.json").exists()):
        household = load_household(folder)
        problems = validate(household)
        if problems:
            raise SystemExit(f"{folder}: not well-formed:\n  " + "\n  ".join(problems[:10]))
        found.append(household)
    return found


@dataclass
class Replayed:
    """A household in memory, and how to tell which of its lines a recalled row is."""

    memory: Memory
    clock: Clock
    people: dict[str, Person]
    belief_lines: dict[int, list[str]] = field(default_factory=dict)
    turn_lines: dict[int, str] = field(default_factory=dict)
    by_text: dict[str, list[str]] = field(default_factory=dict)

    def keys_of(self, item: Any) -> list[str]:
        """The data's keys of the lines a recalled belief or line stands for."""
        belief = getattr(item, "belief", None)
        if belief is not None:
            return self.belief_lines.get(belief.belief_id) or self.by_text.get(
                normalize(belief.proposition), [])
        turn = getattr(item, "turn", None)
        if turn is not None:
            found = self.turn_lines.get(turn.turn_id)
            return [found] if found else self.by_text.get(normalize(turn.text), [])
        return []

    def context(self, q: Question) -> AccessContext:
        """The asker's view where they ask: their DM, or the group with them as its actor."""
        person = self.people[q.asker].person_id
        if q.chat == "group":
            return AccessContext.for_group(Activity.GROUP_CONVERSATION, PURPOSE, actor=person)
        return AccessContext.for_member(person, Activity.DM_CONVERSATION, PURPOSE)


async def replay(household: Household, embedder: Embedder | None, db: Path) -> Replayed:
    """Store the household's lines and beliefs in a new memory at `db`."""
    first = household.lines[0].at if household.lines else household.ask_at
    clock = Clock(first - timedelta(days=1))
    memory = await Memory.open(db, create=True, embedder=embedder, clock=clock)
    people = {}
    for m in household.members:
        people[m.key] = await memory.people.add(m.name, telegram_id=m.telegram_id,
                                                owner=m.owner)
    done = Replayed(memory, clock, people)
    group = group_chat(household.group_chat)
    for line in household.lines:
        clock.now = line.at
        person = people[line.speaker]
        scope = SHARED if line.group else private_scope(person.person_id)
        turn = await memory.transcript.append(
            chat_id=group if line.group else dm_chat(person), speaker_id=person.person_id,
            role=Role.USER, scope=scope, text=line.text)
        done.turn_lines[turn] = line.key
        if not line.fact or _late(line.key):
            continue
        about = people[line.about].person_id if line.about else None
        first_hand = about is None or about == person.person_id
        (outcome,) = await memory.beliefs.assert_all([Assertion(
            proposition=line.proposition, scope=scope, provenance=Provenance.EXTRACTED,
            source=f"consolidation:{scope}:{turn}-{turn}", subject_id=about,
            weight=1.0 if first_hand else SECOND_HAND, turn_ids=(turn,))])
        if outcome.belief_id is not None:
            done.belief_lines.setdefault(outcome.belief_id, []).append(line.key)
    for line in household.lines:
        done.by_text.setdefault(normalize(line.proposition if line.fact else line.text),
                                []).append(line.key)
    return done


def _late(key: str) -> bool:
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % LATE == 0


def asking(household: Household) -> Callable[[int], datetime]:
    """The clock for the i-th question: a minute apart, after the last line."""
    return lambda i: household.ask_at + timedelta(minutes=i)
