"""The inbox, the outbox and patient calls, in process: a member's update is kept before it is
handed on, a locked database delays a turn without losing it, a stop cuts a hung turn short
and keeps it, and a reply is sent part by part exactly once whatever Telegram answers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from telegram import Bot

from bot import texts
from bot.app import BotConfig, build_application, resume, serve
from bot.context import HearthApp
from bot.outbox import FINISH_SECONDS, Courier
from bot.replies import split_reply
from bot.request import PatientRequest
from memory import AccessContext, Activity, Delivery, Memory, Role
from soul.files import load_soul
from tests.bot.telegram_fake import FakeTelegram, People, as_update
from tests.bot.test_telegram import FakeModel
from tests.helpers import HashEmbedder, TestClock, raw_bytes

OWNER, BOB, STRANGER = 1001, 1002, 5555
TOKEN = "123456:TEST-token"


class FaultyTelegram(FakeTelegram):
    """The in-process Bot API, answering the next `sendMessage` calls with `faults` first:
    an int is an HTTP status (429 carries retry_after 1; 200 passes), "drop" a connection
    dropped before Telegram took the message, "taken" one dropped after it did."""

    def __init__(self) -> None:
        super().__init__()
        self.faults: list[int | str] = []

    async def do_request(  # noqa: PLR0917 -- BaseRequest's own signature
        self, url: str, method: str, request_data: Any = None, read_timeout: Any = None,
        write_timeout: Any = None, connect_timeout: Any = None, pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        if url.endswith("/sendMessage") and self.faults:
            fault = self.faults.pop(0)
            if fault == 200:  # this one passes
                return await super().do_request(url, method, request_data, read_timeout,
                                                write_timeout, connect_timeout, pool_timeout)
            if fault in ("drop", "taken"):
                from telegram.error import NetworkError  # noqa: PLC0415

                if fault == "taken":  # Telegram has it; its answer is lost on the way back
                    await super().do_request(url, method, request_data, read_timeout,
                                             write_timeout, connect_timeout, pool_timeout)
                raise NetworkError("the connection dropped (test)")
            assert isinstance(fault, int)
            body: dict[str, Any] = {"ok": False, "error_code": fault, "description": "fault"}
            if fault == 429:
                body["parameters"] = {"retry_after": 1}
            return fault, json.dumps(body).encode()
        return await super().do_request(url, method, request_data, read_timeout,
                                        write_timeout, connect_timeout, pool_timeout)

    def delivered(self, chat_id: int) -> list[str]:
        return self.texts(chat_id)


class Sleeps:
    """An injected sleep: records what was asked and returns at once."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)


@pytest.fixture
async def memory(tmp_path: Path) -> AsyncIterator[Memory]:
    from datetime import UTC, datetime  # noqa: PLC0415

    clock = TestClock(datetime(2030, 1, 1, 9, 0, tzinfo=UTC))
    opened = await Memory.open(tmp_path / "hearth.db", embedder=HashEmbedder(), create=True,
                               clock=clock)
    await opened.people.add("Olivia", telegram_id=OWNER, owner=True)
    await opened.people.add("Bob", telegram_id=BOB)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def app(memory: Memory) -> AsyncIterator[tuple[HearthApp, FaultyTelegram, FakeModel]]:
    telegram = FaultyTelegram()
    model = FakeModel()
    application = build_application(
        BotConfig(token=TOKEN, owner_telegram_id=OWNER), memory=memory, soul=load_soul(None),
        model=model, request=telegram, typing_interval=0.02,
    )
    await application.initialize()
    try:
        yield application, telegram, model
    finally:
        if application.running:
            await application.stop()
        await application.shutdown()


async def bob_lines(memory: Memory) -> list[str]:
    bob = await memory.people.by_telegram_id(BOB)
    assert bob is not None
    ctx = AccessContext.for_member(bob.person_id, Activity.MEMBER_INSPECT, "test")
    return [t.text for t in await memory.transcript.lines(ctx) if t.role == Role.USER]


