"""The chat's snapshot in the prompt: made on a tick, shown to the next turn under its own
heading and budget, never the group's view of anyone's private life."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

import soul as soul_package
from memory import SHARED, Memory, Person, Role, dm_chat, group_chat, private_scope
from soul.assembler import Intent, assemble
from soul.files import Soul, load_soul
from soul.tick import run_tick
from tests.helpers import Household, TestClock, make_household
from tests.soul.test_files import edit_manifest

T = TypeVar("T", bound=BaseModel)
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
GROUP = group_chat()
HEADING = "# Lately in this chat"


class QuietModel:
    """A model that reads nothing in a batch and summarises in four words."""

    async def reply(self, messages: list[dict[str, str]], *, max_tokens: int = 400,
                    temperature: float = 0.7, patient: bool = False,
                    stop: Sequence[str] = ()) -> str:
        return "A quiet day here."

    async def extract(self, messages: list[dict[str, str]], schema: type[T]) -> T:
        return schema.model_validate({"items": []})


@pytest.fixture(scope="module")
def soul() -> Soul:
    return load_soul()


@pytest.fixture
def clock() -> TestClock:
    return TestClock(NOW)


@pytest.fixture
async def house(tmp_path: Path, clock: TestClock) -> AsyncIterator[Household]:
    household = await make_household(tmp_path / "hearth.db", clock=clock)
    try:
        yield household
    finally:
        await household.memory.close()


async def _say(memory: Memory, person: Person, text: str, *, group: bool = False) -> None:
    await memory.transcript.append(
        chat_id=GROUP if group else dm_chat(person), speaker_id=person.person_id,
        role=Role.USER, scope=SHARED if group else private_scope(person.person_id), text=text)


async def _seed(house: Household, clock: TestClock) -> None:
    m = house.memory
    await _say(m, house.alice, "Could you keep the Zephyrine proposal plan between us?")
    await m.reminders.add(house.alice.person_id, "collect the Zephyrine ring",
                          scope=private_scope(house.alice.person_id),
                          chat_id=dm_chat(house.alice), telegram_chat=None, zone="UTC",
                          due=clock() + timedelta(hours=5))
    await _say(m, house.bob, "Who is taking the car on Saturday?", group=True)
    await m.reminders.add(house.owner.person_id, "put the recycling bins out", scope=SHARED,
                          chat_id=GROUP, telegram_chat=None, zone="UTC",
                          due=clock() + timedelta(hours=20))


async def _tick(house: Household) -> None:
    await run_tick(house.memory, QuietModel(), now=house.clock(), assistant="Wren")


def _intent(person: Person, text: str, now: datetime, *, group: bool = False) -> Intent:
    return Intent(speaker=person, chat_id=GROUP if group else dm_chat(person), group=group,
                  text=text, now=now)


async def test_after_a_tick_the_next_group_turn_is_told_who_was_around_and_what_is_open(
    house: Household, clock: TestClock, soul: Soul
) -> None:
    await _seed(house, clock)
    intent = _intent(house.alice, "what's new?", clock(), group=True)
    before = await assemble(house.memory, soul, intent)
    assert HEADING not in before.text  # no tick yet: nothing made on a turn

    await _tick(house)
    clock.advance(timedelta(minutes=2))
    prompt = await assemble(house.memory, soul, _intent(house.alice, "what's new?", clock(),
                                                        group=True))
    system = prompt.messages[0]["content"]
    assert f"{HEADING} (as of Monday 12:00 UTC)" in system
    assert "- Around in the last day: Bob" in system
    assert '- Left open: Bob asked Monday 12:00 UTC: "Who is taking the car on Saturday?"' \
        in system
    assert ('- Reminder for Olivia, due Tuesday 08:00 UTC (in 19 hours): '
            '"put the recycling bins out"') in system
    assert "Zephyrine" not in prompt.text  # Alice's private line and reminder: her DM only
    assert 0 < prompt.tokens["snapshot"] <= soul.manifest.budgets.snapshot
    # The snapshot sits right after the situation.
    assert system.index("# Situation") < system.index(HEADING) < system.index("# What you know")


async def test_after_a_tick_a_members_dm_turn_is_told_their_own_reminder(
    house: Household, clock: TestClock, soul: Soul
) -> None:
    await _seed(house, clock)
    await _tick(house)
    prompt = await assemble(house.memory, soul, _intent(house.alice, "hi", clock()))
    assert HEADING in prompt.text
    assert ('- Reminder for Alice, due Monday 17:00 UTC (in 5 hours): '
            '"collect the Zephyrine ring"') in prompt.text
    assert "Around in the last day" not in prompt.text  # only Alice: the situation says so
    assert "Who is taking the car" not in prompt.text  # the group's thread is the group's


async def test_a_reminder_the_snapshot_lists_is_left_out_once_its_time_has_passed(
    house: Household, clock: TestClock, soul: Soul
) -> None:
    await _seed(house, clock)
    await _tick(house)
    clock.advance(timedelta(hours=6))  # no tick since: the snapshot is still the old one
    prompt = await assemble(house.memory, soul, _intent(house.alice, "hi", clock()))
    assert "collect the Zephyrine ring" not in prompt.text.split(HEADING)[-1].split("\n#")[0]


async def test_a_removed_member_is_no_longer_named_around_the_group(
    house: Household, clock: TestClock, soul: Soul
) -> None:
    await _seed(house, clock)
    await _say(house.memory, house.alice, "I can take it after lunch", group=True)
    await _tick(house)
    intent = _intent(house.owner, "hello", clock(), group=True)
    assert "- Around in the last day: Alice, Bob" in (await assemble(house.memory, soul,
                                                                     intent)).text
    await house.memory.forgetting.remove_person(house.bob.person_id)
    assert "- Around in the last day: Alice\n" in (await assemble(house.memory, soul,
                                                                  intent)).text


async def _seeded_prompt(path: Path, soul: Soul) -> str:
    clock = TestClock(NOW)
    house = await make_household(path, clock=clock)
    try:
        await _seed(house, clock)
        await _tick(house)
        prompt = await assemble(house.memory, soul, _intent(house.bob, "hi", clock(),
                                                            group=True))
        return prompt.text
    finally:
        await house.memory.close()


async def test_the_same_state_and_snapshot_assemble_to_the_same_bytes(
    tmp_path: Path, soul: Soul
) -> None:
    first = await _seeded_prompt(tmp_path / "a.db", soul)
    assert HEADING in first
    assert first == await _seeded_prompt(tmp_path / "b.db", soul)


async def test_a_soul_written_before_the_snapshot_loads_and_drops_it_first_when_full(
    tmp_path: Path, house: Household, clock: TestClock
) -> None:
    folder = tmp_path / "old-soul"
    shutil.copytree(Path(soul_package.__file__).parent / "default", folder)

    def predate(data: dict[str, Any]) -> None:
        del data["budgets"]["snapshot"]
        del data["profiles"]["small"]["budgets"]["snapshot"]
        data["overflow"]["drop_order"].remove("snapshot")

    edit_manifest(folder, predate)
    old = load_soul(folder)
    assert old.manifest.budgets.snapshot == 120
    await _seed(house, clock)
    await _tick(house)
    intent = _intent(house.alice, "what's new?", clock(), group=True)
    roomy = await assemble(house.memory, old, intent)
    assert HEADING in roomy.text and roomy.dropped == ()
    # One token short of room for everything: the snapshot's last line goes, nothing else.
    window = sum(roomy.tokens.values()) + old.manifest.reply_reserve - 1
    manifest = old.manifest.model_copy(update={"window": window})
    tight = old.model_copy(update={"manifest": manifest})
    prompt = await assemble(house.memory, tight, intent)
    assert prompt.dropped == ("snapshot",)
    assert "- Reminder for Olivia" not in prompt.text and "- Left open: Bob" in prompt.text
