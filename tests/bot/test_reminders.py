"""Reminders on Telegram, in process: the real application, handlers, desk, lane and memory,
a recording fake of the Bot API and a scripted model, all on one injected clock."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot import texts
from bot.app import BotConfig, build_application
from bot.context import HearthApp
from bot.proactive import send_due
from bot.terminal import remind_every
from memory import AccessContext, Activity, Memory, Person, dm_chat
from soul.files import Soul, load_soul
from soul.model import ModelError
from soul.proactive import Lane
from soul.reminders import Desk
from soul.turn import respond
from tests.bot.telegram_fake import FakeTelegram, People, as_update
from tests.helpers import HashEmbedder, TestClock

OWNER, BOB, ALICE = 1001, 1002, 1003
GROUP = -500
TOKEN = "123456:TEST-token"
SOUL: Soul = load_soul(None)
# Tuesday 1 December 2026, 15:30 in Berlin, the household's zone.
START = datetime(2026, 12, 1, 14, 30, tzinfo=UTC)
ZONE = "Europe/Berlin"


@dataclass
class LineModel:
    """Her own line beside a reminder, or a check-in: a fixed answer, every prompt kept."""

    answer: str = "Good luck!"
    error: Exception | None = None
    requests: list[list[dict[str, str]]] = field(default_factory=list)

    async def reply(self, messages: list[dict[str, str]], *, max_tokens: int = 400,
                    temperature: float = 0.7, patient: bool = False) -> str:
        self.requests.append(messages)
        if self.error is not None:
            raise self.error
        return self.answer

    async def extract(self, messages: list[dict[str, str]], schema: type[Any]) -> Any:
        raise ModelError("no extraction in these tests")


class FloodingTelegram(FakeTelegram):
    """The in-process Bot API; while `flooded`, every sendMessage is answered 429 with a
    retry_after longer than a call's patience, so it is left to a later try."""

    flooded = False
    edits_flooded = False  # editMessageText as well (a button's outcome)

    async def do_request(  # noqa: PLR0917 -- BaseRequest's own signature
        self, url: str, method: str, request_data: Any = None, read_timeout: Any = None,
        write_timeout: Any = None, connect_timeout: Any = None, pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        if (self.flooded and url.endswith("/sendMessage")) or (
                self.edits_flooded and url.endswith("/editMessageText")):
            body = {"ok": False, "error_code": 429, "description": "Too Many Requests",
                    "parameters": {"retry_after": 3600}}
            return 429, json.dumps(body).encode()
        return await super().do_request(url, method, request_data, read_timeout,
                                        write_timeout, connect_timeout, pool_timeout)


@dataclass
class Home:
    app: HearthApp
    telegram: FloodingTelegram
    people: People
    memory: Memory
    model: LineModel
    clock: TestClock
    db: Path

    async def say(self, user_id: int, text: str, **kw: Any) -> None:
        await self.app.process_update(as_update(self.people.message(user_id, text, **kw),
                                                self.app))

    async def press(self, user_id: int, token: str) -> None:
        await self.app.process_update(as_update(self.people.press(user_id, token), self.app))

    def to(self, chat_id: int) -> list[str]:
        return self.telegram.texts(chat_id)

    def last(self, chat_id: int) -> str:
        return self.to(chat_id)[-1]

    async def person(self, telegram_id: int) -> Person:
        found = await self.memory.people.by_telegram_id(telegram_id)
        assert found is not None
        return found

    async def later(self, delta: timedelta) -> list[str]:
        """Move the clock on and let the lane do what fell due (as its job would)."""
        self.clock.advance(delta)
        sent = await send_due(self.app)
        return [s.text for s in sent]

    async def deliver_owed(self) -> int:
        """What the outbox owes, sent as the resume job sends it: how many chats still wait."""
        courier = self.app.bot_data.hearth.courier
        assert courier is not None
        return await courier.deliver_all(self.app.bot)

    def buttons(self) -> list[tuple[str, str]]:
        """(label, callback data) of the last message sent with an inline keyboard."""
        with_buttons = [c for c in self.telegram.calls if "reply_markup" in c.params]
        markup = with_buttons[-1].params["reply_markup"]
        if isinstance(markup, str):
            markup = json.loads(markup)
        return [(b["text"], b["callback_data"]) for row in markup["inline_keyboard"]
                for b in row]


async def open_home(db: Path, clock: TestClock, model: LineModel | None = None) -> Home:
    memory = await Memory.open(db, embedder=HashEmbedder(), create=True, clock=clock)
    if not await memory.people.list():
        await memory.people.add("Olivia", telegram_id=OWNER, owner=True)
        await memory.people.add("Bob", telegram_id=BOB)
        await memory.people.add("Alice", telegram_id=ALICE)
        await memory.household.enable_group(str(GROUP),
                                            (await memory.people.by_name("Olivia")).person_id)
    telegram = FloodingTelegram()
    model = model or LineModel()
    app = build_application(
        BotConfig(token=TOKEN, owner_telegram_id=OWNER, timezone=ZONE),
        memory=memory, soul=SOUL, model=model, request=telegram, clock=clock,
        typing_interval=0.02,
    )
    await app.initialize()
    telegram.clear()
    return Home(app, telegram, People(telegram), memory, model, clock, db)


async def close_home(home: Home) -> None:
    await home.app.shutdown()
    await home.memory.close()


@pytest.fixture
async def home(tmp_path: Path) -> AsyncIterator[Home]:
    opened = await open_home(tmp_path / "hearth.db", TestClock(START))
    try:
        yield opened
    finally:
        await close_home(opened)


def inspect(person: Person) -> AccessContext:
    return AccessContext.for_member(person.person_id, Activity.MEMBER_INSPECT, "a test read")


# --- asking, and the time she understood -------------------------------------------------------


async def test_a_reminder_is_confirmed_in_one_line_with_the_time_she_understood(
    home: Home,
) -> None:
    await home.say(BOB, "Remind me to call the dentist tomorrow", name="Bob")
    assert home.to(BOB) == ["I'll remind you tomorrow at 09:00: call the dentist"]
    assert home.model.requests == []  # the desk answered; the model was not asked
    bob = await home.person(BOB)
    (listed,) = await home.memory.reminders.mine(inspect(bob))
    assert listed.text == "Call the dentist"
    assert listed.reminder.next_at == datetime(2026, 12, 2, 8, 0, tzinfo=UTC)  # 09:00 CET


@pytest.mark.parametrize(
    ("text", "reply"),
    [
        ("remind me in 2 minutes to stretch", "I'll remind you today at 15:32: stretch"),
        ("remind me every Monday at 8 to put the bins out",
         "I'll remind you every Monday at 08:00: put the bins out"),
        ("Erinnere mich morgen um 9 an den Zahnarzt", "I'll remind you tomorrow at 09:00: den "
         "Zahnarzt"),
        ("rappelle-moi vendredi soir d'acheter du pain",
         "I'll remind you on Friday at 18:00: acheter du pain"),
        ("recuérdame en dos horas llamar a mamá", "I'll remind you today at 17:30: llamar a "
         "mamá"),
    ],
)
async def test_each_phrasing_is_confirmed_with_its_local_time(home: Home, text: str,
                                                               reply: str) -> None:
    await home.say(BOB, text, name="Bob")
    assert home.to(BOB) == [reply]


async def test_an_unclear_time_gets_one_short_question_and_the_answer_sets_it(
    home: Home,
) -> None:
    await home.say(BOB, "remind me to water the plants", name="Bob")
    (question,) = home.to(BOB)
    assert question.startswith("When should I remind you: water the plants?")
    await home.say(BOB, "tomorrow at 7:30 please", name="Bob")
    assert home.last(BOB) == "I'll remind you tomorrow at 07:30: water the plants"
    assert home.model.requests == []


async def test_a_question_left_unanswered_lapses_and_the_talk_goes_on(home: Home) -> None:
    await home.say(BOB, "remind me to call Anna later", name="Bob")
    assert home.last(BOB).startswith("When should I remind you: call Anna")
    await home.say(BOB, "Actually, how are you today?", name="Bob")
    assert home.last(BOB) == home.model.answer  # an ordinary turn, answered by the model
    await home.say(BOB, "tomorrow at 9", name="Bob")  # too late to answer the question
    assert len(home.model.requests) == 2
    assert await home.memory.reminders.scheduled() == []


async def test_the_time_is_read_in_the_members_own_zone_once_they_set_it(home: Home) -> None:
    await home.say(BOB, "/timezone", name="Bob")
    assert "household's time zone, Europe/Berlin" in home.last(BOB)
    await home.say(BOB, "/timezone America/New_York", name="Bob")
    assert home.last(BOB).startswith("Done: your time zone is America/New_York (it's 09:30")
    await home.say(BOB, "remind me at 10 to stretch", name="Bob")
    assert home.last(BOB) == "I'll remind you today at 10:00: stretch"
    (reminder,) = await home.memory.reminders.scheduled()
    assert reminder.next_at == datetime(2026, 12, 1, 15, 0, tzinfo=UTC)
    await home.say(ALICE, "remind me at 10 to stretch", name="Alice")  # still the household's
    assert home.last(ALICE) == "I'll remind you tomorrow at 10:00: stretch"
    await home.say(BOB, "/timezone Mars/Olympus", name="Bob")
    assert home.last(BOB).startswith("I don't know a time zone called Mars/Olympus")


async def test_a_moved_member_keeps_a_repeating_reminder_at_its_local_time(home: Home) -> None:
    await home.say(BOB, "remind me every day at 8:00 to take my pills", name="Bob")
    (before,) = await home.memory.reminders.scheduled()
    assert before.next_at == datetime(2026, 12, 2, 7, 0, tzinfo=UTC)
    await home.say(BOB, "/timezone Asia/Tokyo", name="Bob")
    assert "1 repeating reminder" in home.last(BOB)
    (after,) = await home.memory.reminders.scheduled()
    assert after.next_at == datetime(2026, 12, 1, 23, 0, tzinfo=UTC)  # 08:00 in Tokyo


# --- the lane she writes first in --------------------------------------------------------------


async def test_a_due_reminder_is_delivered_in_the_dm_once_with_a_line_of_hers(
    home: Home,
) -> None:
    await home.say(BOB, "remind me in 2 minutes to stretch", name="Bob")
    home.telegram.clear()
    assert await home.later(timedelta(minutes=1)) == []
    (sent,) = await home.later(timedelta(minutes=1))
    assert sent == "⏰ Reminder: Stretch\nGood luck!"
    assert home.to(BOB) == [sent]
    assert await home.later(timedelta(hours=1)) == []
    assert home.to(BOB) == [sent]  # once
    assert [c.chat_id for c in home.telegram.sent()] == [BOB]  # nowhere else
    (prompt,) = home.model.requests
    assert '"Stretch"' in prompt[-1]["content"]  # the assembler composed her line
    bob = await home.person(BOB)
    (trace,) = await home.memory.reminders.firings(bob.person_id)
    assert trace.why == "asked" and trace.used["goals"]
    reads = await home.memory.ledger.about(inspect(bob))
    assert any(r.activity == "proactive" and "a reminder Bob asked for" in r.purpose
               for r in reads)


async def test_the_model_failing_does_not_hold_a_reminder_back(home: Home) -> None:
    home.model.error = ModelError("the model is down")
    await home.say(BOB, "remind me in 5 minutes to take the cake out", name="Bob")
    assert await home.later(timedelta(minutes=5)) == ["⏰ Reminder: Take the cake out"]


async def test_a_flood_limit_changes_when_never_whether(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "1")  # python-telegram-bot's own 429 error, warning-free
    await home.say(BOB, "remind me in 1 minute to stretch", name="Bob")
    home.telegram.flooded = True
    await home.later(timedelta(minutes=1))
    assert await home.memory.outbox.count_pending() == 1  # kept, not lost
    home.telegram.flooded = False
    home.telegram.clear()
    assert await home.deliver_owed() == 0  # what the resume job does
    await home.deliver_owed()
    assert home.to(BOB) == ["⏰ Reminder: Stretch\nGood luck!"]
    assert await home.memory.outbox.count_pending() == 0


async def test_a_restart_fires_nothing_twice_and_a_reminder_missed_meanwhile_once_late(
    home: Home, tmp_path: Path,
) -> None:
    await home.say(BOB, "remind me in 1 minute to stretch", name="Bob")
    await home.say(BOB, "remind me tomorrow at 9 to call the dentist", name="Bob")
    await home.later(timedelta(minutes=1))
    await close_home(home)  # she stops
    clock = home.clock
    clock.advance(timedelta(days=1))  # and is down through 09:00 the next day
    again = await open_home(home.db, clock, LineModel(answer="Sorry!"))
    try:
        sent = await again.later(timedelta(0))
        assert sent == ["Sorry, this one is late: it was due Wednesday at 09:00.\n"
                        "⏰ Reminder: Call the dentist\nSorry!"]
        assert await again.later(timedelta(hours=2)) == []
        assert again.to(BOB) == sent
    finally:
        await close_home(again)
    home.app = again.app  # the fixture closes what it opened; this one is closed already
    home.memory = await Memory.open(home.db, clock=clock)


async def test_a_reminder_asked_in_the_group_goes_to_the_group_with_shared_words_only(
    home: Home,
) -> None:
    bob = await home.person(BOB)
    await home.memory.beliefs.remember(bob.person_id, "Bob's blood sugar runs low at night")
    await home.say(BOB, "remind me in 10 minutes to fetch the cake", chat_id=GROUP, name="Bob")
    assert home.to(GROUP) == ["I'll remind you today at 15:40: fetch the cake"]
    home.telegram.clear()
    (sent,) = await home.later(timedelta(minutes=10))
    assert home.to(GROUP) == [sent] and home.to(BOB) == []
    (prompt,) = home.model.requests
    assert "blood sugar" not in "\n".join(m["content"] for m in prompt)


async def test_a_reminder_made_in_a_dm_never_appears_in_the_group(home: Home) -> None:
    await home.say(BOB, "remind me in 1 minute to take my insulin", name="Bob")
    await home.say(OWNER, "hello everyone", chat_id=GROUP, name="Olivia")
    home.telegram.clear()
    await home.later(timedelta(minutes=1))
    assert home.to(GROUP) == []
    assert home.to(BOB) == ["⏰ Reminder: Take my insulin\nGood luck!"]


# --- /reminders, cancel, snooze, /forget -------------------------------------------------------


async def test_a_command_answer_telegram_would_not_take_is_owned_up_to_once_it_is_back(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "1")  # python-telegram-bot's own 429 error, warning-free
    home.telegram.flooded = True  # Telegram refuses every message for an hour
    await home.say(BOB, "/reminders", name="Bob")
    assert home.to(BOB) == []
    assert await home.deliver_owed() == 1  # still flooded: it waits
    home.telegram.flooded = False
    assert await home.deliver_owed() == 0
    assert home.to(BOB) == [texts.unsent("reminders")]
    assert await home.memory.inbox.count_pending() == 0  # the command is not run again
    await home.say(BOB, "/reminders", name="Bob")  # asked again, answered
    assert home.last(BOB) == texts.REMINDERS_EMPTY


async def test_a_buttons_outcome_telegram_would_not_take_waits_in_the_outbox(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "1")
    await home.say(BOB, "remind me tomorrow at 9 to call the dentist", name="Bob")
    await home.say(BOB, "/reminders", name="Bob")
    cancel = home.buttons()[0][1]
    home.telegram.flooded = home.telegram.edits_flooded = True
    await home.press(BOB, cancel)
    assert await home.memory.reminders.scheduled() == []  # the press did its work
    home.telegram.flooded = home.telegram.edits_flooded = False
    assert await home.deliver_owed() == 0
    assert home.last(BOB) == "Cancelled: Call the dentist"


async def test_reminders_lists_a_members_own_with_buttons_to_cancel_or_snooze(home: Home) -> None:
    await home.say(BOB, "remind me tomorrow at 9 to call the dentist", name="Bob")
    await home.say(BOB, "remind me every Monday at 8 to put the bins out", name="Bob")
    await home.say(ALICE, "remind me tomorrow at 10 to buy flowers", name="Alice")
    await home.say(BOB, "/reminders", name="Bob")
    listing = home.last(BOB)
    assert listing == ("Your reminders:\n"
                       "1. Call the dentist (tomorrow at 09:00)\n"
                       "2. Put the bins out (every Monday at 08:00)")
    labels = [label for label, _ in home.buttons()]
    assert labels == ["Cancel 1", "Snooze 1: 1 hour", "Cancel 2", "Snooze 2: 1 hour"]
    tokens = [token for _, token in home.buttons()]
    assert not any("dentist" in t for t in tokens)
    await home.press(ALICE, tokens[0])  # someone else's button changes nothing
    assert len(await home.memory.reminders.scheduled()) == 3
    await home.press(BOB, tokens[1])
    edited = home.telegram.sent(method="editMessageText")[-1].text
    assert edited == "All right, I'll remind you again tomorrow at 10:00."
    await home.say(BOB, "/reminders", name="Bob")
    await home.press(BOB, home.buttons()[2][1])  # cancel 2
    assert home.telegram.sent(method="editMessageText")[-1].text == (
        "Cancelled: Put the bins out")
    bob = await home.person(BOB)
    kept = await home.memory.reminders.scheduled(person_id=bob.person_id)
    assert [r.next_at for r in kept] == [datetime(2026, 12, 2, 9, 0, tzinfo=UTC)]
    home.telegram.clear()
    await home.later(timedelta(days=7))
    assert home.to(BOB) == ["Sorry, this one is late: it was due Wednesday at 10:00.\n"
                            "⏰ Reminder: Call the dentist\nGood luck!"]


async def test_a_fired_reminder_may_come_once_more_if_asked_and_never_nags(home: Home) -> None:
    await home.say(BOB, "remind me in 1 minute to stretch", name="Bob")
    await home.later(timedelta(minutes=1))
    await home.say(BOB, "/reminders", name="Bob")
    assert home.last(BOB) == "Your reminders:\n1. Stretch (was due today at 15:31)"
    ((label, token),) = home.buttons()
    assert label == "1: again in 1 hour"
    await home.press(BOB, token)
    home.telegram.clear()
    assert len(await home.later(timedelta(hours=1))) == 1
    assert await home.later(timedelta(days=2)) == []
    await home.say(BOB, "/reminders", name="Bob")
    assert home.last(BOB) == texts.REMINDERS_EMPTY


async def test_forget_takes_a_reminder_with_its_words(home: Home) -> None:
    await home.say(BOB, "remind me tomorrow at 9 to call Dr Weber about my knee", name="Bob")
    await home.say(BOB, "/forget Weber", name="Bob")
    forget_token = home.buttons()[0][1]
    await home.press(BOB, forget_token)
    assert await home.memory.reminders.scheduled() == []
    home.telegram.clear()
    assert await home.later(timedelta(days=1)) == []
    await home.memory.checkpoint()
    assert b"Weber" not in home.db.read_bytes()


# --- quiet hours, the cap, check-ins -----------------------------------------------------------


async def test_quiet_hours_hold_a_reminder_unless_that_very_time_was_asked_for(
    home: Home,
) -> None:
    await home.say(BOB, "/quiet 22-10", name="Bob")
    assert home.last(BOB).startswith("Done: quiet hours from 22:00 to 10:00.")
    await home.say(BOB, "remind me tonight to lock the shed", name="Bob")  # 20:00: not quiet
    await home.say(BOB, "remind me at 23:30 to take the pill", name="Bob")  # asked exactly
    await home.say(BOB, "remind me tomorrow to call Anna", name="Bob")  # her 09:00: held
    home.telegram.clear()
    assert await home.later(timedelta(hours=4, minutes=30)) == [  # 20:00
        "⏰ Reminder: Lock the shed\nGood luck!"]
    assert await home.later(timedelta(hours=3, minutes=30)) == [  # 23:30
        "⏰ Reminder: Take the pill\nGood luck!"]
    assert await home.later(timedelta(hours=9, minutes=29)) == []  # 08:59: still quiet
    (held,) = await home.later(timedelta(minutes=61))  # 10:00
    assert held.startswith("⏰ Reminder: Call Anna\n(It came due in your quiet hours")
    await home.say(BOB, "/quiet", name="Bob")
    assert home.last(BOB).startswith("Your quiet hours are 22:00 to 10:00.")
    await home.say(BOB, "/quiet off", name="Bob")
    assert home.last(BOB) == texts.QUIET_OFF
    await home.say(BOB, "/quiet whenever", name="Bob")
    assert home.last(BOB) == texts.QUIET_USAGE


async def test_a_checkin_is_off_until_asked_for_then_daily_within_the_cap(home: Home) -> None:
    await home.say(BOB, "/checkin", name="Bob")
    assert home.last(BOB).startswith("Check-ins are off")
    assert await home.later(timedelta(days=2)) == []
    await home.say(BOB, "I planted tulips in the garden today", name="Bob")
    await home.say(BOB, "/checkin daily 19:00", name="Bob")
    assert home.last(BOB) == "Done: I'll check in with you every day at 19:00."
    home.model.answer = "How are the tulips doing?"
    home.model.requests.clear()
    home.telegram.clear()
    # Thursday 3 December, 15:30 in Berlin; the first check-in is at 19:00.
    assert await home.later(timedelta(hours=3)) == []
    assert await home.later(timedelta(hours=1)) == ["How are the tulips doing?"]
    (prompt,) = home.model.requests
    assert "tulips" in "\n".join(m["content"] for m in prompt)
    assert await home.later(timedelta(days=1)) == ["How are the tulips doing?"]
    await home.say(BOB, "/checkin off", name="Bob")
    assert await home.later(timedelta(days=3)) == []
    await home.say(BOB, "/checkin at noon", name="Bob")
    assert home.last(BOB) == texts.CHECKIN_USAGE


# --- the terminal -----------------------------------------------------------------------------


async def test_the_terminal_chat_shows_a_reminder_as_it_falls_due(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    clock = TestClock(START)
    memory = await Memory.open(tmp_path / "t.db", embedder=HashEmbedder(), create=True,
                               clock=clock)
    try:
        bob = await memory.people.add("Bob", telegram_id=BOB)
        model = LineModel(answer="Enjoy it.")
        desk = Desk(texts.REMINDER_WORDS, ZONE)
        reply = await respond(memory, SOUL, model, speaker=bob, chat_id=dm_chat(bob),
                              group=False, text="remind me in 2 minutes to stretch",
                              now=clock(), desk=desk, telegram_chat=BOB)
        assert reply.text == "I'll remind you today at 15:32: stretch" and reply.reminders
        lane = Lane(memory, SOUL, model, texts.REMINDER_WORDS, ZONE, on_telegram=False,
                    only=(bob.person_id, dm_chat(bob)))
        wake = asyncio.Event()
        showing = asyncio.create_task(remind_every(lane, "Wren", "Bob", wake,
                                                   interactive=False, clock=clock))
        await asyncio.sleep(0.05)
        assert capsys.readouterr().out == ""
        clock.advance(timedelta(minutes=2))
        wake.set()  # what a new reminder does; here it stands for the two minutes passing
        for _ in range(100):
            await asyncio.sleep(0.02)
            out = capsys.readouterr().out
            if out:
                break
        showing.cancel()
        await asyncio.gather(showing, return_exceptions=True)
        assert out == "Wren: ⏰ Reminder: Stretch Enjoy it.\n"
        assert await memory.outbox.count_pending() == 0  # shown here, not queued for Telegram
    finally:
        await memory.close()
