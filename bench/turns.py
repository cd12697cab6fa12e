"""Turns through the whole bot: `python -m bench.turns [--members N] [--turns T]`.

Starts the Telegram Bot API emulator (tests/e2e/emulator, `npm ci --prefix tests/e2e/emulator`)
and the test model server, registers N members, runs the real bot (`hearth run`, a separate
process on python-telegram-bot's own HTTP stack), and has every member hold a conversation in
their DM at once: each sends a message, waits for her reply, sends the next. Then it lets the
chats go quiet so the scheduled tick consolidates what is left.

Reported:
- time to first reply: from starting `hearth run` to her answer to a line that was waiting
  for it (loading the embedder, opening the database, Telegram's handshake, the first turn);
- turns/second across all members;
- the bot's own overhead per turn: from the member's send to her reply arriving in the chat,
  minus the time the model server spent on that turn's completion (the server answers at once,
  so this is the bot's work plus the emulator's delivery, measured from outside the bot);
- hearth's in-process pipeline per turn (`pipeline_p50_ms`, `pipeline_p95_ms`): the same
  application in this process, its Bot API answered in memory (tests/bot/telegram_fake.py) and
  a model that answers at once, timed from the update entering the application's update queue
  (where the inbox keeps it) to her reply being accepted by "Telegram" (the outbox marks it
  sent): the inbox, the gate, the turn's transactions, recall, assembly and the outbox, with no
  HTTP and no model time;
- model calls spent on consolidation per 100 turns (one call per batch, not per line).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.recall import percentile
from bench.report import print_report
from memory import Memory, make_embedder
from tests.support.extractor import is_consolidation
from tests.support.model_server import ModelServer, ResponsePlan, household_responder
from tests.support.telegram_emulator import Emulator, TgChat, TgUser

ROOT = Path(__file__).resolve().parents[1]
OWNER_ID = 5000
TICK_SECONDS = 5
WARM_UP = "Hello, are you there?"
LINES = [
    "I am planting {n} tulips along the fence this weekend",
    "My train to work was {n} minutes late again today",
    "I have been reading a novel about {n} lighthouse keepers",
    "Do you think it will rain on day {n} of the holiday?",
    "I am cooking a curry for {n} people on Saturday",
    "My sister is visiting for {n} days next month",
]


class TimedResponder:
    """The household responder, timing each completion it serves."""

    def __init__(self) -> None:
        self.model_s: list[float] = []

    def __call__(self, request: dict[str, Any]) -> ResponsePlan:
        started = time.perf_counter()
        plan = household_responder(request)
        self.model_s.append(time.perf_counter() - started)
        return plan


def _env(emu: Emulator, server: ModelServer, db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HEARTH_", "OPENAI_"))}
    env.update({
        "TELEGRAM_BOT_TOKEN": emu.token,
        "TELEGRAM_BASE_URL": emu.base_url,
        "HEARTH_OWNER_TELEGRAM_ID": str(OWNER_ID),
        "HEARTH_DB": str(db),
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "bench",
        "HEARTH_MODEL": "test-model",
        "HEARTH_TICK_SECONDS": str(TICK_SECONDS),
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": str(ROOT),
    })
    return env


async def _hearth(env: dict[str, str], cwd: Path, *args: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *args, cwd=cwd, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    _, err = await proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"hearth {' '.join(args)} failed: {err.decode().strip()}")


async def _member(emu: Emulator, user: TgUser, turns: int, latencies: list[float]) -> None:
    """One member's conversation: each line sent once her reply to the last has arrived. A
    turn is timed on the emulator's clock, from queueing the line to receiving her reply, so
    how this process learns of the reply adds nothing to it."""
    chat = TgChat.private(user)
    before = len(await emu.bot_messages(chat.id))
    for n in range(turns):
        text = LINES[n % len(LINES)].format(n=n + 1) + f" ({user.first_name} #{n})"
        queued = await emu.send_text_timed(user, chat, text)
        received = await emu.wait_bot_times(chat.id, before + n + 1, timeout=60)
        latencies.append((received[-1] - queued) / 1000)


async def run(members: int, turns: int, embedder: str) -> dict[str, object]:
    responder = TimedResponder()
    with tempfile.TemporaryDirectory(prefix="hearth-bench-") as tmp:
        work = Path(tmp)
        db = work / "hearth.db"
        async with Emulator() as emu, ModelServer(responder) as server:
            env = _env(emu, server, db) | {"HEARTH_EMBEDDER": embedder}
            await _hearth(env, work, "people", "add", "Owner", "--telegram-id", str(OWNER_ID),
                          "--owner")
            users = [TgUser(6000 + i, f"Member{i}") for i in range(members)]
            for user in users:
                await _hearth(env, work, "people", "add", user.first_name, "--telegram-id",
                              str(user.id))
            log = (work / "bot.log").open("wb")
            launched = time.perf_counter()
            bot = subprocess.Popen(  # noqa: ASYNC220 -- a long-lived child, reaped below
                [sys.executable, "-m", "bot.cli", "run"], cwd=work, env=env,
                stdout=subprocess.DEVNULL, stderr=log,
            )
            try:
                warm = TgUser(OWNER_ID, "Owner")
                await emu.send_text(warm, TgChat.private(warm), WARM_UP)
                await emu.wait_for_messages(OWNER_ID, 1, timeout=120)
                first_reply_s = time.perf_counter() - launched
                served_before = len(responder.model_s)
                latencies: list[float] = []
                started = time.perf_counter()
                await asyncio.gather(*(_member(emu, u, turns, latencies) for u in users))
                elapsed = time.perf_counter() - started
                chat_model_s = responder.model_s[served_before:]
                # Let every chat go quiet; the tick then consolidates what is left.
                total = members * turns
                deadline = time.monotonic() + 6 * TICK_SECONDS + 30
                while time.monotonic() < deadline:
                    await asyncio.sleep(1)
                    if await _consolidated(db):
                        break
            finally:
                bot.send_signal(signal.SIGTERM)
                try:
                    bot.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    bot.kill()
                    bot.wait()
                log.close()
            # The owner's warm-up line is not one of the measured turns: its batch is not counted.
            calls = sum(
                is_consolidation(r.get("messages", [])) and WARM_UP not in json.dumps(r)
                for r in server.requests
            )
    model_ms = sorted(s * 1000 for s in chat_model_s[:total])
    mean_model_ms = sum(model_ms) / len(model_ms) if model_ms else 0.0
    overhead = sorted(max(0.0, lat * 1000 - mean_model_ms) for lat in latencies)
    return {
        "bench": "turns",
        "members": members,
        "turns": total,
        "first_reply_s": round(first_reply_s, 2),
        "turns_per_s": round(total / elapsed, 2),
        "overhead_p50_ms": round(percentile(overhead, 0.50), 1),
        "overhead_p95_ms": round(percentile(overhead, 0.95), 1),
        "consolidation_calls_per_100_turns": round(calls * 100 / total, 2),
    }


class _InstantModel:
    """Answers every conversational turn at once, so the pipeline is all that is timed."""

    async def reply(self, messages: list[dict[str, str]], **_: Any) -> str:
        return "Noted: " + " ".join(messages[-1]["content"].split())[:200]

    async def extract(self, messages: list[dict[str, str]], schema: Any) -> Any:
        raise RuntimeError("no extraction in the pipeline benchmark")


async def pipeline(members: int, turns: int, embedder: str) -> list[float]:
    """Milliseconds per turn through the application in this process (see the docstring)."""
    # The bot's stack and the in-memory Bot API are loaded only for this measurement.
    from bot.app import BotConfig, build_application  # noqa: PLC0415
    from soul.files import load_soul  # noqa: PLC0415
    from tests.bot.telegram_fake import FakeTelegram, People, as_update  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="hearth-pipeline-") as tmp:
        memory = await Memory.open(Path(tmp) / "hearth.db", embedder=make_embedder(embedder),
                                   create=True)
        await memory.people.add("Owner", telegram_id=OWNER_ID, owner=True)
        ids = [6000 + i for i in range(members)]
        for n, telegram_id in enumerate(ids):
            await memory.people.add(f"Member{n}", telegram_id=telegram_id)
        replied: dict[int, asyncio.Event] = {i: asyncio.Event() for i in ids}

        class Telegram(FakeTelegram):
            """The in-memory Bot API, waking the member a reply was sent to."""

            def _sendMessage(self, params: dict[str, Any]) -> dict[str, Any]:
                answer = super()._sendMessage(params)
                event = replied.get(int(params["chat_id"]))
                if event is not None:
                    event.set()
                return answer

        telegram = Telegram()
        people = People(telegram)
        app = build_application(
            BotConfig(token="1:pipeline-bench", owner_telegram_id=OWNER_ID,  # noqa: S106 -- a fake
                      tick_seconds=3600),
            memory=memory, soul=load_soul(None), model=_InstantModel(), request=telegram,
        )
        timings: list[float] = []
        try:
            await app.initialize()
            await app.start()

            async def converse(telegram_id: int) -> None:
                for n in range(turns + 1):  # the first turn warms up and is not counted
                    text = LINES[n % len(LINES)].format(n=n + 1) + f" (#{n})"
                    replied[telegram_id].clear()
                    started = time.perf_counter()
                    await app.update_queue.put(as_update(people.message(telegram_id, text), app))
                    await replied[telegram_id].wait()
                    if n:
                        timings.append((time.perf_counter() - started) * 1000)

            await asyncio.gather(*(converse(i) for i in ids))
        finally:
            if app.running:
                await app.stop()
            await app.shutdown()
            await memory.close()
    return sorted(timings)


async def _consolidated(db: Path) -> bool:
    """Whether every line has been consolidated (no scope waits), read as counts only."""
    memory = await Memory.open(db)
    try:
        return not await memory.consolidation.pending_scopes()
    finally:
        await memory.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, nargs="+", default=[3])
    parser.add_argument("--turns", type=int, default=40, help="turns per member")
    parser.add_argument("--embedder", default="e5", choices=["e5", "minilm", "none"])
    args = parser.parse_args()
    results = []
    for members in args.members:
        result = asyncio.run(run(members, args.turns, args.embedder))
        inside = asyncio.run(pipeline(members, args.turns, args.embedder))
        result["pipeline_p50_ms"] = round(percentile(inside, 0.50), 1)
        result["pipeline_p95_ms"] = round(percentile(inside, 0.95), 1)
        results.append(result)
    print_report(results, [("members", "members"), ("turns", "turns"),
                           ("first_reply_s", "1st reply s"),
                           ("turns_per_s", "turns/s"), ("overhead_p50_ms", "p50 ms"),
                           ("overhead_p95_ms", "p95 ms"), ("pipeline_p50_ms", "pipe p50"),
                           ("pipeline_p95_ms", "pipe p95"),
                           ("consolidation_calls_per_100_turns", "cons/100")])


if __name__ == "__main__":
    main()
