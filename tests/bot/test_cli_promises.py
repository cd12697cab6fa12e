"""The household's privacy promises, checked at the terminal: `hearth` commands as the owner
types them (its `main`, and `hearth chat` in a process of its own, fed through a pipe), and
what they leave read as bytes on disk or tampered with through sqlite3, the way someone
holding the files would. No memory API is called. Each promise is checked beside a positive
control that makes the same check see the thing where it must be seen.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import shutil
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.cli import main
from tests.support.model_server import ModelServer, household_responder
from tests.support.outside import (
    Ran,
    files_of,
    hearth_env,
    holds,
    raw_bytes_of,
    rechain_with_plain_sha256,
    tamper,
)
from tests.support.outside import hearth as run_hearth

_SETTINGS = ("HEARTH_", "OPENAI_", "TELEGRAM_")


def _only_these_settings(monkeypatch: pytest.MonkeyPatch, where: Path, **settings: str) -> None:
    """The terminal's environment: none of the developer's hearth settings (nor a .env), only
    keyword recall, and `settings`."""
    import os  # noqa: PLC0415

    for name in [n for n in os.environ if n.startswith(_SETTINGS)]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(where)
    for name, value in {"HEARTH_EMBEDDER": "none", **settings}.items():
        monkeypatch.setenv(name, value)


@dataclass
class Terminal:
    """The owner's terminal over one database. A command runs `hearth`'s `main` on a thread of
    its own (it runs its own event loop, while this test's keeps the model server answering);
    `chat` runs `hearth chat` as its own process, its input piped."""

    db: Path
    cwd: Path
    model_url: str
    capsys: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch

    async def __call__(self, *argv: str, stdin: str | None = None, check: bool = True) -> Ran:
        self.monkeypatch.setattr("sys.stdin", io.StringIO(stdin or ""))
        code = await asyncio.to_thread(main, [*argv, "--db", str(self.db)])
        out, err = self.capsys.readouterr()
        ran = Ran(argv, code, out, err)
        return ran.ok() if check else ran

    async def chat(self, name: str, *lines: str) -> list[str]:
        """`name` says each line to her in their private chat; her replies, one per line."""
        env = hearth_env(self.db, model_url=self.model_url, home=self.cwd)
        ran = await run_hearth("chat", "--as", name, env=env, cwd=self.cwd,
                               stdin="".join(f"{line}\n" for line in lines))
        return ran.ok().out.splitlines()

    def bytes_on_disk(self) -> bytes:
        return raw_bytes_of(files_of(self.db))


@pytest.fixture
async def terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                   monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Terminal]:
    async with ModelServer(household_responder) as model:  # her replies quote what they answer
        _only_these_settings(monkeypatch, tmp_path, OPENAI_BASE_URL=model.base_url,
                             OPENAI_API_KEY="test", HEARTH_MODEL="test-model")
        yield Terminal(tmp_path / "home.db", tmp_path, model.base_url, capsys, monkeypatch)


@pytest.fixture
async def household(terminal: Terminal) -> Terminal:
    """Olivia (the owner), Bob and Alice."""
    await terminal("people", "add", "Olivia", "--telegram-id", "1001", "--owner")
    await terminal("people", "add", "Bob", "--telegram-id", "1002")
    await terminal("people", "add", "Alice", "--telegram-id", "1003")
    return terminal


# --- forgetting is complete ------------------------------------------------------------------


@pytest.mark.parametrize("consolidated", [False, True], ids=["before any tick", "once a note"])
async def test_hearth_forget_shows_what_will_go_and_n_keeps_every_byte_while_y_leaves_none(
    household: Terminal, consolidated: bool
) -> None:
    terminal = household
    replies = await terminal.chat("Bob", "I buried the time capsule under the Wollemi pine",
                                  "I keep the garden shears in the Juniperus box")
    assert "Wollemi" in replies[0]  # her reply quotes the words too
    if consolidated:
        await terminal("tick")
        assert "Wollemi pine" in (await terminal("inspect", "--as", "Bob")).out

    kept = await terminal("forget", "--as", "Bob", "Wollemi", stdin="n\n")
    assert "[y/N]" in kept.out and "kept: nothing was forgotten" in kept.out
    if consolidated:
        assert "Bob buried the time capsule under the Wollemi pine" in kept.out  # the preview
    else:
        assert "2 thing(s) said mention it" in kept.out and "Wollemi" not in kept.out
    assert holds(terminal.bytes_on_disk(), "Wollemi")  # "n" kept it: the byte check sees it

    gone = await terminal("forget", "--as", "Bob", "Wollemi", stdin="y\n")
    assert f"forgot {int(consolidated)} belief(s)" in gone.out
    on_disk = terminal.bytes_on_disk()
    assert holds(on_disk, "Juniperus") and not holds(on_disk, "Wollemi")
    copy = terminal.cwd / "after.db"
    await terminal("backup", str(copy))
    backed_up = raw_bytes_of(files_of(copy))
    assert holds(backed_up, "Juniperus") and not holds(backed_up, "Wollemi")
    exported = (await terminal("export", "--as", "Bob")).out
    assert "Juniperus" in exported and "Wollemi" not in exported  # her replies are scrubbed too

    await terminal("tick")
    inspected = (await terminal("inspect", "--as", "Bob")).out
    assert "Juniperus" in inspected and "Wollemi" not in inspected
    assert not holds(terminal.bytes_on_disk(), "Wollemi")


# --- sensitivity beyond English --------------------------------------------------------------

CARD = "5425\u202f2334\u202f3010\u202f9903"  # a Mastercard number (Luhn-valid), narrow spaces


def card_in(data: bytes) -> bool:
    # Eight digits at least: four alone turn up by chance (a timestamp's microseconds held
    # "5425" once and failed CI).
    return any(piece in data for piece in (b"5425\xe2\x80\xaf2334", b"54252334",
                                           b"3010\xe2\x80\xaf9903", b"30109903",
                                           "3010\u202f9903".encode("utf-16-le")))


async def test_a_card_number_with_narrow_no_break_spaces_is_refused_as_a_note_and_masked_in_a_line(
    household: Terminal,
) -> None:
    terminal = household
    refused = await terminal("remember", "--as", "Alice", f"my card is {CARD}", check=False)
    assert refused.code == 1 and "not stored" in refused.err
    assert not card_in((refused.out + refused.err).encode())  # refused without an echo
    # Said in a chat, the line is kept with the number masked, and so is her reply quoting it.
    await terminal.chat("Alice", f"my new card is {CARD}, the Cardamom one")
    exported = json.loads((await terminal("export", "--as", "Alice")).out)
    said = {t["role"]: t["text"] for t in exported["transcript"]}
    assert said == {"user": "my new card is [masked card_number], the Cardamom one",
                    "assistant": "Noted: my new card is [masked card_number], the Cardamom one"}
    await terminal("tick")
    assert "Cardamom" in (await terminal("inspect", "--as", "Alice")).out
    on_disk = terminal.bytes_on_disk()
    assert holds(on_disk, "Cardamom") and not card_in(on_disk)


# --- the ledger ------------------------------------------------------------------------------


@contextlib.contextmanager
def _quietly() -> Iterator[io.StringIO]:
    with contextlib.redirect_stdout(io.StringIO()) as out, \
            contextlib.redirect_stderr(io.StringIO()):
        yield out


@pytest.fixture(scope="module")
def six_reads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A household whose ledger holds six reads, made through the command line once; each
    test tampers with its own copy (the database, its secret and its anchor)."""
    db = tmp_path_factory.mktemp("ledger") / "home.db"
    with pytest.MonkeyPatch.context() as monkeypatch, _quietly():
        _only_these_settings(monkeypatch, db.parent)
        for argv in (("people", "add", "Olivia", "--owner"), ("people", "add", "Bob"),
                     ("remember", "--as", "Bob", "Bob keeps his passport in the desk"),
                     *(("recall", "--as", "Bob", f"passport {n}") for n in range(6))):
            assert main([*argv, "--db", str(db)]) == 0, argv
    return db


@pytest.fixture
async def ledger(six_reads: Path, terminal: Terminal) -> Terminal:
    """The owner's terminal over a copy of the six-read household, verified intact (the
    control: untouched, the ledger holds)."""
    for path in files_of(six_reads):
        shutil.copy2(path, terminal.db.with_name(path.name))
    intact = (await terminal("receipts", "verify")).out
    assert intact.startswith("ledger intact: 6 receipt(s)"), intact
    return terminal


def rewrite_bytes_of_receipt_4(db: Path) -> None:
    """Edit the file itself, no SQL: receipt 4's query digest, as it lies in the database's
    bytes, overwritten with receipt 1's (the same length, so SQLite reads the row happily)."""
    conn = sqlite3.connect(db)
    try:
        digests = dict(conn.execute("SELECT seq, query_digest FROM receipts").fetchall())
    finally:
        conn.close()
    data = db.read_bytes()
    old, new = digests[4].encode(), digests[1].encode()
    assert data.count(old) == 1, "receipt 4's digest is not in the file once"
    db.write_bytes(data.replace(old, new))


# Each hides or changes what receipt 4 says: that Bob's passport was read, by whom, why.
REWRITES: dict[str, Callable[[Path], None]] = {
    "returned ids emptied": lambda db: tamper(
        db, "UPDATE receipts SET returned_ids = '[]', scopes = '[]' WHERE seq = 4"),
    "purpose reworded": lambda db: tamper(
        db, "UPDATE receipts SET purpose = 'a routine check' WHERE seq = 4"),
    "actor moved": lambda db: tamper(
        db, "UPDATE receipts SET actor = 'hearth:dream' WHERE seq = 4"),
    "file bytes edited": rewrite_bytes_of_receipt_4,
}


@pytest.mark.parametrize(
    ("rewrite", "start"),
    [*((rewrite, 1) for rewrite in REWRITES), ("returned ids emptied", 4)],
    ids=[*(f"{rewrite}, rechained from genesis" for rewrite in REWRITES),
         "returned ids emptied, rechained from that row"],
)
async def test_a_receipt_rewritten_and_rechained_with_plain_sha256_fails_verify_as_altered(
    ledger: Terminal, rewrite: str, start: int
) -> None:
    terminal = ledger
    REWRITES[rewrite](terminal.db)
    rechain_with_plain_sha256(terminal.db, start)
    verified = await terminal("receipts", "verify", check=False)
    assert verified.code == 1
    assert verified.out.strip() == (f"ledger broken at receipt #{start}: receipt {start} was "
                                    "altered (its HMAC does not match its contents)")
    doctor = await terminal("doctor", check=False)
    assert doctor.code == 1 and f"FAIL  ledger: broken at receipt #{start}" in doctor.out


async def test_a_rewritten_ledger_stays_broken_when_its_keying_record_and_anchor_are_removed(
    ledger: Terminal,
) -> None:
    terminal = ledger
    REWRITES["returned ids emptied"](terminal.db)
    tamper(terminal.db, "DELETE FROM ledger_keying")
    rechain_with_plain_sha256(terminal.db)
    terminal.db.with_name("home.db.ledger-head").unlink()
    verified = await terminal("receipts", "verify", check=False)
    assert verified.code == 1, verified.out
    assert "ledger broken at receipt #" in verified.out
