"""The Telegram application: handlers in order, the command menu, the tick and the dream, and
running it until a signal.

Owns: `build_application` (python-telegram-bot wired to hearth's services: the gatekeeper in
handler group -1, then commands, conversation, buttons and the rest in group 0; one error
handler; per-chat ordering; the named "tick", "dream" and "proactive" jobs) and `serve` (long
polling, or a webhook, until SIGINT/SIGTERM or a stop event). Must not: open or close memory,
the soul or the model: the caller builds them before and closes them after, so no handler ever
runs on a closed resource.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import signal
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from importlib.util import find_spec
from typing import Protocol

from apscheduler.triggers.cron import CronTrigger  # type: ignore[import-untyped]  # APScheduler 3 ships no type hints
from telegram import Bot, Update
from telegram.error import TelegramError
from telegram.ext import ApplicationBuilder, JobQueue, MessageHandler, TypeHandler, filters
from telegram.request import BaseRequest, HTTPXRequest

from bot import handlers, texts
from bot.commands import announce_commands, button_handler, command_handlers
from bot.context import CONTEXT_TYPES, Hearth, HearthApp, HearthContext
from bot.inbox import DurableQueue, Intake, resume_pending
from bot.ordering import ChatOrderedProcessor
from bot.outbox import Courier
from bot.proactive import JOB as PROACTIVE_JOB
from bot.proactive import run_proactive_job
from bot.request import PatientRequest
from bot.settings import ConfigError, Settings
from bot.sightings import Sightings
from memory import MAX_TURN_CHARS, HearthError, Memory, Role, StoreBusy, utc_now
from soul import tick as soul_tick
from soul.files import Soul
from soul.model import ModelError
from soul.proactive import Lane
from soul.reminders import Desk
from soul.senses import Senses
from soul.tick import TickModel

log = logging.getLogger("hearth.bot")

GATE_GROUP = -1
DEFAULT_WEBHOOK_PORT = 8443
# Updates hearth answers; anything else (inline queries, polls, reactions) is never fetched.
ALLOWED_UPDATES = [
    Update.MESSAGE,
    Update.EDITED_MESSAGE,
    Update.CALLBACK_QUERY,
]
# Polling a local Bot API server or an emulator: a long-polling one (ours, telegram-bot-api)
# holds getUpdates open, but one that answers at once would be asked in a busy loop without a
# pause. 20 ms bounds that to 50 polls a second; 100 ms doubled a turn's overhead (bench.turns).
LOCAL_POLL_INTERVAL = 0.02
# How often updates left in the inbox (a locked database) and replies left in the outbox (a
# flood limit, Telegram down) are tried again.
RESUME_SECONDS = 15
# A stop gives running turns this long to finish, then cancels them (they stay in the inbox):
# with the updater's stop and the close, a SIGTERM ends within 10 s whatever the model does.
STOP_GRACE_SECONDS = 4.0
# The updater's last poll (it confirms what was received) waits at most this long.
UPDATER_STOP_SECONDS = 3.0
_CONNECTION_POOL = 256


@dataclass(frozen=True)
class BotConfig:
    """What the Telegram face needs from the settings."""

    token: str = field(repr=False)
    owner_telegram_id: int
    base_url: str | None = None
    webhook_url: str | None = None
    webhook_port: int = DEFAULT_WEBHOOK_PORT
    tick_seconds: int = 300
    dream_cron: str = "0 3 * * *"
    timezone: str = "UTC"  # the household's; members may set their own
    # What the configured server hears and sees with (None: she cannot, on this setup; the
    # embedded model never can).
    audio_model: str | None = None
    vision_model: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> BotConfig:
        """The bot's config; ConfigError (one line) when the token or the owner is missing."""
        if settings.telegram_bot_token is None or not (
            settings.telegram_bot_token.get_secret_value().strip()
        ):
            raise ConfigError(
                "TELEGRAM_BOT_TOKEN is not set: get one from @BotFather (or run `hearth init`)"
            )
        if settings.owner_telegram_id is None:
            raise ConfigError(
                "HEARTH_OWNER_TELEGRAM_ID is not set: the owner's numeric Telegram id "
                "(or run `hearth init`)"
            )
        return cls(
            token=settings.telegram_bot_token.get_secret_value().strip(),
            owner_telegram_id=settings.owner_telegram_id,
            base_url=settings.telegram_base_url,
            webhook_url=settings.webhook_url,
            webhook_port=settings.webhook_port,
            tick_seconds=settings.tick_seconds,
            dream_cron=settings.dream_cron,
            timezone=settings.household_zone,
            audio_model=_named(settings.audio_model) if settings.openai_base_url else None,
            vision_model=_named(settings.vision_model) if settings.openai_base_url else None,
        )

    @property
    def base_file_url(self) -> str | None:
        """Where files are fetched: the base URL with `/bot` replaced by `/file/bot`."""
        if self.base_url is None:
            return None
        head, sep, tail = self.base_url.rstrip("/").rpartition("/bot")
        return f"{head}/file/bot{tail}" if sep else self.base_url.rstrip("/") + "/file/bot"

    @property
    def webhook_path(self) -> str:
        """A secret URL path derived from the token, so only Telegram knows where to post."""
        return hashlib.sha256(b"hearth-webhook-path:" + self.token.encode()).hexdigest()[:32]

    @property
    def webhook_secret(self) -> str:
        """The header Telegram sends with every webhook post (checked by python-telegram-bot)."""
        return hashlib.sha256(b"hearth-webhook-secret:" + self.token.encode()).hexdigest()


