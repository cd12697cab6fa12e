"""`hearth doctor`: one line per check of a setup (configuration, database and ledger, soul,
model, embedder), then what to do next."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from bot.settings import Settings
from bot.shell import EXIT_FAIL, EXIT_OK, model_config, say
from memory import HearthError, Memory, make_embedder


async def _doctor_soul_and_model(
    settings: Settings, report: Callable[[str, str], None]
) -> None:
    from soul.embedded import embedded_model_file  # noqa: PLC0415
    from soul.files import load_soul  # noqa: PLC0415 -- only doctor and chat load the soul
    from soul.model import listed_models, with_model  # noqa: PLC0415

    try:
        soul = load_soul(settings.soul_dir)
        report("ok", f"soul {soul.manifest.name}: constitution matches its pin")
    except HearthError as exc:
        report("FAIL", str(exc))
    config = model_config(settings)
    if config is not None:
        try:
            if config.model:
                await listed_models(config)  # reachable, and answering
            else:
                config = await with_model(config)
        except HearthError as exc:
            report("FAIL", f"model: {exc}")
        else:
            report("ok", f"model {config.model} at {config.base_url}")
        return
    try:
        gguf = await asyncio.to_thread(embedded_model_file)
        report("ok", f"model: embedded {gguf.stem} (no OPENAI_BASE_URL set)")
    except HearthError as exc:
        report("note", f"model: {exc}")


async def doctor(settings: Settings, db: Path) -> int:
    """One line per check: ok, note (not needed yet), or FAIL; exit 1 if anything failed. With
    a token configured, one line says how to talk in this terminal again; the last line says
    what to do next."""
    from bot.init import chat_hint  # noqa: PLC0415

    failed = False

    def report(state: str, line: str) -> None:
        nonlocal failed
        failed = failed or state == "FAIL"
        say(f"{state:<4}  {line}")

    report("ok", "configuration: readable")
    token = settings.telegram_bot_token
    has_token = token is not None and bool(token.get_secret_value().strip())
    for name, is_set in (("TELEGRAM_BOT_TOKEN", has_token),
                         ("HEARTH_OWNER_TELEGRAM_ID", settings.owner_telegram_id is not None)):
        report("ok" if is_set else "note",
               f"{name}: set" if is_set else f"{name}: not set (needed by `hearth run`)")
    member = await _doctor_database(db, report)
    await _doctor_soul_and_model(settings, report)
    try:
        embedder = await asyncio.to_thread(make_embedder, settings.embedder)
        if embedder is None:
            report("ok", "embedder: none (keyword-only recall)")
        else:
            # Both ways in: what is stored and what recall asks (e5 may embed them apart).
            shapes = {(await asyncio.to_thread(way, ["hello"])).shape
                      for way in (embedder.embed, embedder.embed_query)}
            report("ok" if shapes == {(1, embedder.dim)} else "FAIL",
                   f"embedder {embedder.name}: loaded offline, {embedder.dim} dimensions")
    except Exception as exc:  # noqa: BLE001 -- any failure to load is one FAIL line
        report("FAIL", f"embedder: {type(exc).__name__}: {exc}")
    if has_token:
        say(chat_hint(member))
    if failed:
        say("next: put right what the FAIL line(s) above say, then `hearth doctor` again")
    elif not has_token or settings.owner_telegram_id is None:
        say("next: `hearth init` asks for the bot token and your Telegram id (until then "
            "`make run` talks with her in this terminal)")
    else:
        say("next: `make run` starts her on Telegram (or `hearth run`)")
    return EXIT_FAIL if failed else EXIT_OK


async def _doctor_database(db: Path, report: Callable[[str, str], None]) -> str | None:
    """The database's and the ledger's lines; the name to chat as (the owner, else the first
    member), when there is one."""
    if not db.exists():  # noqa: ASYNC240 -- one stat
        report("note", f"database: none yet at {db} (`hearth people add NAME --owner` makes it)")
        return None
    try:
        memory = await Memory.open(db)
    except HearthError as exc:
        report("FAIL", f"database: {exc}")
        return None
    try:
        stats = await memory.stats()
        checked, broken = await memory.ledger.verify()
        people = await memory.people.list()
    finally:
        await memory.close()
    report("ok", f"database {db}: {stats['people']} member(s), {stats['beliefs']} "
                 f"belief(s), {stats['turns']} line(s)")
    if broken is None:
        report("ok", f"ledger: {checked} receipt(s) intact")
    else:
        report("FAIL", f"ledger: broken at receipt #{broken[0]}: {broken[1]}")
    owners = [p for p in people if p.is_owner]
    chosen = (owners or people)[:1]
    return chosen[0].name if chosen else None
