"""The dream's reconcile: the newer of two contradicting beliefs supersedes the older, which is
kept, valid until the newer began."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from memory import AccessContext, Activity, Assertion, BeliefStatus, Provenance, private_scope
from tests.helpers import TestClock, make_household

JAN = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)
MAY = datetime(2026, 5, 4, 18, 0, tzinfo=UTC)
JUN = datetime(2026, 6, 20, 8, 0, tzinfo=UTC)


async def test_a_contradicted_belief_is_kept_valid_until_the_newer_one_began(
    tmp_path: Path,
) -> None:
    clock = TestClock(JAN)
    home = await make_household(tmp_path / "hearth.db", clock=clock)
    try:
        m = home.memory
        bob = private_scope(home.bob.person_id)
        old, new = await m.beliefs.assert_all([
            Assertion(proposition="Bob lives in Leeds", scope=bob, provenance=Provenance.TOLD,
                      source="s1", valid_from=JAN.isoformat()),
            Assertion(proposition="Bob lives in York", scope=bob, provenance=Provenance.TOLD,
                      source="s2", valid_from=MAY.isoformat()),
        ])
        assert old.belief_id is not None and new.belief_id is not None
        ctx = AccessContext.for_member(home.bob.person_id, Activity.MEMBER_INSPECT, "a test")
        assert await m.beliefs.link_contradiction(ctx, old.belief_id, new.belief_id)
        clock.set(JUN)
        _, counts = await m.dream.run()
        assert counts["reconciled"] == 1
        kept = await m.beliefs.explain(ctx, old.belief_id)
        assert kept is not None and kept.superseded_by == new.belief_id
        assert kept.belief.status == BeliefStatus.SUPERSEDED
        assert (kept.belief.valid_from, kept.belief.valid_to) == (JAN.isoformat(),
                                                                  MAY.isoformat())
    finally:
        await home.memory.close()
