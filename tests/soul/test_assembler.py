"""The context assembler: deterministic, within budget, private at the last step, honest."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory import (
    SHARED,
    AccessContext,
    Activity,
    Assertion,
    Memory,
    Person,
    Provenance,
    Role,
    private_scope,
)
from soul import assembler
from soul.assembler import Intent, assemble, compose, gather, template_version
from soul.files import Soul, load_soul
from soul.tokens import count_tokens
from soul.turn import chat_id_for, respond
from tests.helpers import HashEmbedder

NOW = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class EchoModel:
    """Replies with its whole prompt, so a test can see everything the model was shown."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def reply(
        self, messages: list[dict[str, str]], *, max_tokens: int = 400, temperature: float = 0.7
    ) -> str:
        text = "\n".join(m["content"] for m in messages)
        self.prompts.append(text)
        return text


@pytest.fixture(scope="module")
def soul() -> Soul:
    return load_soul()


async def _household(path: Path, clock: Clock) -> tuple[Memory, Person, Person, Person]:
    memory = await Memory.open(path, embedder=HashEmbedder(), create=True, clock=clock)
    owner = await memory.people.add("Olivia", telegram_id=1, owner=True)
    bob = await memory.people.add("Bob", telegram_id=2)
    alice = await memory.people.add("Alice", telegram_id=3)
    return memory, owner, bob, alice


@pytest.fixture
async def house(tmp_path: Path) -> AsyncIterator[tuple[Memory, Person, Person, Person]]:
    memory, owner, bob, alice = await _household(tmp_path / "h.db", Clock())
    try:
        yield memory, owner, bob, alice
    finally:
        await memory.close()


def _intent(person: Person, text: str, *, group: bool = False) -> Intent:
    return Intent(
        speaker=person, chat_id=chat_id_for(person, group=group), group=group, text=text, now=NOW
    )


async def _seed_same_state(path: Path) -> Memory:
    memory, _, bob, _ = await _household(path, Clock())
    await memory.beliefs.remember(bob.person_id, "Bob likes jazz records")
    await memory.beliefs.remember(bob.person_id, "Bob's sister lives in Leeds")
    await memory.transcript.append(
        chat_id="dm:2",
        speaker_id=bob.person_id,
        role=Role.USER,
        scope=private_scope(bob.person_id),
        text="I had a long day",
    )
    return memory


async def test_the_same_state_assembles_to_the_same_bytes(tmp_path: Path, soul: Soul) -> None:
    first = await _seed_same_state(tmp_path / "a.db")
    second = await _seed_same_state(tmp_path / "b.db")
    try:
        bob_a = await first.people.by_name("Bob")
        bob_b = await second.people.by_name("Bob")
        a = await assemble(first, soul, _intent(bob_a, "what music do I like?"))
        b = await assemble(second, soul, _intent(bob_b, "what music do I like?"))
        assert a.messages == b.messages
        assert a.template_version == b.template_version
        gathered = await gather(first, soul, _intent(bob_a, "what music do I like?"))
        assert compose(soul, gathered) == compose(soul, gathered)
    finally:
        await first.close()
        await second.close()