def _named(model: str | None) -> str | None:
    return (model or "").strip() or None


def build_application(
    config: BotConfig,
    *,
    memory: Memory,
    soul: Soul,
    model: TickModel,
    request: BaseRequest | None = None,
    clock: Callable[[], datetime] = utc_now,
    typing_interval: float = 4.0,
) -> HearthApp:
    """The application, wired to already-open services. `request` replaces the HTTP stack for
    every Bot API call (tests pass an in-process fake)."""
    logging.getLogger("httpx").setLevel(logging.WARNING)  # its request lines carry the token
    jobs: JobQueue[HearthContext] = JobQueue()
    queue = DurableQueue()
    sightings = Sightings()  # what the sends and the intake know of each chat's messages
    intake = Intake(memory, config.owner_telegram_id, sightings)
    queue.intake = intake
    processor = ChatOrderedProcessor(on_done=intake.finish, on_abandon=intake.abandon)
    builder = (
        ApplicationBuilder()
        .token(config.token)
        .context_types(CONTEXT_TYPES)
        .job_queue(jobs)
        .update_queue(queue)
        .concurrent_updates(processor)
        .post_init(announce_commands)
    )
    if config.base_url is not None:
        builder = builder.base_url(config.base_url.rstrip("/"))
        builder = builder.base_file_url(config.base_file_url or "")
    # Every call but getUpdates waits out flood control and passing trouble (bot.request).
    if request is not None:
        builder = builder.request(PatientRequest(request, sightings=sightings))
        builder = builder.get_updates_request(request)
    else:
        builder = builder.request(
            PatientRequest(HTTPXRequest(connection_pool_size=_CONNECTION_POOL),
                           sightings=sightings)
        )
    app = builder.build()
    queue.tell = app.bot.send_message
    app.bot_data.bind(
        Hearth(memory=memory, soul=soul, model=model, owner_telegram_id=config.owner_telegram_id,
               clock=clock, typing_interval=typing_interval,
               quiet_after=timedelta(seconds=config.tick_seconds),
               intake=intake, courier=Courier(memory), processor=processor,
               desk=Desk(texts.REMINDER_WORDS, config.timezone),
               senses=Senses(model, audio_model=config.audio_model,
                             vision_model=config.vision_model),
               lane=Lane(memory, soul, model, texts.REMINDER_WORDS, config.timezone))
    )
    add_handlers(app)
    schedule_jobs(app, config)
    return app


