"""Hearth seen from outside, for the privacy-promise tests: the `hearth` command run as its own
process, a model that says everything it was given, and what lies on disk.

Nothing of hearth is imported here: a promise is checked the way a member, the owner or
someone holding the files would check it, through the command line, Telegram and the bytes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import sqlite3
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.extractor import (
    extraction_for,
    is_compaction,
    is_consolidation,
    is_judging,
    summary_for,
    verdicts_for,
)
from tests.support.model_server import ResponsePlan

ROOT = Path(__file__).resolve().parents[2]

# The bot's own tick and dream never run during these tests (a tick once an hour, a dream on
# the 31st of February): background work happens only when a test runs `hearth tick`, so what
# a test observes after it is exactly what that tick did.
NO_BACKGROUND = {"HEARTH_TICK_SECONDS": "3600", "HEARTH_DREAM_CRON": "0 3 31 2 *"}

# The prompt surfaces that hold what she remembers or was told, as opposed to who she is.
_RECALLED = ("# What you know about", "# What you remember", "# Possibly related",
             "# The conversation so far", "# Open goals")
REPLY_LIMIT = 3500  # one Telegram message


def hearth_env(db: Path, *, model_url: str | None = None, home: Path | None = None,
               **extra: str) -> dict[str, str]:
    """The environment of a `hearth` process of its own: none of the developer's settings, the
    database given, the default embedder, no background work of its own."""
    keep = {
        k: v for k, v in os.environ.items()
        if not k.startswith(("HEARTH_", "TELEGRAM_", "OPENAI_"))
        and k not in ("PORT", "PYTHONPATH")
    }
    env = {
        **keep,
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
        "HF_HUB_OFFLINE": "1",
        "HEARTH_DB": str(db),
        "HEARTH_EMBEDDER": "e5",
        "OPENAI_API_KEY": "test",
        "HEARTH_MODEL": "test-model",
        **NO_BACKGROUND,
    }
    if model_url is not None:
        env["OPENAI_BASE_URL"] = model_url
    if home is not None:
        env["HOME"] = str(home)
    env.update(extra)
    return env


@dataclass(frozen=True)
class Ran:
    """One finished `hearth` process."""

    argv: tuple[str, ...]
    code: int
    out: str
    err: str

    def ok(self) -> Ran:
        """Itself, after failing the test (with what it printed) unless it exited 0."""
        assert self.code == 0, f"hearth {' '.join(self.argv)} exited {self.code}:\n{self.err}"
        return self


async def hearth(*argv: str, env: dict[str, str], cwd: Path, stdin: str | None = None,
                 timeout: float = 120.0) -> Ran:  # noqa: ASYNC109
    """`hearth ARGV` as a household types it, in its own process; `stdin` is what is typed
    at it. Async, so a model server in the test's event loop keeps answering meanwhile."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *argv, env=env, cwd=cwd,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(
            process.communicate(None if stdin is None else stdin.encode()), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(f"hearth {' '.join(argv)} did not finish in {timeout} s") from None
    return Ran(tuple(argv), int(process.returncode or 0), out.decode(), err.decode())


# --- a candid model ------------------------------------------------------------------------

EARLIER = "Earlier in this chat:"


def _flat(text: str) -> str:
    return " ".join(text.split())


def candid_reply(messages: list[dict[str, Any]]) -> str:
    """Everything a conversation prompt let her remember, said plainly: each line of the
    memory surfaces of the system message (what she knows about the speaker, what she recalled,
    the summary, open goals) on a line of its own, then the earlier lines of the chat on one
    line after EARLIER (so an earlier reply she quotes there is told apart from what she
    recalls now)."""
    recalled: list[str] = []
    earlier: list[str] = []
    for message in messages[:-1]:
        content = str(message.get("content", ""))
        if message.get("role") != "system":
            earlier.append(_flat(content))
            continue
        for section in re.split(r"\n(?=# )", content):
            if section.startswith(_RECALLED):
                recalled += [_flat(line) for line in section.splitlines()[1:] if line.strip()]
    return "\n".join(["I recall:", *recalled, f"{EARLIER} {' / '.join(earlier)}"])


def candid_responder(request: dict[str, Any]) -> ResponsePlan:
    """A model with no discretion at all: consolidation and compaction by rule (as the
    household's model does), and every reply says everything its prompt let it remember. So
    what she says in a chat is what that chat's context could recall."""
    messages = request.get("messages", [])
    if is_consolidation(messages):
        return ResponsePlan(reply=extraction_for(messages))
    if is_compaction(messages):
        return ResponsePlan(reply=summary_for(messages))
    if is_judging(messages):  # no discretion: whatever she was shown, it says, answers
        verdicts = verdicts_for(messages)["verdicts"]
        return ResponsePlan(reply={"verdicts": [{**v, "verdict": "answers"} for v in verdicts]})
    return ResponsePlan(reply=candid_reply(messages)[:REPLY_LIMIT])


def recalled_now(reply: str) -> list[str]:
    """The lines a candid reply recalled for this message: everything before EARLIER."""
    lines = reply.split(EARLIER, 1)[0].splitlines()
    return [line for line in lines[1:] if line.strip()]


# --- what lies on disk -----------------------------------------------------------------------


def files_of(db: Path) -> list[Path]:
    """The database file and every file hearth keeps beside it (-wal, -shm, secret, anchor,
    tombstones, lock...), as they are now."""
    return sorted(p for p in db.parent.iterdir() if p.name.startswith(db.name))


def raw_bytes_of(paths: Iterable[Path]) -> bytes:
    """The bytes of these files as they lie on disk, joined (no SQL, nothing decoded)."""
    return b"".join(p.read_bytes() for p in paths if p.is_file())


def spellings(word: str) -> list[bytes]:
    """The ways a word can lie in SQLite's bytes: UTF-8 in any case, and UTF-16 (either byte
    order) for a database someone opened in a UTF-16 encoding."""
    out = []
    for variant in {word, word.lower(), word.upper(), word.casefold()}:
        out += [variant.encode("utf-8"), variant.encode("utf-16-le"), variant.encode("utf-16-be")]
    return out


def holds(data: bytes, word: str) -> bool:
    return any(s in data for s in spellings(word))


# --- what someone holding the files can do ------------------------------------------------------


def rechain_with_plain_sha256(db: Path, start: int = 1) -> None:
    """What someone who can write the file but not read the install secret can do: recompute
    each receipt's hash from `start` on as a plain SHA-256 chain, linked to the hash before."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        with conn:
            before = conn.execute("SELECT hash FROM receipts WHERE seq = ?",
                                  (start - 1,)).fetchone()
            prev = "0" * 64 if before is None else str(before["hash"])
            rows = conn.execute("SELECT * FROM receipts WHERE seq >= ? ORDER BY seq", (start,))
            for row in rows.fetchall():
                fields = {k: row[k] for k in ("seq", "at", "actor", "activity", "purpose",
                                              "method", "query_digest", "suppressed")}
                fields |= {"returned_ids": json.loads(row["returned_ids"]),
                           "scopes": json.loads(row["scopes"])}
                body = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
                digest = hashlib.sha256(f"{prev}\n{body}".encode()).hexdigest()
                conn.execute("UPDATE receipts SET prev_hash = ?, hash = ? WHERE seq = ?",
                             (prev, digest, row["seq"]))
                prev = digest
    finally:
        conn.close()


def tamper(db: Path, *statements: str) -> None:
    conn = sqlite3.connect(db)
    try:
        with conn:
            for statement in statements:
                conn.execute(statement)
    finally:
        conn.close()
