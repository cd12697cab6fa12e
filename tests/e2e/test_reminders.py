"""A reminder end to end: the real application over python-telegram-bot's own HTTP stack,
against the Telegram emulator, with the real `openai` client against the test model server.

Unlike the other end-to-end tests the bot runs in this process rather than as `hearth run`,
so that its clock can be injected: "in 2 minutes" is two minutes of that clock, not of the
test's wall time. Everything else is as it runs for a household: the inbox, the desk, the one
proactive job on the JobQueue, the outbox and the courier. The test never reads the real clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.app import BotConfig, build_application, serve
from bot.context import HearthApp
from bot.proactive import arm
from memory import Memory
from soul.files import load_soul
from soul.model import Gateway, model_config_from, with_model
from tests.e2e.household import OLGA, Model, Telegram, text_of
from tests.helpers import TestClock
from tests.support.telegram_emulator import Emulator

# Tuesday 1 December 2026, 15:30 in Berlin.
START = datetime(2026, 12, 1, 14, 30, tzinfo=UTC)
QUIET_S = 1.0  # how long "nothing more arrives" is watched for


@asynccontextmanager
async def running(emulator: Emulator, tg: Telegram, model: Model, db: Path,
                  clock: TestClock) -> AsyncIterator[HearthApp]:
    """The bot, serving this test's token until the block ends; then everything closed."""
    memory = await Memory.open(db, create=True, clock=clock)
    config = BotConfig(token=tg.token, owner_telegram_id=OLGA.user.id,
                       base_url=emulator.base_url, timezone="Europe/Berlin")
    gateway = Gateway(await with_model(model_config_from(model.base_url, "test", "test-model")))
    app = build_application(config, memory=memory, soul=load_soul(None), model=gateway,
                            clock=clock)
    stop = asyncio.Event()
    ready = asyncio.Event()
    serving = asyncio.create_task(serve(app, config, stop=stop,
                                        on_ready=lambda _: ready.set()))
    try:
        await asyncio.wait_for(ready.wait(), 30)
        yield app
    finally:
        stop.set()
        await asyncio.wait_for(serving, 15)
        await gateway.aclose()
        await memory.close()


async def _quiet(tg: Telegram, count: int) -> None:
    await asyncio.sleep(QUIET_S)
    assert await tg.count(OLGA.dm) == count, await tg.texts(OLGA.dm)


async def test_remind_me_in_two_minutes_is_confirmed_then_delivered_in_the_dm_once(
    emulator: Emulator, tg: Telegram, model: Model, tmp_path: Path,
) -> None:
    clock = TestClock(START)
    db = tmp_path / "hearth.db"
    async with running(emulator, tg, model, db, clock) as app:
        confirm = await tg.say(OLGA.user, OLGA.dm, "remind me in 2 minutes to stretch")
        assert text_of(confirm) == "I'll remind you today at 15:32: stretch"
        confirmed = await tg.count(OLGA.dm)

        clock.advance(timedelta(minutes=1))
        await arm(app, at_once=True)  # the lane looks: nothing is due yet
        await _quiet(tg, confirmed)

        clock.advance(timedelta(minutes=1))
        await arm(app, at_once=True)  # the job's own wakeup, on the injected clock
        reminder = await tg.wait_for(OLGA.dm, "⏰ Reminder: Stretch", after=confirmed)
        assert text_of(reminder).startswith("⏰ Reminder: Stretch\n")  # and a line of hers
        await arm(app, at_once=True)
        await _quiet(tg, confirmed + 1)

    # A restart an hour later: rebuilt from the database, nothing is sent again.
    clock.advance(timedelta(hours=1))
    async with running(emulator, tg, model, db, clock) as app:
        await arm(app, at_once=True)
        await _quiet(tg, confirmed + 1)
    texts = await tg.texts(OLGA.dm)
    assert sum("Reminder: Stretch" in t for t in texts) == 1
    everything = await tg.client.history()
    assert sum("Reminder: Stretch" in str(update) for update in everything) == 1