async def until(check: Any, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        assert loop.time() < deadline, "waited too long"
        await asyncio.sleep(0.02)


async def test_a_members_update_is_in_the_inbox_before_it_is_handed_on_and_a_strangers_never(
    app: tuple[HearthApp, FaultyTelegram, FakeModel], memory: Memory
) -> None:
    application, telegram, _ = app
    people = People(telegram)
    first = people.message(BOB, "I grow chillies")
    await application.update_queue.put(as_update(first, application))
    await application.update_queue.put(as_update(
        people.message(STRANGER, "my locker code is pineapple-4471"), application))
    assert application.update_queue.qsize() == 2  # both handed on
    assert await memory.inbox.count_pending() == 1  # only the member's was kept
    await memory.checkpoint()
    assert b"pineapple" not in raw_bytes(memory.path)
    # Telegram delivering the member's update again (its offset was never confirmed) adds
    # nothing: it is already kept and will be answered once.
    await application.update_queue.put(as_update(first, application))
    assert application.update_queue.qsize() == 2


async def test_a_turn_that_meets_a_locked_database_waits_in_the_inbox_and_is_answered_once(
    app: tuple[HearthApp, FaultyTelegram, FakeModel], memory: Memory
) -> None:
    application, telegram, model = app
    hearth = application.bot_data.hearth
    people = People(telegram)
    memory.lock_wait = 0.3
    for text in ("first while locked", "second while locked"):
        await application.update_queue.put(as_update(people.message(BOB, text), application))
    other = sqlite3.connect(memory.path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another program holds the database
    try:
        await application.start()

        async def told() -> bool:
            return texts.TROUBLE_SAVING in telegram.delivered(BOB)

        await until(told)
        await until(lambda: _idle(application))
    finally:
        other.execute("COMMIT")
        other.close()
    assert telegram.delivered(BOB) == [texts.TROUBLE_SAVING]  # once, not once per message
    assert model.requests == []
    assert await memory.inbox.count_pending() == 2

    await resume(application.update_queue, application.bot, hearth)

    async def answered() -> bool:
        return len(telegram.delivered(BOB)) == 3

    await until(answered)
    assert telegram.delivered(BOB)[1:] == [model.answer, model.answer]
    assert await bob_lines(memory) == ["first while locked", "second while locked"]
    assert await memory.inbox.count_pending() == 0
    await resume(application.update_queue, application.bot, hearth)  # nothing left to redo
    await asyncio.sleep(0.1)
    assert len(telegram.delivered(BOB)) == 3


async def _idle(application: HearthApp) -> bool:
    hearth = application.bot_data.hearth
    return hearth.intake is not None and not hearth.intake.durable


async def test_a_stop_cuts_a_hung_turn_short_and_keeps_its_update_for_the_next_start(
    app: tuple[HearthApp, FaultyTelegram, FakeModel], memory: Memory
) -> None:
    application, telegram, model = app
    hearth = application.bot_data.hearth
    model.delay = 60.0  # the model hangs
    await application.start()
    await application.update_queue.put(as_update(People(telegram).message(BOB, "hello?"),
                                                 application))

    async def asked() -> bool:
        return bool(model.requests)

    await until(asked)
    assert hearth.processor is not None
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await hearth.processor.close(0.2) == 1
    await application.stop()
    assert loop.time() - started < 3.0
    assert await memory.inbox.count_pending() == 1  # answered after the next start
    assert await bob_lines(memory) == ["hello?"]  # her line is kept once already


async def test_a_long_reply_that_fails_midway_resumes_at_the_next_part_and_sends_none_twice(
    memory: Memory,
) -> None:
    telegram = FaultyTelegram()
    long_text = "\n\n".join(f"paragraph {n} " + "word " * 700 for n in range(3))
    parts = split_reply(long_text)
    assert len(parts) == 3
    await memory.outbox.queue(Delivery(chat=BOB), long_text)
    bot = Bot(TOKEN, request=PatientRequest(telegram, patience=0.5, sleep=Sleeps()))
    courier = Courier(memory)
    async with bot:
        # The first part goes through; then Telegram answers 502 past the request's patience.
        telegram.faults = [200, *[502] * 20]
        assert await courier.deliver(bot, BOB) is False
        assert telegram.delivered(BOB) == parts[:1]
        (owed,) = await memory.outbox.pending(BOB)
        assert owed.parts_sent == 1
        telegram.faults = []
        assert await courier.deliver(bot, BOB) is True
    assert telegram.delivered(BOB) == parts  # in order, each once
    assert await memory.outbox.pending() == []
    assert len(await memory.outbox.message_ids(owed.reply_id)) == 3


@contextlib.asynccontextmanager
async def greeted(memory: Memory, patience: float
                  ) -> AsyncIterator[tuple[FaultyTelegram, Bot, Courier]]:
    """Bob's chat after one reply Telegram confirmed: the message a lost send is looked for
    above."""
    telegram = FaultyTelegram()
    bot = Bot(TOKEN, request=PatientRequest(telegram, patience=patience, sleep=Sleeps()))
    courier = Courier(memory)
    async with bot:
        await memory.outbox.queue(Delivery(chat=BOB), "Good morning, Bob.")
        assert await courier.deliver(bot, BOB) is True
        yield telegram, bot, courier


async def test_a_reply_telegram_took_before_the_connection_dropped_is_found_not_sent_twice(
    memory: Memory,
) -> None:
    async with greeted(memory, patience=5.0) as (telegram, bot, courier):
        # The next reply reaches Telegram, and the answer to the send is lost on the way back.
        telegram.faults = ["taken"]
        await memory.outbox.queue(Delivery(chat=BOB), "The bakery opens at seven.")
        assert await courier.deliver(bot, BOB) is True
        # Lost before Telegram took it: it is looked for, not found, and sent again.
        telegram.faults = ["drop"]
        await memory.outbox.queue(Delivery(chat=BOB), "And it closes at six.")
        assert await courier.deliver(bot, BOB) is True
    assert telegram.delivered(BOB) == [
        "Good morning, Bob.", "The bakery opens at seven.", "And it closes at six."]
    assert await memory.outbox.pending() == []
    # Looking never changed a message: every edit it asked for was refused.
    assert telegram.sent(method="editMessageText")
    assert telegram._said[(BOB, 1)][0] == "Good morning, Bob."
    assert telegram._said[(BOB, 2)][0] == "The bakery opens at seven."


async def test_a_chat_where_a_message_of_hers_may_be_unknown_is_never_looked_through(
    memory: Memory,
) -> None:
    async with greeted(memory, patience=0.5) as (telegram, bot, courier):
        # Telegram takes the reply, every answer is lost, looking for it cannot tell (a server
        # that does not answer edits as Telegram does), and the send gives up for now: a
        # message of hers now sits in the chat unknown to her.
        telegram.faults = ["taken", *["drop"] * 100_000]
        telegram.fail["editMessageText"] = "Bad Request: not emulated"
        await memory.outbox.queue(Delivery(chat=BOB), "The bakery opens at seven.")
        assert await courier.deliver(bot, BOB) is False
        del telegram.fail["editMessageText"]
        edits = len(telegram.sent(method="editMessageText"))
        # Another message to the chat meets a dropped connection: no edit is tried, since
        # one could change the message she does not know of.
        telegram.faults = ["drop"]
        await bot.send_message(BOB, "A reminder: the dentist at nine.")
        assert len(telegram.sent(method="editMessageText")) == edits
    assert telegram._said[(BOB, 2)][0] == "The bakery opens at seven."
    assert telegram.delivered(BOB)[-1] == "A reminder: the dentist at nine."
    assert telegram.delivered(BOB).count("The bakery opens at seven.") == 1


class SlowAnswerTelegram(FakeTelegram):
    """Takes a sendMessage at once, and answers it only when `answer` is set: the moment
    between Telegram accepting a part and the bot hearing so, held open."""

    def __init__(self) -> None:
        super().__init__()
        self.answer = asyncio.Event()

    async def do_request(  # noqa: PLR0917 -- BaseRequest's own signature
        self, url: str, method: str, request_data: Any = None, read_timeout: Any = None,
        write_timeout: Any = None, connect_timeout: Any = None, pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        answered = await super().do_request(url, method, request_data, read_timeout,
                                            write_timeout, connect_timeout, pool_timeout)
        if url.endswith("/sendMessage"):
            await self.answer.wait()
        return answered


async def taken_unanswered(courier: Courier, bot: Bot, telegram: SlowAnswerTelegram
                           ) -> asyncio.Task[bool]:
    """Bob's delivery, started and awaited until Telegram holds his reply and has not yet
    answered the bot."""
    delivering = asyncio.create_task(courier.deliver(bot, BOB))

    async def taken() -> bool:
        return telegram.texts(BOB) == ["the reply on its way"]

    await until(taken)
    return delivering


async def test_a_stop_while_telegram_answers_a_part_lets_it_be_recorded_so_it_never_goes_twice(
    memory: Memory,
) -> None:
    telegram = SlowAnswerTelegram()
    await memory.outbox.queue(Delivery(chat=BOB), "the reply on its way")
    bot = Bot(TOKEN, request=PatientRequest(telegram, patience=0.5, sleep=Sleeps()))
    courier = Courier(memory)
    async with bot:
        delivering = await taken_unanswered(courier, bot, telegram)
        delivering.cancel()  # the stop, while Telegram's answer is on its way
        asyncio.get_running_loop().call_later(0.1, telegram.answer.set)
        with pytest.raises(asyncio.CancelledError):
            await delivering
        assert await memory.outbox.pending() == [], "the accepted part was not recorded"
        assert await courier.deliver(bot, BOB) is True  # the next start: nothing owed
    assert telegram.texts(BOB) == ["the reply on its way"]


async def test_a_stop_does_not_wait_past_its_bound_for_a_telegram_that_never_answers(
    memory: Memory,
) -> None:
    telegram = SlowAnswerTelegram()  # `answer` is never set
    await memory.outbox.queue(Delivery(chat=BOB), "the reply on its way")
    bot = Bot(TOKEN, request=PatientRequest(telegram, patience=0.5, sleep=Sleeps()))
    async with bot:
        delivering = await taken_unanswered(Courier(memory), bot, telegram)
        loop = asyncio.get_running_loop()
        cancelled_at = loop.time()
        delivering.cancel()
        with pytest.raises(asyncio.CancelledError):
            await delivering
        assert loop.time() - cancelled_at < FINISH_SECONDS + 0.5
    (owed,) = await memory.outbox.pending()  # not known to be accepted: kept, sent again later
    assert owed.parts_sent == 0


async def test_flood_control_is_waited_out_as_telegram_asks_and_a_refusal_is_not_retried(
    memory: Memory,
) -> None:
    telegram = FaultyTelegram()
    sleeps = Sleeps()
    bot = Bot(TOKEN, request=PatientRequest(telegram, patience=30.0, sleep=sleeps))
    async with bot:
        telegram.faults = [429, 502, "drop"]
        await bot.send_message(BOB, "one")
        assert telegram.delivered(BOB) == ["one"]
        assert sleeps.asked[0] == pytest.approx(1.2)  # retry_after 1, and a little slack
        assert len(sleeps.asked) == 3
        telegram.faults = [400]
        from telegram.error import BadRequest  # noqa: PLC0415

        with pytest.raises(BadRequest):
            await bot.send_message(BOB, "two")
        assert len(sleeps.asked) == 3  # a refusal is final: no wait, no retry


async def test_a_restart_answers_what_the_inbox_kept_and_sends_what_the_outbox_owed_once(
    memory: Memory,
) -> None:
    telegram = FaultyTelegram()
    people = People(telegram)
    left = people.message(BOB, "did you get this before the power cut?")
    await memory.inbox.receive(left["update_id"], BOB, json.dumps(left))
    await memory.outbox.queue(Delivery(chat=BOB), "An answer the last run never sent.")
    config = BotConfig(token=TOKEN, owner_telegram_id=OWNER, base_url="http://127.0.0.1:9/bot")
    model = FakeModel()
    application = build_application(config, memory=memory, soul=load_soul(None), model=model,
                                    request=telegram)
    telegram.inbox.append(left)  # Telegram hands it over again: it was never confirmed
    stop = asyncio.Event()
    task = asyncio.create_task(serve(application, config, stop=stop))

    async def both() -> bool:
        return len(telegram.delivered(BOB)) >= 2

    await until(both)
    await asyncio.sleep(0.3)  # time enough for anything doubled to show
    stop.set()
    await asyncio.wait_for(task, timeout=10)
    assert sorted(telegram.delivered(BOB)) == sorted(
        ["An answer the last run never sent.", model.answer]
    )
    assert len(model.requests) == 1
    assert await bob_lines(memory) == ["did you get this before the power cut?"]
    assert await memory.inbox.count_pending() == 0
    assert await memory.outbox.count_pending() == 0


async def _disk_full(memory: Memory, *, full: bool) -> None:
    """SQLite's page limit on the store's own connection stands in for a full disk: a write
    needing a new page fails with the error a full disk gives ("database or disk is full")."""
    conn = memory._store._conn  # the one connection the bot writes through
    if full:
        row = await (await conn.execute("PRAGMA page_count")).fetchone()
        assert row is not None
        await conn.execute(f"PRAGMA max_page_count = {int(row[0])}")
    else:
        await conn.execute("PRAGMA max_page_count = 1073741823")


async def test_on_a_full_disk_the_member_hears_once_the_owner_is_told_and_the_line_waits(
    app: tuple[HearthApp, FaultyTelegram, FakeModel], memory: Memory
) -> None:
    application, telegram, model = app
    people = People(telegram)
    await application.start()
    long_line = "Ça déménage à Évian, " * 190  # more than a page: it needs space to be kept
    await _disk_full(memory, full=True)
    putting = asyncio.ensure_future(
        application.update_queue.put(as_update(people.message(BOB, long_line), application)))
    try:
        async def told() -> bool:
            return (texts.TROUBLE_SAVING in telegram.delivered(BOB)
                    and texts.TROUBLE_SAVING_OWNER in telegram.delivered(OWNER))

        await until(told)
        assert not putting.done()  # still trying: Telegram keeps it meanwhile
        assert await memory.inbox.count_pending() == 0
    finally:
        await _disk_full(memory, full=False)
    await asyncio.wait_for(putting, 30)

    async def answered() -> bool:
        return model.answer in telegram.delivered(BOB)

    await until(answered, timeout=20)
    assert telegram.delivered(BOB) == [texts.TROUBLE_SAVING, model.answer]
    assert telegram.delivered(OWNER) == [texts.TROUBLE_SAVING_OWNER]
    assert await bob_lines(memory) == [long_line]


async def test_on_a_full_disk_a_stranger_hears_nothing(
    app: tuple[HearthApp, FaultyTelegram, FakeModel], memory: Memory
) -> None:
    application, telegram, _ = app
    people = People(telegram)
    await _disk_full(memory, full=True)
    try:
        # A stranger's update is never written, so it passes even now, to the gatekeeper.
        await asyncio.wait_for(application.update_queue.put(
            as_update(people.message(STRANGER, "é" * 5000), application)), 10)
    finally:
        await _disk_full(memory, full=False)
    assert texts.TROUBLE_SAVING not in telegram.delivered(STRANGER)
    assert telegram.delivered(OWNER) == []
