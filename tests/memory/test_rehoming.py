"""A database an older hearth wrote, where a member's private words reinforced the shared belief
with the same words, is put right the first time it opens: the evidence goes home."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory import Memory, private_scope
from memory.terms import index_text
from tests.helpers import HashEmbedder, Household, make_household


def _as_an_older_hearth_left_it(db: Path, shared_id: int, private_id: int, scope: str) -> None:
    """Move the private belief's evidence onto the shared one (what the old lookup did), with a
    consolidation's evidence from the same private scope beside it, and forget it was mended."""
    conn = sqlite3.connect(db)
    conn.create_function("stems", 1, index_text, deterministic=True)  # the index triggers'
    with conn:
        conn.execute("UPDATE evidence SET belief_id = ? WHERE belief_id = ?",
                     (shared_id, private_id))
        conn.execute(
            "INSERT INTO evidence(belief_id, source, sign, weight, provenance, reliability,"
            " version, at) VALUES (?, ?, 1, 1.0, 'extracted', 0.75, 3, '2026-01-01T00:00:00')",
            (shared_id, f"consolidation:{scope}:4-9"),
        )
        conn.execute("DELETE FROM beliefs WHERE belief_id = ?", (private_id,))
        conn.execute("UPDATE beliefs SET log_odds = 2.6 WHERE belief_id = ?", (shared_id,))
        conn.execute("DELETE FROM evidence_rehoming")
    conn.close()


async def test_a_members_private_words_leave_the_shared_belief_they_once_reinforced(
    tmp_path: Path,
) -> None:
    db = tmp_path / "hearth.db"
    home: Household = await make_household(db)
    m = home.memory
    shared = await m.beliefs.remember(home.owner.person_id, "The bins go out on Tuesday",
                                      shared=True)
    bobs = await m.beliefs.remember(home.bob.person_id, "the bins go out on tuesday")
    assert shared.belief_id is not None and bobs.belief_id is not None
    group_view = await m.beliefs.explain(home.group(), shared.belief_id)
    assert group_view is not None
    before = group_view.belief
    await m.close()
    bob_scope = private_scope(home.bob.person_id)
    _as_an_older_hearth_left_it(db, shared.belief_id, bobs.belief_id, bob_scope)

    # The positive control: the older state does show Bob's words on the shared belief.
    conn = sqlite3.connect(db)
    crossed = conn.execute("SELECT count(*) FROM evidence WHERE belief_id = ?",
                           (shared.belief_id,)).fetchone()[0]
    conn.close()
    assert crossed == 3

    memory = await Memory.open(db, embedder=HashEmbedder())
    try:
        seen = await memory.beliefs.explain(home.group(), shared.belief_id)
        assert seen is not None
        assert seen.belief.evidence_count == 1 == before.evidence_count
        assert seen.belief.confidence == before.confidence
        assert all(e.source.startswith(f"statement:{home.owner.person_id}")
                   for e in seen.evidence)
        mine = [b for b in await memory.beliefs.inspect(home.dm(home.bob))
                if b.scope == bob_scope]
        assert [b.proposition.casefold() for b in mine] == ["the bins go out on tuesday"]
        assert mine[0].evidence_count == 2  # his statement and the consolidation's, at home
        reopened = await Memory.open(db, embedder=HashEmbedder())  # once is enough
        await reopened.close()
    finally:
        await memory.close()