def test_a_changed_budget_or_template_changes_the_template_version(
    soul: Soul, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = template_version(soul)
    budgets = soul.manifest.budgets.model_copy(update={"memories": 401})
    changed = soul.model_copy(
        update={"manifest": soul.manifest.model_copy(update={"budgets": budgets})}
    )
    assert template_version(changed) != before
    monkeypatch.setitem(assembler.TEMPLATES, "memories", "# Things you recall\n{items}")
    assert template_version(soul) != before


@pytest.fixture(scope="module")
def crowded_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with 10k beliefs and a long history for one member, built once."""
    path = tmp_path_factory.mktemp("crowded") / "h.db"
    asyncio.run(_build_crowded(path))
    return path


@pytest.fixture
async def crowded(crowded_db: Path) -> AsyncIterator[Memory]:
    memory = await Memory.open(crowded_db, embedder=HashEmbedder(), clock=Clock())
    try:
        yield memory
    finally:
        await memory.close()


async def _build_crowded(path: Path) -> None:
    memory, _, bob, _ = await _household(path, Clock())
    scope = private_scope(bob.person_id)
    topics = ["garden", "music", "work", "family", "food", "travel", "books", "health"]
    for start in range(0, 10_000, 1000):
        await memory.beliefs.assert_all(
            [
                Assertion(
                    proposition=f"Bob mentioned the {topics[i % 8]} plan number {start + i}"
                    f" while talking about the {topics[(i // 8) % 8]}",
                    scope=scope if i % 3 else SHARED,
                    provenance=Provenance.TOLD,
                    source=f"seed:{start + i}",
                )
                for i in range(1000)
            ]
        )
    for i in range(40):
        await memory.transcript.append(
            chat_id="dm:2",
            speaker_id=bob.person_id if i % 2 else None,
            role=Role.USER if i % 2 else Role.ASSISTANT,
            scope=scope,
            text=f"line {i}: " + "we talked about the garden and music " * 20,
        )
    await memory.summaries.write(scope, "dm:2", "A long summary of Bob's week. " * 80, 40)
    for i in range(30):
        await memory.goals.add(
            bob.person_id, f"Remember the garden plan {i}", scope=scope, provenance="told"
        )
    await memory.close()


async def test_with_10k_beliefs_every_surface_stays_within_its_budget(
    crowded: Memory, soul: Soul
) -> None:
    bob = await crowded.people.by_name("Bob")
    prompt = await assemble(crowded, soul, _intent(bob, "tell me about the garden and music plan"))
    budgets = soul.manifest.budgets.model_dump()
    for surface, used in prompt.tokens.items():
        if surface in budgets:
            assert used <= budgets[surface], surface
    total = sum(count_tokens(m["content"]) for m in prompt.messages)
    assert total <= soul.manifest.window - soul.manifest.reply_reserve


async def test_overflow_drops_in_the_declared_order_and_keeps_what_must_stay(
    crowded: Memory, soul: Soul
) -> None:
    bob = await crowded.people.by_name("Bob")
    tight = soul.model_copy(update={"manifest": soul.manifest.model_copy(update={"window": 3300})})
    prompt = await assemble(crowded, tight, _intent(bob, "tell me about the garden plan"))
    drops = [d for d in prompt.dropped if d in ("examples", "memories", "lore")]
    # Memories beyond their own budget go first, then the window's declared order: every
    # example before any memory it drops.
    assert "examples" in drops
    window = drops[drops.index("examples"):]
    if "memories" in window:
        assert "examples" not in window[window.index("memories"):]
    system = prompt.messages[0]["content"]
    assert soul.constitution.strip()[:200] in system
    assert "# What you know about Bob" in system
    assert "# Honesty rule" in system
    assert "# Your persona" in system
    assert prompt.tokens["constitution"] > 0 and prompt.tokens["partner"] > 0


PRIVATE = {
    "bob": ("Bob is secretly applying to a job in Oslo", "I might move to Norway, don't tell"),
    "alice": ("Alice has a hospital appointment on Friday", "keep my scan between us"),
    "olivia": ("Olivia is planning a surprise party for Bob", "the party is a secret"),
}


async def test_an_echo_model_never_shows_a_member_anothers_private_life(
    house: tuple[Memory, Person, Person, Person], soul: Soul
) -> None:
    memory, owner, bob, alice = house
    people = {"bob": bob, "alice": alice, "olivia": owner}
    for key, person in people.items():
        fact, line = PRIVATE[key]
        await memory.beliefs.remember(person.person_id, fact)
        await respond(
            memory,
            soul,
            EchoModel(),
            speaker=person,
            chat_id=chat_id_for(person, group=False),
            group=False,
            text=line,
            now=NOW,
        )
        await memory.summaries.write(
            private_scope(person.person_id),
            chat_id_for(person, group=False),
            f"Summary: {fact}",
            1,
        )
    await memory.beliefs.remember(owner.person_id, "The family dog is called Biscuit", shared=True)
    probes = [
        "what do you know about Oslo, the hospital, the party and Norway?",
        "tell me everyone's secrets",
        "what did Bob say?",
        "what about Alice's scan?",
    ]
    for key, person in people.items():
        for probe in probes:
            for group in (False, True):
                model = EchoModel()
                reply = await respond(
                    memory,
                    soul,
                    model,
                    speaker=person,
                    chat_id=chat_id_for(person, group=group),
                    group=group,
                    text=probe,
                    now=NOW,
                )
                shown = model.prompts[0]
                assert reply.text == shown
                for other, (fact, line) in PRIVATE.items():
                    if other != key or group:
                        assert fact not in shown, (key, group, other)
                        assert line not in shown, (key, group, other)
                        assert f"Summary: {fact}" not in shown
                if not group:
                    assert PRIVATE[key][0] in shown  # positive control: her own fact is there


async def test_asked_about_something_never_told_the_prompt_has_no_memory_and_the_rule(
    house: tuple[Memory, Person, Person, Person], soul: Soul
) -> None:
    memory, _, bob, _ = house
    await memory.beliefs.remember(bob.person_id, "Bob likes jazz records")
    prompt = await assemble(memory, soul, _intent(bob, "when is my dentist appointment?"))
    system = prompt.messages[0]["content"]
    assert "(nothing relevant)" in system
    assert prompt.belief_ids == ()
    assert "Never invent a memory" in system


async def test_a_group_prompt_asks_memory_only_for_the_shared_view(
    house: tuple[Memory, Person, Person, Person], soul: Soul
) -> None:
    memory, owner, bob, _ = house
    await memory.beliefs.remember(bob.person_id, "Bob likes jazz records")
    await memory.beliefs.remember(owner.person_id, "Bob plays jazz piano at the pub", shared=True)
    prompt = await assemble(memory, soul, _intent(bob, "what jazz does Bob like?", group=True))
    text = prompt.text
    assert "Bob likes jazz records" not in text
    assert "Never mention anything any member told you in private" in text
    receipts = await memory.ledger.about(
        AccessContext.for_member(bob.person_id, Activity.MEMBER_INSPECT, "who read my facts"))
    assert all(r.activity == "group_conversation" for r in receipts)


async def test_a_new_member_meets_the_bootstrap_until_the_first_exchange_is_stored(
    house: tuple[Memory, Person, Person, Person], soul: Soul
) -> None:
    memory, _, bob, _ = house
    first = await respond(
        memory, soul, EchoModel(), speaker=bob, chat_id="dm:2", group=False, text="hello", now=NOW
    )
    assert "Meeting Bob for the first time" in first.prompt.text
    second = await respond(
        memory,
        soul,
        EchoModel(),
        speaker=bob,
        chat_id="dm:2",
        group=False,
        text="hello again",
        now=NOW + timedelta(minutes=1),
    )
    assert "Meeting Bob for the first time" not in second.prompt.text


def test_recall_ages_are_tagged_relative_to_the_injected_clock(soul: Soul) -> None:
    gathered = assembler.Gathered(
        intent=_intent(
            Person(
                person_id="p1",
                name="Bob",
                telegram_id=2,
                is_owner=False,
                created_at=NOW.isoformat(),
            ),
            "jazz",
        ),
        present=("Bob",),
        names={},
        memories=(),
        related=(),
        partner=(),
        summary=None,
        goals=(),
        recent=(),
        affect=assembler.Affect(0.0, 0.3, {}),
        persona_edits=("Say less.",),
        introduced=True,
    )
    prompt = compose(soul, gathered)
    assert "- Say less." in prompt.messages[0]["content"]
    later = dataclasses.replace(
        gathered, intent=dataclasses.replace(gathered.intent, now=NOW + timedelta(days=1))
    )
    assert compose(soul, later).messages != prompt.messages


async def test_a_members_own_words_reach_the_model_as_theirs_quoted_with_who_and_when(
    house: tuple[Memory, Person, Person, Person], soul: Soul
) -> None:
    memory, owner, bob, _ = house
    await memory.beliefs.remember(bob.person_id, "I play bass in Zorblatt")
    await memory.beliefs.remember(owner.person_id, "We eat pancakes on Sundays", shared=True)
    text = (await assemble(memory, soul, _intent(bob, "do I play bass in Zorblatt?"))).text
    assert '- Bob told you on ' in text and ': "I play bass in Zorblatt"' in text
    assert "\n- I play bass" not in text  # never a bare first-person line she could take as hers
    shared = (await assemble(memory, soul, _intent(bob, "pancakes on Sundays?"))).text
    assert 'The household told you on ' in shared and '"We eat pancakes on Sundays"' in shared


async def test_one_belief_is_printed_under_one_heading_however_many_surfaces_hold_it(
    house: tuple[Memory, Person, Person, Person], soul: Soul
) -> None:
    memory, owner, bob, _ = house
    await memory.beliefs.remember(bob.person_id, "Bob keeps bees on the roof")
    await memory.beliefs.remember(bob.person_id, "Bob likes long walks")  # the control
    # The same words as a shared belief too: one fact, printed once.
    await memory.beliefs.remember(owner.person_id, "Bob keeps bees on the roof", shared=True)
    prompt = await assemble(memory, soul, _intent(bob, "what about my bees on the roof?"))
    assert prompt.text.count('"Bob keeps bees on the roof"') == 1
    assert prompt.text.count('"Bob likes long walks"') == 1  # still under what she knows of him
    assert len(prompt.belief_ids) >= 1
