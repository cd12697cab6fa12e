"""Nothing a member says is lost, end to end: the real bot process killed in a burst, Telegram
flooding, failing and dropping connections, another program locking the database, and a stop
while the model hangs. Every line is stored once and answered once, whatever happened.

Telegram is the emulator behind `FaultyProxy` (tests/support/telegram_proxy.py), which injects
429 / 502 / dropped connections; the emulator keeps each update until a later offset confirms
it, as Telegram does, so a killed bot is handed its unconfirmed updates again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from memory import AccessContext, Activity, Memory, Role, Turn
from tests.e2e.household import (
    ANA,
    BEN,
    GROUP,
    GROUP_MARKER,
    OLGA,
    HangingConsolidation,
    Launcher,
    Member,
    Telegram,
    consolidations,
    dm_script,
    eventually,
    interleave,
    is_background,
    make_household,
    send_all,
    text_of,
)
from tests.support.model_server import ResponsePlan, household_responder
from tests.support.telegram_emulator import Emulator, TgChat, TgUser
from tests.support.telegram_proxy import Fault, FaultyProxy

TROUBLE_WORDS = "trouble saving things"
APOLOGY_WORDS = "something went wrong"
ANA_FACT = f"my secret nickname is Zephyrine {ANA.marker}"
Script = list[tuple[TgUser, TgChat, str]]


@pytest.fixture
async def proxy(emulator: Emulator) -> AsyncIterator[FaultyProxy]:
    async with FaultyProxy(emulator.root_url) as faulty:
        yield faulty


def via(proxy: FaultyProxy) -> dict[str, str]:
    return {"TELEGRAM_BASE_URL": proxy.base_url}


def slow_conversation(delay_s: float) -> Any:
    """The household's model, taking `delay_s` for every conversational reply."""

    def respond(request: dict[str, Any]) -> ResponsePlan:
        plan = household_responder(request)
        return plan if is_background(request) else dataclasses.replace(plan, delay_s=delay_s)

    return respond


def expected_reply(user: TgUser, chat: TgChat, text: str) -> str:
    names = {m.user.id: m.name for m in (OLGA, ANA, BEN)}
    return f"Noted: {names[user.id]}: {text}" if chat.id == GROUP.id else f"Noted: {text}"


async def replies_since(tg: Telegram, chat: TgChat, before: int) -> list[str]:
    """The bot's answers in `chat` after the first `before` messages, without the notices
    that are not answers (the busy-database notice)."""
    return [t for t in (await tg.texts(chat))[before:] if TROUBLE_WORDS not in t]


async def answered_in_full(tg: Telegram, script: Script, before: dict[int, int]) -> bool:
    for chat in {c.id: c for _, c, _ in script}.values():
        owed = sum(1 for _, c, _ in script if c.id == chat.id)
        if len(await replies_since(tg, chat, before[chat.id])) < owed:
            return False
    return True


async def assert_answered_once_in_order(
    tg: Telegram, script: Script, before: dict[int, int],
    in_flight: dict[int, str] | None = None,
) -> int:
    """Every message answered once, in order; nothing the bot recorded as sent goes out again.
    After a kill, `in_flight` (`replies_in_flight`) names the one reply per chat that may
    arrive twice, right after itself: Telegram can have taken it in the milliseconds before
    the bot wrote that down, and the Bot API cannot be asked whether it did, so it is sent
    again rather than risk losing it. Returns how many replies repeated."""
    in_flight = in_flight or {}
    repeated = 0
    for chat in {c.id: c for _, c, _ in script}.values():
        expected = [expected_reply(u, c, t) for u, c, t in script if c.id == chat.id]
        got = await replies_since(tg, chat, before[chat.id])
        if got != expected and in_flight.get(chat.id) in expected:
            at = expected.index(in_flight[chat.id])
            if got == [*expected[: at + 1], *expected[at:]]:
                repeated += 1
                continue
        assert got == expected, (
            f"chat {chat.id}: {len(got)} answers for {len(expected)} messages "
            f"(missing, doubled or out of order; in flight at a kill: "
            f"{in_flight.get(chat.id)!r})"
        )
    return repeated


async def replies_in_flight(launcher: Launcher) -> dict[int, str]:
    """Per chat, the first reply the outbox still owed when the bot stopped: the only one
    Telegram can have accepted without the bot having recorded it. Read after the stop."""
    memory = await Memory.open(launcher.db)
    try:
        owed: dict[int, str] = {}
        for reply in await memory.outbox.pending():
            owed.setdefault(reply.chat, reply.text)
        return owed
    finally:
        await memory.close()