def add_handlers(app: HearthApp) -> None:
    """The gatekeeper first (group -1), then one handler per kind of update (group 0)."""
    app.add_handler(TypeHandler(Update, handlers.gatekeeper), group=GATE_GROUP)
    app.add_handlers(command_handlers())
    new = filters.UpdateType.MESSAGE
    app.add_handlers(
        [
            MessageHandler(new & filters.COMMAND, handlers.unknown_command),
            MessageHandler(new & filters.TEXT, handlers.chat),
            MessageHandler(new & filters.Document.ALL, handlers.document),
            MessageHandler(new & (filters.VOICE | filters.AUDIO | filters.PHOTO), handlers.media),
            MessageHandler(new & ~filters.TEXT & ~filters.StatusUpdate.ALL, handlers.non_text),
            MessageHandler(filters.UpdateType.EDITED_MESSAGE, handlers.edited),
            button_handler(),
        ]
    )
    app.add_error_handler(handlers.on_error)


def schedule_jobs(app: HearthApp, config: BotConfig) -> None:
    """The named "tick", "dream", "resume" and "proactive" jobs, replacing any earlier ones of
    the same name. The proactive lane's first run is at start (what fell due meanwhile goes
    out then); each run arms the next from the database (`bot.proactive`).

    A run never overlaps the previous one; missed tick runs are coalesced into one.
    """
    queue = app.job_queue
    if queue is None:
        raise ConfigError("the job queue is missing: install python-telegram-bot[job-queue]")
    try:
        trigger = CronTrigger.from_crontab(config.dream_cron)
    except ValueError as exc:
        raise ConfigError(f"bad configuration: HEARTH_DREAM_CRON: {exc}") from None
    for name in ("tick", "dream", "resume", "media", PROACTIVE_JOB):
        for job in queue.get_jobs_by_name(name):
            job.schedule_removal()
    queue.run_once(run_proactive_job, when=0, name=PROACTIVE_JOB,
                   job_kwargs={"misfire_grace_time": None})
    queue.run_repeating(
        run_resume_job,
        interval=RESUME_SECONDS,
        first=RESUME_SECONDS,
        name="resume",
        job_kwargs={"max_instances": 1, "coalesce": True},
    )
    queue.run_repeating(
        run_tick_job,
        interval=config.tick_seconds,
        first=config.tick_seconds,
        name="tick",
        job_kwargs={"max_instances": 1, "coalesce": True},
    )
    queue.run_custom(
        run_dream_job, job_kwargs={"trigger": trigger, "max_instances": 1}, name="dream"
    )
    if config.audio_model is not None or config.vision_model is not None:
        queue.run_repeating(
            run_media_job,
            interval=config.tick_seconds,
            first=min(config.tick_seconds, RESUME_SECONDS),
            name="media",
            job_kwargs={"max_instances": 1, "coalesce": True},
        )


MEDIA_PER_RUN = 10


async def run_media_job(context: HearthContext) -> None:
    """Voice notes and photos that waited (no server could take them in when they came, or it
    failed): each heard or seen now and kept as its sender's line in its chat, marked with the
    day it was sent; no reply, since the moment has passed. A file Telegram or the server
    cannot give now is tried again at the next run, a few times at most."""
    hearth = context.hearth
    senses = hearth.senses
    for waiting in await hearth.memory.media.waiting(senses.kinds, limit=MEDIA_PER_RUN):
        try:
            data = bytes(await (await context.bot.get_file(waiting.file_id))
                         .download_as_bytearray())
            line = await senses.take_in(waiting.kind, data, filename="voice.ogg",
                                        mime="image/jpeg")
        except (TelegramError, ModelError) as exc:
            log.warning("a waiting %s could not be taken in: %s", waiting.kind,
                        type(exc).__name__)
            await hearth.memory.media.failed(waiting.media_id)
            continue
        sent = datetime.fromisoformat(waiting.at).date().isoformat()
        await hearth.memory.transcript.append(
            chat_id=waiting.chat_id, speaker_id=waiting.speaker_id, role=Role.USER,
            scope=waiting.scope, text=f"(sent {sent}) {line}"[:MAX_TURN_CHARS])
        await hearth.memory.media.done(waiting.media_id)
        log.info("a waiting %s was taken in", waiting.kind)


