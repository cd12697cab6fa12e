"""Forgetting: beliefs, their evidence, vectors and index entries gone, their words scrubbed.

Owns: removing a scope's matching beliefs, redacting the transcript lines they came from and
any line of that scope that repeats them, recording keyed tombstones (no plaintext), and purging
a whole scope when a member is removed. Must not: touch another scope, or keep the forgotten
text anywhere (the store runs with secure_delete, and the FTS index is rebuilt so its segments
no longer hold the words).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from memory.beliefs import normalize, tombstone_fingerprint
from memory.models import SHARED
from memory.receipts import keyed_digest
from memory.store import Tx

REDACTED = "[forgotten]"


def row_fingerprint(secret: bytes, table: str, row_id: int, text: str) -> str:
    """A keyed fingerprint of one row as it was before a forget scrubbed it: a restore of an
    older backup finds the same row by it and scrubs it again, with no plaintext kept."""
    return keyed_digest(secret, f"row\n{table}\n{row_id}\n{text}")


async def _tombstone_rows(tx: Tx, secret: bytes, now: str, table: str,
                          rows: list[tuple[int, str]]) -> None:
    await tx.executemany(
        "INSERT OR IGNORE INTO tombstones(fingerprint, at) VALUES (?, ?)",
        [(row_fingerprint(secret, table, row_id, text), now) for row_id, text in rows],
    )


def like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


async def forget_matching(
    tx: Tx, *, scope: str, needle: str, secret: bytes, now: str
) -> list[int]:
    """Forget every belief of `scope` whose normalised proposition contains `needle`, and the
    words themselves (`needle`, and each belief's distinctive words) from every line, summary
    and goal of the scope, whether or not the tick has consolidated them yet: forgetting right
    after saying something leaves it nowhere. A tombstone for the words themselves refuses a
    background re-creation of exactly them from older material."""
    rows = await tx.fetchall(
        "SELECT belief_id, proposition, norm FROM beliefs WHERE scope = ?"
        " AND norm LIKE ? ESCAPE '\\' ORDER BY belief_id",
        (scope, f"%{like_escape(needle)}%"),
    )
    await tx.execute(
        "INSERT OR IGNORE INTO tombstones(fingerprint, at) VALUES (?, ?)",
        (tombstone_fingerprint(secret, scope, needle), now),
    )
    if not rows:
        await _scrub_lines(tx, scope, {needle}, secret, now)
        await _scrub_derived(tx, scope, {needle}, secret, now)
        await _rebuild_index(tx)
        return []
    ids = [int(r["belief_id"]) for r in rows]
    marks = ", ".join("?" for _ in ids)
    source_turns = [
        int(r["turn_id"])
        for r in await tx.fetchall(
            "SELECT DISTINCT et.turn_id FROM evidence_turns et JOIN evidence e"
            f" ON e.evidence_id = et.evidence_id WHERE e.belief_id IN ({marks})",
            ids,
        )
    ]
    for row in rows:
        await tx.execute(
            "INSERT OR IGNORE INTO tombstones(fingerprint, at) VALUES (?, ?)",
            (tombstone_fingerprint(secret, scope, str(row["norm"])), now),
        )
        await tx.execute(
            "DELETE FROM sensitivity_overrides WHERE scope = ? AND norm = ?",
            (scope, row["norm"]),
        )
    await tx.execute(f"DELETE FROM beliefs WHERE belief_id IN ({marks})", ids)
    if source_turns:
        turn_marks = ", ".join("?" for _ in source_turns)
        sources = await tx.fetchall(
            f"SELECT turn_id, text FROM turns WHERE scope = ? AND text != ?"
            f" AND turn_id IN ({turn_marks})",
            (scope, REDACTED, *source_turns),
        )
        await _tombstone_rows(tx, secret, now, "turns",
                              [(int(r["turn_id"]), str(r["text"])) for r in sources])
        await tx.execute(
            f"UPDATE turns SET text = ? WHERE scope = ? AND turn_id IN ({turn_marks})",
            (REDACTED, scope, *source_turns),
        )
    norms = {str(r["norm"]) for r in rows} | {needle}
    await _scrub_lines(tx, scope, norms, secret, now)
    await _scrub_derived(tx, scope, norms, secret, now)
    await _rebuild_index(tx)
    return ids


_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_COMMON = frozenset({
    "about", "after", "also", "been", "before", "being", "does", "doing", "from", "going",
    "have", "having", "here", "into", "just", "like", "likes", "loves", "more", "much", "only",
    "really", "said", "says", "some", "than", "that", "their", "them", "then", "there", "they",
    "this", "very", "wants", "were", "what", "when", "where", "which", "will", "with", "would",
    "your", "yours",
})  # fmt: skip


def _words(text: str) -> set[str]:
    return {w.removesuffix("'s") for w in _WORD.findall(text.casefold())}


def _marks(norm: str) -> frozenset[str]:
    """The distinctive words of a forgotten proposition: what a paraphrase of it still holds."""
    return frozenset(w for w in _words(norm) if len(w) >= 4 and w not in _COMMON)


def _repeats(text: str, norms: set[str], marks: list[frozenset[str]]) -> bool:
    """Whether a line or summary repeats a forgotten proposition: word for word, or in other
    words that keep most of its distinctive ones (`marks`, from `_marks`) ("Noted: my nickname
    is Zephyrine" for "Ana's nickname is Zephyrine"). When in doubt, it goes: a redacted line
    costs less than a leak."""
    flat = normalize(text)
    if any(norm in flat for norm in norms):
        return True
    words = _words(text)
    return any(
        len(mark & words) >= max(1, min(len(mark), (len(mark) + 1) // 2 + 1))
        for mark in marks
        if mark
    )


async def _scrub_lines(tx: Tx, scope: str, norms: set[str], secret: bytes, now: str) -> None:
    """Redact every line of the scope that repeats a forgotten proposition, hers included."""
    rows = await tx.fetchall(
        "SELECT turn_id, text FROM turns WHERE scope = ? AND text != ?", (scope, REDACTED)
    )
    marks = [_marks(norm) for norm in norms]
    repeating = [
        (int(r["turn_id"]), str(r["text"])) for r in rows
        if _repeats(str(r["text"]), norms, marks)
    ]
    await _tombstone_rows(tx, secret, now, "turns", repeating)
    hit = [turn_id for turn_id, _ in repeating]
    for start in range(0, len(hit), 500):
        chunk = hit[start : start + 500]
        await tx.execute(
            f"UPDATE turns SET text = ? WHERE turn_id IN ({', '.join('?' for _ in chunk)})",
            (REDACTED, *chunk),
        )


async def _scrub_derived(tx: Tx, scope: str, norms: set[str], secret: bytes,
                         now: str) -> None:
    """Summaries and goals of the scope that repeat a forgotten proposition go too."""
    marks = [_marks(norm) for norm in norms]
    for table, key in (("summaries", "summary_id"), ("goals", "goal_id")):
        rows = await tx.fetchall(f"SELECT {key} AS id, text FROM {table} WHERE scope = ?",
                                 (scope,))
        for row in rows:
            if _repeats(str(row["text"]), norms, marks):
                await _tombstone_rows(tx, secret, now, table,
                                      [(int(row["id"]), str(row["text"]))])
                if table == "summaries":
                    await tx.execute("UPDATE summaries SET text = ? WHERE summary_id = ?",
                                     (REDACTED, row["id"]))
                else:
                    await tx.execute("DELETE FROM goals WHERE goal_id = ?", (row["id"],))
    if scope == SHARED:
        # Persona edits are drawn from shared preferences: one that quotes a forgotten one
        # stops shaping her prompts (withdrawn), and its words go.
        rows = await tx.fetchall("SELECT proposal_id, text, reason FROM persona_proposals")
        for row in rows:
            said = f"{row['text']}\n{row['reason']}"
            if _repeats(said, norms, marks):
                await _tombstone_rows(tx, secret, now, "persona_proposals",
                                      [(int(row["proposal_id"]), said)])
                await tx.execute(
                    "UPDATE persona_proposals SET text = ?, reason = ?, state = 'rejected'"
                    " WHERE proposal_id = ?",
                    (REDACTED, REDACTED, row["proposal_id"]),
                )


async def reapply_tombstones(tx: Tx, secret: bytes, kept: list[tuple[str, str]]) -> list[int]:
    """After a restore: the tombstones the replaced database had (`kept`, fingerprint and
    time) join the restored one's, and whatever a backup made before those forgets still
    holds is forgotten again: beliefs by their keyed fingerprint, lines, summaries, goals and
    persona proposals by the keyed fingerprint of the row as it was. Returns belief ids gone."""
    await tx.executemany(
        "INSERT OR IGNORE INTO tombstones(fingerprint, at) VALUES (?, ?)", kept
    )
    known = {
        str(r["fingerprint"]) for r in await tx.fetchall("SELECT fingerprint FROM tombstones")
    }
    gone = [
        int(r["belief_id"])
        for r in await tx.fetchall("SELECT belief_id, scope, norm FROM beliefs")
        if tombstone_fingerprint(secret, str(r["scope"]), str(r["norm"])) in known
    ]
    for start in range(0, len(gone), 500):
        chunk = gone[start : start + 500]
        await tx.execute(
            f"DELETE FROM beliefs WHERE belief_id IN ({', '.join('?' for _ in chunk)})", chunk
        )
    for table, key in (("turns", "turn_id"), ("summaries", "summary_id")):
        for row in await tx.fetchall(f"SELECT {key} AS id, text FROM {table} WHERE text != ?",
                                     (REDACTED,)):
            if row_fingerprint(secret, table, int(row["id"]), str(row["text"])) in known:
                await tx.execute(f"UPDATE {table} SET text = ? WHERE {key} = ?",
                                 (REDACTED, row["id"]))
    for row in await tx.fetchall("SELECT goal_id AS id, text FROM goals"):
        if row_fingerprint(secret, "goals", int(row["id"]), str(row["text"])) in known:
            await tx.execute("DELETE FROM goals WHERE goal_id = ?", (row["id"],))
    for row in await tx.fetchall("SELECT proposal_id AS id, text, reason FROM persona_proposals"):
        said = f"{row['text']}\n{row['reason']}"
        if row_fingerprint(secret, "persona_proposals", int(row["id"]), said) in known:
            await tx.execute(
                "UPDATE persona_proposals SET text = ?, reason = ?, state = 'rejected'"
                " WHERE proposal_id = ?",
                (REDACTED, REDACTED, row["id"]),
            )
    await _rebuild_index(tx)
    return gone


async def all_tombstones(tx: Tx) -> list[tuple[str, str]]:
    return [(str(r["fingerprint"]), str(r["at"]))
            for r in await tx.fetchall("SELECT fingerprint, at FROM tombstones")]


def tombstones_path(db_path: Path) -> Path:
    """Beside the database and its secret: the tombstones, so a restore of an older backup
    forgets again what was forgotten since (keyed fingerprints only, never plaintext)."""
    return db_path.with_name(db_path.name + ".tombstones")


def write_tombstones(db_path: Path, rows: list[tuple[str, str]]) -> None:
    """Replace the file beside the database with `rows`, atomically, mode 0600."""
    path = tombstones_path(db_path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.writelines(f"{fingerprint}\t{at}\n" for fingerprint, at in sorted(rows))
    os.replace(tmp, path)


def read_tombstones(db_path: Path) -> list[tuple[str, str]]:
    """The tombstones kept beside the database; none when there is no file."""
    path = tombstones_path(db_path)
    try:
        text = path.read_text("ascii")
    except FileNotFoundError:
        return []
    rows = []
    for line in text.splitlines():
        fingerprint, _, at = line.partition("\t")
        if fingerprint and at:
            rows.append((fingerprint, at))
    return rows


async def count_mentions(tx: Tx, *, scope: str, needle: str) -> int:
    """How many lines, summaries and goals of `scope` repeat `needle` (what forgetting it
    would scrub even when no belief holds it yet). A count of the member's own scope only."""
    marks = [_marks(needle)]
    found = 0
    for table in ("turns", "summaries", "goals"):
        rows = await tx.fetchall(f"SELECT text FROM {table} WHERE scope = ? AND text != ?",
                                 (scope, REDACTED))
        found += sum(1 for r in rows if _repeats(str(r["text"]), {needle}, marks))
    return found


async def _rebuild_index(tx: Tx) -> None:
    # Deleted terms linger in FTS5 segments until a merge; optimize rewrites the index whole.
    await tx.execute("INSERT INTO beliefs_fts(beliefs_fts) VALUES ('optimize')")


async def purge_scope(tx: Tx, scope: str) -> list[int]:
    """Remove everything a scope holds: beliefs, evidence, vectors, lines, overrides, grants."""
    ids = [
        int(r["belief_id"])
        for r in await tx.fetchall("SELECT belief_id FROM beliefs WHERE scope = ?", (scope,))
    ]
    await tx.execute("DELETE FROM beliefs WHERE scope = ?", (scope,))
    await tx.execute("DELETE FROM turns WHERE scope = ?", (scope,))
    await tx.execute("DELETE FROM sensitivity_overrides WHERE scope = ?", (scope,))
    await tx.execute("DELETE FROM grants WHERE scope = ?", (scope,))
    await tx.execute("DELETE FROM summaries WHERE scope = ?", (scope,))
    await tx.execute("DELETE FROM goals WHERE scope = ?", (scope,))
    await _rebuild_index(tx)
    return ids