async def kept_user_lines(launcher: Launcher, members: Sequence[Member]) -> Counter[str]:
    """How often each member line is in the transcript (their DMs and the group), read after
    the bot stopped."""
    memory = await Memory.open(launcher.db)
    try:
        people = {p.name: p for p in await memory.people.list()}
        seen: dict[int, Turn] = {}
        for member in members:
            ctx = AccessContext.for_member(people[member.name].person_id,
                                           Activity.MEMBER_INSPECT, "e2e check")
            for turn in await memory.transcript.lines(ctx, limit=100_000):
                seen[turn.turn_id] = turn
        return Counter(t.text for t in seen.values() if t.role == Role.USER)
    finally:
        await memory.close()


def assert_stored_once(kept: Counter[str], script: Script) -> None:
    for _, _, text in script:
        assert kept[text] == 1, f"{text!r} is kept {kept[text]} times"


async def settle(seconds: float = 2.0) -> None:
    """Wait a little longer, so a doubled answer would have time to show."""
    await asyncio.sleep(seconds)


async def before_counts(tg: Telegram, chats: Sequence[TgChat]) -> dict[int, int]:
    return {chat.id: await tg.count(chat) for chat in chats}


async def test_a_bot_killed_during_a_burst_of_60_answers_every_message_in_order_after_restart(
    hearth: Launcher, tg: Telegram, proxy: FaultyProxy
) -> None:
    hearth.model.switch.inner = slow_conversation(0.25)
    bot = await hearth.start(extra=via(proxy))
    await make_household(tg)
    chats = [OLGA.dm, ANA.dm, BEN.dm]
    script = interleave(*[
        [(m.user, m.dm, f"{m.marker} burst line {n:02d}?") for n in range(20)]
        for m in (OLGA, ANA, BEN)
    ])  # fmt: skip
    assert len(script) == 60
    before = await before_counts(tg, chats)
    await send_all(tg, script)

    async def answered() -> int:
        return sum([len(await replies_since(tg, c, before[c.id])) for c in chats])

    async def some_answered() -> bool:
        return await answered() >= 6

    await eventually(some_answered, timeout=30, what="the first answers of the burst")
    await bot.kill()
    assert bot.returncode == -signal.SIGKILL
    answered_before_kill = await answered()
    assert answered_before_kill < 60, "the burst was answered before the kill; nothing tested"
    in_flight = await replies_in_flight(hearth)

    hearth.model.switch.inner = household_responder
    restarted = await hearth.start(extra=via(proxy))
    await eventually(lambda: answered_in_full(tg, script, before), timeout=90,
                     what="every message of the burst to be answered after the restart")
    await settle()
    repeated = await assert_answered_once_in_order(tg, script, before, in_flight)
    assert await restarted.stop() == 0
    assert_stored_once(await kept_user_lines(hearth, [OLGA, ANA, BEN]), script)
    print(f"{answered_before_kill} of 60 answered before the kill, the rest after the restart;"
          f" {repeated} reply in flight at the kill went out again")


async def test_a_reply_telegram_took_just_before_a_kill_is_sent_again_not_lost(
    hearth: Launcher, tg: Telegram, proxy: FaultyProxy
) -> None:
    bot = await hearth.start(extra=via(proxy))
    await make_household(tg)
    before = await before_counts(tg, [ANA.dm])
    first = (ANA.user, ANA.dm, f"{ANA.marker} kill window line 1?")
    await send_all(tg, [first])
    await eventually(lambda: answered_in_full(tg, [first], before), timeout=30,
                     what="the first line to be answered")
    proxy.inject("sendMessage", Fault.hold())  # Telegram takes the next reply; no answer
    second = (ANA.user, ANA.dm, f"{ANA.marker} kill window line 2?")
    await send_all(tg, [second])

    async def taken_unconfirmed() -> bool:
        return proxy.faults_left("sendMessage") == 0 and await answered_in_full(
            tg, [first, second], before)

    await eventually(taken_unconfirmed, timeout=30,
                     what="Telegram to take the second reply without the bot hearing so")
    await bot.kill()
    in_flight = await replies_in_flight(hearth)
    assert in_flight == {ANA.dm.id: expected_reply(*second)}, "the setup missed the moment"

    restarted = await hearth.start(extra=via(proxy))
    third = (ANA.user, ANA.dm, f"{ANA.marker} kill window line 3?")
    await send_all(tg, [third])
    script = [first, second, third]
    await eventually(lambda: answered_in_full(tg, script, before), timeout=60,
                     what="the third line to be answered after the restart")
    await settle()
    replies = [expected_reply(*line) for line in script]
    assert await replies_since(tg, ANA.dm, before[ANA.dm.id]) == [
        replies[0], replies[1], replies[1], replies[2]
    ], "only the reply in flight at the kill may repeat, once, and nothing may be lost"
    assert await restarted.stop() == 0
    assert_stored_once(await kept_user_lines(hearth, [ANA]), script)