async def run_tick_job(context: HearthContext) -> None:
    """One tick: consolidation and compaction (see `_background_work`)."""
    hearth = context.hearth

    async def tick() -> Reported:
        return await soul_tick.tick(hearth.memory, hearth.soul, hearth.model, now=hearth.now(),
                                    quiet_after=hearth.quiet_after)

    await _background_work(hearth, "tick", tick)


async def run_dream_job(context: HearthContext) -> None:
    """The nightly dream (see `_background_work`)."""
    hearth = context.hearth

    async def dream() -> Reported:
        return await soul_tick.run_dream(hearth.memory, hearth.soul, now=hearth.now())

    await _background_work(hearth, "dream", dream)


class Reported(Protocol):
    def lines(self) -> list[str]: ...


async def _background_work(hearth: Hearth, name: str,
                           work: Callable[[], Awaitable[Reported]]) -> None:
    """Run the tick or the dream: its report logged line by line. A failure is logged and
    waits for the next run (a busy database in one line, anything else with its traceback);
    a stop cancels it at once, and what it was doing stays pending (the watermark moves only
    with results)."""
    with _background(hearth, name):
        try:
            report = await work()
        except StoreBusy as exc:  # another program holds the database: the work waits
            log.warning("the %s waits for its next run: %s", name, exc)
            return
        except Exception:  # background work must never stop the bot
            log.exception("the %s failed", name)
            return
        for line in report.lines():
            log.info("%s: %s", name, line)


async def run_resume_job(context: HearthContext) -> None:
    """Updates the inbox still holds and replies the outbox still owes, tried again; a stop
    cancels it like the tick (an owed reply stays owed)."""
    with _background(context.hearth, "resume"):
        await resume(context.application.update_queue, context.bot, context.hearth)


async def resume(queue: asyncio.Queue[object], bot: Bot, hearth: Hearth) -> None:
    """Work on what a crash, a lock or a flood left behind: pending updates go back to the
    application (per chat in order), owed replies are sent. Failures wait for the next try."""
    await resume_inbox(queue, bot, hearth)
    await send_owed(bot, hearth)
    try:
        await hearth.memory.inbox.prune()
    except HearthError as exc:
        log.warning("pruning the inbox failed (%s); trying again later", exc)


async def resume_inbox(queue: asyncio.Queue[object], bot: Bot, hearth: Hearth) -> None:
    """Pending updates nobody works on go back to the application, oldest first."""
    try:
        if isinstance(queue, DurableQueue) and hearth.intake is not None:
            await resume_pending(queue, hearth.intake, bot)
    except HearthError as exc:
        log.warning("resuming pending updates failed (%s); trying again later", exc)


async def send_owed(bot: Bot, hearth: Hearth) -> None:
    """Every chat's owed replies; what Telegram still does not take waits for the next try."""
    try:
        if hearth.courier is not None:
            await hearth.courier.deliver_all(bot)
    except (HearthError, TelegramError) as exc:
        log.warning("sending owed replies failed (%s); trying again later", exc)


async def _deliver_owed(bot: Bot, hearth: Hearth) -> None:
    with _background(hearth, "delivery of owed replies"):
        await send_owed(bot, hearth)


@contextlib.contextmanager
def _background(hearth: Hearth, name: str) -> Iterator[None]:
    """Register the running task, so a stop can cancel it; a cancel ends it quietly."""
    task = asyncio.current_task()
    if task is not None:
        hearth.background.add(task)
    try:
        yield
    except asyncio.CancelledError:
        log.info("the %s was stopped; what it was doing stays pending", name)
    finally:
        if task is not None:
            hearth.background.discard(task)


