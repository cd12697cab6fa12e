"""What a message she writes first may carry (soul/proactive.py): the member's own words they
asked for, and what the `proactive` lens allows of the rest. Each refusal stands beside a
positive control that proves the same fact does reach the message where it is allowed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot import texts
from memory import Activity, Role, Sensitivity, dm_chat, group_chat, private_scope
from soul.files import load_soul
from soul.proactive import Lane
from soul.when import next_occurrence
from tests.helpers import Household, TestClock, make_household

SOUL = load_soul(None)
START = datetime(2026, 12, 1, 14, 30, tzinfo=UTC)
ZONE = "Europe/Berlin"


@dataclass
class Echo:
    """Her line is every remembered fact the prompt gave the model ("Bob told you on ..."), so
    what reached it shows in the message; every prompt is kept whole as well."""

    prompts: list[str] = field(default_factory=list)

    async def reply(self, messages: list[dict[str, str]], *, max_tokens: int = 400,
                    temperature: float = 0.7) -> str:
        whole = "\n".join(m["content"] for m in messages)
        self.prompts.append(whole)
        return " | ".join(line[2:] for line in whole.splitlines()
                          if line.startswith("- ") and " told you on " in line)


@pytest.fixture
async def home(tmp_path: Path) -> AsyncIterator[tuple[Household, TestClock, Echo]]:
    clock = TestClock(START)
    household = await make_household(tmp_path / "hearth.db", clock=clock)
    try:
        yield household, clock, Echo()
    finally:
        await household.memory.close()


async def _deliver(h: Household, clock: TestClock, model: Echo, what: str, *,
                   group: bool = False) -> str:
    """One reminder of Bob's, due now, through the lane: the message it became."""
    scope = "shared" if group else private_scope(h.bob.person_id)
    chat = group_chat(-500) if group else dm_chat(h.bob)
    await h.memory.reminders.add(
        h.bob.person_id, what, scope=scope, chat_id=chat, telegram_chat=-500 if group else 1002,
        zone=ZONE, due=clock() + timedelta(minutes=1), exact=True,
    )
    clock.advance(timedelta(minutes=1))
    lane = Lane(h.memory, SOUL, model, texts.REMINDER_WORDS, ZONE)
    (sent,) = await lane.run_due(clock())
    return sent.text


async def test_a_message_never_carries_another_members_private_words(
    home: tuple[Household, TestClock, Echo],
) -> None:
    h, clock, model = home
    await h.memory.beliefs.remember(h.alice.person_id, "Alice plans the surprise party for Bob")
    await h.memory.beliefs.remember(h.bob.person_id, "Bob's party is at the boathouse")
    message = await _deliver(h, clock, model, "Plan the party")
    assert "boathouse" in message  # positive control: his own fact reached her line
    assert "surprise" not in model.prompts[-1] and "surprise" not in message


async def test_a_message_never_carries_a_credential_not_even_with_every_grant(
    home: tuple[Household, TestClock, Echo],
) -> None:
    h, clock, model = home
    await h.memory.beliefs.remember(h.bob.person_id, "The garage door code is 4512")
    await h.memory.beliefs.remember(h.bob.person_id, "The garage door sticks in the cold")
    for sensitivity in (Sensitivity.HEALTH, Sensitivity.FINANCE):
        await h.memory.grants.give(h.bob.person_id, Activity.PROACTIVE, sensitivity)
    message = await _deliver(h, clock, model, "Open the garage door for the plumber")
    assert "sticks in the cold" in message  # positive control
    assert "4512" not in model.prompts[-1] and "4512" not in message
    # Nor do the reminder's own words, when they are a credential: they stay in the chat.
    withheld = await _deliver(h, clock, model, "Tell Ana the wifi password is Kestrel-77")
    assert "Kestrel" not in withheld and "Kestrel" not in model.prompts[-1]
    assert "holds a code or password" in withheld