async def test_flood_limits_bad_gateways_and_dropped_connections_deliver_every_reply_once(
    hearth: Launcher, tg: Telegram, proxy: FaultyProxy
) -> None:
    bot = await hearth.start(extra=via(proxy))
    await make_household(tg)
    chats = [ANA.dm, BEN.dm, GROUP]
    before = await before_counts(tg, chats)
    proxy.inject(
        "sendMessage",
        Fault.flood(1), Fault.status(502), Fault.drop(), Fault.flood(2),
        Fault.status(502), Fault.status(502), Fault.drop(), Fault.status(503),
    )
    script: Script = [
        *[(ANA.user, ANA.dm, f"{ANA.marker} flood line {n}?") for n in range(4)],
        *[(BEN.user, BEN.dm, f"{BEN.marker} flood line {n}?") for n in range(3)],
        *[(OLGA.user, GROUP, f"{GROUP_MARKER} flood line {n}?") for n in range(3)],
    ]
    await send_all(tg, interleave(script[:4], script[4:7], script[7:]))
    await eventually(lambda: answered_in_full(tg, script, before), timeout=90,
                     what="every reply through the faults")
    await settle()
    assert proxy.faults_left("sendMessage") == 0, "not every injected fault was met"
    await assert_answered_once_in_order(tg, script, before)
    for chat in chats:
        assert not any(APOLOGY_WORDS in t for t in (await tg.texts(chat))[before[chat.id]:])
    assert await bot.stop() == 0
    assert_stored_once(await kept_user_lines(hearth, [OLGA, ANA, BEN]), script)


async def test_a_reply_telegram_took_before_the_connection_was_cut_is_not_sent_again(
    hearth: Launcher, tg: Telegram, proxy: FaultyProxy
) -> None:
    bot = await hearth.start(extra=via(proxy))
    await make_household(tg)
    before = await before_counts(tg, [ANA.dm, BEN.dm])
    script: Script = [(ANA.user, ANA.dm, f"{ANA.marker} cut line 0?"),
                      (BEN.user, BEN.dm, f"{BEN.marker} cut line 0?")]
    await send_all(tg, script)
    await eventually(lambda: answered_in_full(tg, script, before), timeout=60,
                     what="the first replies")
    # Telegram takes each of the next two replies, and the connection closes before its answer.
    proxy.inject("sendMessage", Fault.cut(), Fault.cut())
    more: Script = [(ANA.user, ANA.dm, f"{ANA.marker} cut line 1?"),
                    (BEN.user, BEN.dm, f"{BEN.marker} cut line 1?"),
                    (ANA.user, ANA.dm, f"{ANA.marker} cut line 2?")]
    await send_all(tg, more)
    script += more
    await eventually(lambda: answered_in_full(tg, script, before), timeout=60,
                     what="every reply through the cuts")
    await settle()
    assert proxy.faults_left("sendMessage") == 0, "not every injected fault was met"
    await assert_answered_once_in_order(tg, script, before)
    assert await bot.stop() == 0


def hold_exclusive_lock(db: str, seconds: float) -> subprocess.Popen[str]:
    """Another program holding the database's write lock (`BEGIN EXCLUSIVE`) for `seconds`."""
    code = (
        "import sqlite3, sys, time\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)\n"
        "c.execute('BEGIN EXCLUSIVE')\n"
        "print('locked', flush=True)\n"
        "time.sleep(float(sys.argv[2]))\n"
        "c.execute('COMMIT')\n"
        "print('released', flush=True)\n"
    )
    return subprocess.Popen([sys.executable, "-c", code, db, str(seconds)],  # noqa: S603 -- our own code
                            stdout=subprocess.PIPE, text=True)