async def stop_background(hearth: Hearth, timeout: float = 2.0) -> None:  # noqa: ASYNC109
    """Cancel the tick and the dream if they run, and wait briefly for them to end."""
    running = set(hearth.background)
    for task in running:
        task.cancel()
    if running:
        await asyncio.wait(running, timeout=timeout)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[asyncio.Event]:
    """An event set by SIGINT or SIGTERM while the block runs (where the platform allows)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
    try:
        yield stop
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


async def serve(
    app: HearthApp,
    config: BotConfig,
    *,
    stop: asyncio.Event | None = None,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Run until `stop` is set (without one: until SIGINT/SIGTERM): initialise, set the
    command menu, start polling (or the webhook), and on the way out stop in reverse order."""
    if stop is None:
        with stop_on_signals() as signalled:
            await serve(app, config, stop=signalled, on_ready=on_ready)
        return
    hearth = app.bot_data.hearth
    async with app:
        if app.post_init is not None:
            await app.post_init(app)
        try:
            await app.start()
            # What the last run left: its updates first, in order, before any new one; its
            # owed replies on the side, so a flooding Telegram cannot hold up the start.
            await resume_inbox(app.update_queue, app.bot, hearth)
            app.create_task(_deliver_owed(app.bot, hearth), name="hearth:owed-replies")
            await _receive(app, config)
            if on_ready is not None:
                on_ready(app.bot.username)
            await stop.wait()
        finally:
            await _stop(app, hearth)


async def _stop(app: HearthApp, hearth: Hearth) -> None:
    """Stop within 10 s whatever Telegram and the model are doing: at once, no
    new turn starts, the tick and the dream are cancelled and running turns get a grace
    period before they are cancelled too (every one of them stays in the inbox); meanwhile
    the updater stops receiving (bounded: Telegram may be unreachable). Then the rest."""
    closing = (
        asyncio.create_task(hearth.processor.close(STOP_GRACE_SECONDS))
        if hearth.processor is not None
        else None
    )
    background = asyncio.create_task(stop_background(hearth))
    if app.updater is not None and app.updater.running:
        try:
            await asyncio.wait_for(app.updater.stop(), UPDATER_STOP_SECONDS)
        except TimeoutError:
            log.warning("Telegram did not answer the last poll in time; its updates come again")
    await background
    if closing is not None:
        cut = await closing
        if cut:
            log.info("stopped %d unfinished turn(s); they are answered after the restart", cut)
    if app.running:
        await app.stop()


def _polling_failed(exc: TelegramError) -> None:
    # The updater retries by itself; one line, not a traceback per attempt while offline.
    log.warning("polling for updates failed: %s", exc)


async def _receive(app: HearthApp, config: BotConfig) -> None:
    updater = app.updater
    if updater is None:
        raise ConfigError("the application has no updater to receive updates with")
    if config.webhook_url is None:
        await updater.start_polling(
            poll_interval=LOCAL_POLL_INTERVAL if config.base_url else 0.0,
            allowed_updates=ALLOWED_UPDATES,
            drop_pending_updates=False,
            error_callback=_polling_failed,
        )
        return
    if find_spec("tornado") is None:
        raise ConfigError(
            "HEARTH_WEBHOOK_URL needs the webhook server: pip install "
            "'python-telegram-bot[webhooks]' (or unset it to use long polling)"
        )
    path = config.webhook_path
    await updater.start_webhook(
        listen="0.0.0.0",  # noqa: S104 -- the webhook must be reachable from Telegram
        port=config.webhook_port,
        url_path=path,
        webhook_url=f"{config.webhook_url.rstrip('/')}/{path}",
        secret_token=config.webhook_secret,
        allowed_updates=ALLOWED_UPDATES,
        drop_pending_updates=False,
    )
