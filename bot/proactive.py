"""The lane she writes first in, on Telegram: one job, armed from the database.

Owns: the one named "proactive" job on the JobQueue. It runs once at start (what fell due
while she was not running goes out first, once, saying it is late), and after every run, and
whenever a member makes or changes a reminder or a setting it depends on, it is armed again at
the lane's next wakeup (`soul.proactive.Lane.next_wakeup`: at most ten minutes away). What the
lane kept is in the outbox already; the courier sends it, and what Telegram does not take yet
(a flood limit, an outage) waits for the resume job, so that changes when, never whether.

Must not: decide anything about a reminder (`soul.proactive` does), or send around the outbox.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from telegram.error import TelegramError

from bot.context import HearthApp, HearthContext
from memory import HearthError, StoreBusy
from soul.proactive import Sent

log = logging.getLogger("hearth.bot")

JOB = "proactive"
# When the lane cannot even say when to look next (the database is busy), it looks again then.
RETRY = timedelta(seconds=15)


async def arm(app: HearthApp, *, at_once: bool = False,
              not_before: timedelta = timedelta(0)) -> None:
    """(Re)arm the one proactive job at the lane's next wakeup (`at_once`: now), and not
    sooner than `not_before` from now (after a failed run, so a fault cannot spin it)."""
    hearth = app.bot_data.hearth
    queue = app.job_queue
    if hearth.lane is None or queue is None:
        return
    now = hearth.now()
    delay = timedelta(0)
    if not at_once:
        try:
            delay = max(await hearth.lane.next_wakeup(now) - now, not_before)
        except HearthError as exc:
            log.warning("the reminder lane looks again in %s: %s", RETRY, exc)
            delay = RETRY
    for job in queue.get_jobs_by_name(JOB):
        job.schedule_removal()
    queue.run_once(run_proactive_job, when=delay.total_seconds(), name=JOB,
                   job_kwargs={"misfire_grace_time": None})


async def send_due(app: HearthApp) -> list[Sent]:
    """What is due now, kept by the lane, then sent by the courier, chat by chat."""
    hearth = app.bot_data.hearth
    if hearth.lane is None:
        return []
    sent = await hearth.lane.run_due(hearth.now())
    if hearth.courier is not None:
        for chat in sorted({s.telegram_chat for s in sent if s.telegram_chat is not None}):
            try:
                await hearth.courier.deliver(app.bot, chat)
            except (HearthError, TelegramError) as exc:
                log.warning("a reminder waits in the outbox (%s); it is sent later",
                            type(exc).__name__)
    return sent


async def run_proactive_job(context: HearthContext) -> None:
    """The job: send what is due, then arm the next run. A stop cancels it at once (what it
    was doing is either kept, and sent after the restart, or not yet, and done again)."""
    hearth = context.hearth
    task = asyncio.current_task()
    if task is not None:
        hearth.background.add(task)
    try:
        await send_due(context.app)
    except asyncio.CancelledError:
        log.info("the reminder lane was stopped; what was due is sent after the restart")
        return
    except StoreBusy as exc:
        log.warning("the reminder lane waits for the database: %s", exc)
    except Exception:  # the lane must never stop the bot
        log.exception("the reminder lane failed")
    finally:
        if task is not None:
            hearth.background.discard(task)
    await arm(context.app)
