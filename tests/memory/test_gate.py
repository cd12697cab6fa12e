"""The gate's three ways in: a receipted read, one scope's lane, and the census without words."""

from __future__ import annotations

import pytest

from memory import private_scope
from memory.gate import Census, Lane
from tests.helpers import Household


async def test_the_census_refuses_every_column_that_holds_words(home: Household) -> None:
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, "Bob keeps a diary under the mattress")
    async with m._store.transaction() as tx:
        census = Census(tx)
        counted = await census.select("beliefs", "scope, count(*) AS n", group="scope")
        assert [(r["scope"], r["n"]) for r in counted] == [(private_scope(home.bob.person_id), 1)]
        for columns in ("proposition", "b.norm", "*", "belief_id, text"):
            with pytest.raises(ValueError, match="no content"):
                await census.select("beliefs b", columns)
        with pytest.raises(ValueError, match="no content"):
            await census.select("beliefs", "belief_id", "proposition LIKE '%diary%'")


async def test_a_lane_sees_its_own_scope_and_nothing_of_anyone_elses(home: Household) -> None:
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, "Bob keeps a diary under the mattress")
    await m.beliefs.remember(home.alice.person_id, "Alice keeps a diary in the piano")
    async with m._store.transaction() as tx:
        bobs = Lane(tx, private_scope(home.bob.person_id))
        seen = await bobs.select("beliefs", "norm LIKE ?", ("%diary%",), columns="proposition")
        assert [r["proposition"] for r in seen] == ["Bob keeps a diary under the mattress"]
        evidence = await bobs.select("evidence", columns="source")
        assert len(evidence) == 1  # Alice's evidence is not reachable from Bob's lane
        assert str(evidence[0]["source"]).startswith(f"statement:{home.bob.person_id}")
        with pytest.raises(ValueError, match="not a content table"):
            await bobs.select("people")