async def test_a_15_second_lock_from_another_program_loses_and_doubles_no_line(
    hearth: Launcher, tg: Telegram, proxy: FaultyProxy
) -> None:
    bot = await hearth.start(extra=via(proxy))
    await make_household(tg)
    chats = [ANA.dm, BEN.dm, GROUP]
    before = await before_counts(tg, chats)
    locker = hold_exclusive_lock(str(hearth.db), 15.0)
    try:
        assert locker.stdout is not None
        line = await asyncio.to_thread(locker.stdout.readline)
        assert line.strip() == "locked"
        locked_at = time.monotonic()
        script: Script = interleave(
            [(ANA.user, ANA.dm, f"{ANA.marker} locked line {n}?") for n in range(4)],
            [(BEN.user, BEN.dm, f"{BEN.marker} locked line {n}?") for n in range(4)],
            [(OLGA.user, GROUP, f"{GROUP_MARKER} locked line {n}?") for n in range(2)],
        )
        await send_all(tg, script)
        await eventually(lambda: answered_in_full(tg, script, before), timeout=120,
                         what="every line sent during the lock to be answered")
        print(f"all answered {time.monotonic() - locked_at:.1f} s after the lock was taken")
    finally:
        await asyncio.to_thread(locker.wait, 30)
        if locker.stdout is not None:
            locker.stdout.close()
    await settle()
    await assert_answered_once_in_order(tg, script, before)
    for chat in chats:
        notices = [t for t in (await tg.texts(chat))[before[chat.id]:] if TROUBLE_WORDS in t]
        assert len(notices) <= 1, f"chat {chat.id} was told about the lock {len(notices)} times"
    assert "Traceback" not in bot.log(), "a lock is not a crash: no traceback in the log"
    assert await bot.stop() == 0
    assert_stored_once(await kept_user_lines(hearth, [OLGA, ANA, BEN]), script)


async def test_sigterm_while_the_model_hangs_stops_within_10_s_and_the_batch_waits(
    hearth: Launcher, tg: Telegram, proxy: FaultyProxy
) -> None:
    model = hearth.model
    hang = HangingConsolidation(delay_s=300.0)
    model.switch.inner = hang
    bot = await hearth.start(extra=via(proxy))
    await make_household(tg)
    script = dm_script(ANA, [ANA_FACT])
    before = await before_counts(tg, [ANA.dm])
    await send_all(tg, script)
    await eventually(lambda: answered_in_full(tg, script, before), timeout=60,
                     what="the batch's lines to be answered")
    await eventually(lambda: bool(consolidations(model.requests)),
                     what="the tick to ask the (hanging) model to consolidate")
    started = time.monotonic()
    code = await bot.stop(timeout=10.0)  # fails the test past 10 s
    took = time.monotonic() - started
    print(f"SIGTERM to exit: {took:.1f} s while the model hung")
    assert code == 0, bot.log()

    hang.on = False
    restarted = await hearth.start(extra=via(proxy))

    async def known() -> bool:
        reply = text_of(await tg.say(ANA.user, ANA.dm, "/me")).lower()
        return "zephyrine" in reply

    await eventually(known, interval=1.0, timeout=60,
                     what="the restarted bot to consolidate the batch the stop left pending")
    assert await restarted.stop() == 0
    assert_stored_once(await kept_user_lines(hearth, [ANA]), script)


async def test_sigterm_while_a_member_waits_on_a_hung_model_stops_in_time_and_answers_later(
    hearth: Launcher, tg: Telegram, proxy: FaultyProxy
) -> None:
    bot = await hearth.start(extra=via(proxy))
    await make_household(tg)
    hearth.model.switch.inner = slow_conversation(300.0)  # her replies hang
    text = f"are you still there {ANA.marker}?"
    before = await before_counts(tg, [ANA.dm])
    asked = len(hearth.model.requests)
    await tg.client.send_text(ANA.user, ANA.dm, text)
    await eventually(lambda: len(hearth.model.requests) > asked,
                     what="her turn to reach the (hanging) model")
    assert await bot.stop(timeout=10.0) == 0  # fails the test past 10 s

    hearth.model.switch.inner = household_responder
    restarted = await hearth.start(extra=via(proxy))
    script: Script = [(ANA.user, ANA.dm, text)]
    await eventually(lambda: answered_in_full(tg, script, before), timeout=30,
                     what="the turn the stop cut short to be answered after the restart")
    await settle()
    await assert_answered_once_in_order(tg, script, before)
    assert await restarted.stop() == 0
    assert_stored_once(await kept_user_lines(hearth, [ANA]), script)