async def test_health_and_finance_reach_a_message_only_with_the_members_grant(
    home: tuple[Household, TestClock, Echo],
) -> None:
    h, clock, model = home
    await h.memory.beliefs.remember(h.bob.person_id, "Bob's diabetes clinic is at St Mary's")
    await h.memory.beliefs.remember(h.bob.person_id, "Bob's overdraft at the bank is 300 euros")
    before = await _deliver(h, clock, model, "Call the clinic and the bank")
    assert "St Mary" not in before and "300 euros" not in before
    assert "St Mary" not in model.prompts[-1]
    await h.memory.grants.give(h.bob.person_id, Activity.PROACTIVE, Sensitivity.HEALTH)
    with_health = await _deliver(h, clock, model, "Ring the clinic and the bank")
    assert "St Mary" in with_health and "300 euros" not in with_health
    await h.memory.grants.give(h.bob.person_id, Activity.PROACTIVE, Sensitivity.FINANCE)
    with_both = await _deliver(h, clock, model, "Phone the clinic and the bank")
    assert "St Mary" in with_both and "300 euros" in with_both
    await h.memory.grants.revoke(h.bob.person_id, Activity.PROACTIVE, Sensitivity.HEALTH)
    revoked = await _deliver(h, clock, model, "Write to the clinic and the bank")
    assert "St Mary" not in revoked and "300 euros" in revoked


async def test_the_reminders_own_health_words_go_back_to_the_member_who_asked(
    home: tuple[Household, TestClock, Echo],
) -> None:
    h, clock, model = home
    message = await _deliver(h, clock, model, "Take my insulin")
    assert message.startswith("⏰ Reminder: Take my insulin")


async def test_a_group_reminder_uses_the_shared_view_only(
    home: tuple[Household, TestClock, Echo],
) -> None:
    h, clock, model = home
    await h.memory.beliefs.remember(h.bob.person_id, "Bob is baking the birthday cake secretly")
    await h.memory.beliefs.remember(h.owner.person_id, "The birthday cake goes in the blue tin",
                                    shared=True)
    message = await _deliver(h, clock, model, "Fetch the birthday cake", group=True)
    assert "blue tin" in message  # positive control: the household's fact
    assert "secretly" not in model.prompts[-1] and "secretly" not in message


async def _checkin(h: Household, clock: TestClock, model: Echo) -> str:
    """Bob's daily check-in, due a minute from now, run through the lane: the prompt it wrote."""
    bob = h.bob
    wall = (clock() + timedelta(minutes=1)).strftime("%H:%M")
    await h.memory.reminders.set_checkin(
        bob.person_id, scope=private_scope(bob.person_id), chat_id=dm_chat(bob),
        telegram_chat=1002, zone="UTC", wall=wall,
        due=next_occurrence("daily", wall, clock(), ZoneInfo("UTC")),
    )
    clock.advance(timedelta(minutes=1))
    lane = Lane(h.memory, SOUL, model, texts.REMINDER_WORDS, ZONE)
    assert len(await lane.run_due(clock())) == 1
    return model.prompts[-1]


async def test_a_checkin_draws_on_what_the_member_said_lately_within_the_lens(
    home: tuple[Household, TestClock, Echo],
) -> None:
    h, clock, model = home
    bob, alice = h.bob, h.alice
    for who, text in ((bob, "I repotted the fern on the balcony"),
                      (bob, "My insulin dose went up this week"),
                      (alice, "I am interviewing at the Oslo office")):
        await h.memory.transcript.append(chat_id=dm_chat(who), speaker_id=who.person_id,
                                         role=Role.USER, scope=private_scope(who.person_id),
                                         text=text)
    prompt = await _checkin(h, clock, model)
    assert "fern" in prompt  # positive control: what he told her lately
    assert "insulin" not in prompt and "Oslo" not in prompt
    await h.memory.grants.give(bob.person_id, Activity.PROACTIVE, Sensitivity.HEALTH)
    prompt = await _checkin(h, clock, model)
    assert "insulin" in prompt and "Oslo" not in prompt


async def test_a_checkin_carries_only_what_recall_was_sure_of(
    home: tuple[Household, TestClock, Echo],
) -> None:
    h, clock, model = home
    bob = h.bob
    await h.memory.transcript.append(chat_id=dm_chat(bob), speaker_id=bob.person_id,
                                     role=Role.USER, scope=private_scope(bob.person_id),
                                     text="I repotted the fern on the balcony")
    await h.memory.beliefs.remember(h.owner.person_id,
                                    "The fern on the balcony came from grandma", shared=True)
    await h.memory.beliefs.remember(h.owner.person_id,
                                    "The recycling goes out on Thursday mornings", shared=True)
    prompt = await _checkin(h, clock, model)
    found = await h.memory.recall.search(h.dm(bob), "I repotted the fern on the balcony")
    assert not [r for r in found if "recycling" in r.belief.proposition and r.sure]
    assert "came from grandma" in prompt  # positive control: what recall was sure of
    assert "recycling" not in prompt  # related in no way: recall only filled with it
