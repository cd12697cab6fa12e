"""Property tests of the gate's invariants, on the pure wall and lens and through the facade."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import SHARED, AccessContext, Activity, Grant, Sensitivity, private_scope
from memory.lens import GRANTABLE, POLICY, Rule, may_use
from memory.wall import is_visible, visible_scopes
from tests.helpers import make_household

PEOPLE = ["pa", "pb", "pc"]
MINDS = ["calendar", "desk"]
SCOPES = [SHARED, *(private_scope(p) for p in PEOPLE)]
NOW = "2026-11-30T12:00:00+00:00"


@st.composite
def contexts(draw: st.DrawFn) -> AccessContext:
    activity = draw(st.sampled_from(list(Activity)))
    purpose = draw(st.text(min_size=1, max_size=20).filter(lambda s: s.strip()))
    group_ok = activity not in (
        Activity.DM_CONVERSATION, Activity.MEMBER_INSPECT, Activity.OWNER_AUDIT, Activity.MIND
    )
    person_ok = activity != Activity.GROUP_CONVERSATION
    use_group = group_ok and (not person_ok or draw(st.booleans()))
    if activity == Activity.CONSOLIDATION:
        scope = SHARED if use_group else private_scope(draw(st.sampled_from(PEOPLE)))
        return AccessContext.for_batch(scope, purpose)
    if use_group:
        return AccessContext.for_group(activity, purpose)
    if activity == Activity.OWNER_AUDIT:
        return AccessContext.for_audit(draw(st.sampled_from(PEOPLE)), purpose)
    if activity == Activity.MIND:
        return AccessContext.for_mind(draw(st.sampled_from(PEOPLE)),
                                      draw(st.sampled_from(MINDS)), purpose)
    return AccessContext.for_member(draw(st.sampled_from(PEOPLE)), activity, purpose)


@st.composite
def grants(draw: st.DrawFn) -> Grant:
    scope = draw(st.sampled_from(SCOPES))
    return Grant(
        grant_id=draw(st.integers(1, 10_000)),
        grantor_id=draw(st.sampled_from(PEOPLE)),
        scope=scope,
        activity=draw(st.sampled_from(list(Activity))),
        sensitivity=draw(st.sampled_from(list(Sensitivity))),
        beneficiary_id=draw(st.none() | st.sampled_from(PEOPLE)),
        note="",
        created_at="2026-01-01T00:00:00+00:00",
        expires_at=draw(st.none() | st.sampled_from(["2026-06-01T00:00:00+00:00",
                                                      "2027-06-01T00:00:00+00:00"])),
        revoked_at=draw(st.none() | st.just("2026-02-01T00:00:00+00:00")),
        mind=draw(st.none() | st.sampled_from(MINDS)),
    )


grant_sets = st.lists(grants(), max_size=8)


@given(contexts(), st.sampled_from(SCOPES), st.sampled_from(list(Sensitivity)), grant_sets)
def test_the_lens_never_allows_what_the_wall_denied(
    ctx: AccessContext, scope: str, sensitivity: Sensitivity, granted: list[Grant]
) -> None:
    if may_use(ctx, scope, sensitivity, granted, NOW):
        assert is_visible(ctx, scope)


@given(contexts(), grant_sets)
def test_a_grant_never_widens_the_wall(ctx: AccessContext, granted: list[Grant]) -> None:
    # whatever grants exist, nothing outside the wall's scopes is usable
    for scope in SCOPES:
        if scope not in visible_scopes(ctx):
            assert not any(may_use(ctx, scope, s, granted, NOW) for s in Sensitivity)


@given(contexts(), st.sampled_from(SCOPES), st.sampled_from(list(Sensitivity)), grant_sets,
       grants())
def test_adding_a_grant_never_hides_anything(
    ctx: AccessContext, scope: str, sensitivity: Sensitivity, granted: list[Grant], extra: Grant
) -> None:
    if may_use(ctx, scope, sensitivity, granted, NOW):
        assert may_use(ctx, scope, sensitivity, [*granted, extra], NOW)


@given(contexts(), st.sampled_from(SCOPES), st.sampled_from(list(Sensitivity)), grant_sets,
       grants())
def test_revoking_a_grant_restores_the_previous_answer(
    ctx: AccessContext, scope: str, sensitivity: Sensitivity, granted: list[Grant], extra: Grant
) -> None:
    revoked = extra.model_copy(update={"revoked_at": "2026-11-30T11:00:00+00:00"})
    before = may_use(ctx, scope, sensitivity, granted, NOW)
    assert may_use(ctx, scope, sensitivity, [*granted, revoked], NOW) == before


@given(contexts(), st.sampled_from(SCOPES), grant_sets)
def test_no_grant_ever_opens_credentials_outside_direct_work(
    ctx: AccessContext, scope: str, granted: list[Grant]
) -> None:
    if POLICY[ctx.activity][Sensitivity.CREDENTIALS] is Rule.NEVER:
        assert not may_use(ctx, scope, Sensitivity.CREDENTIALS, granted, NOW)


def test_only_health_and_finance_for_background_and_group_work_are_grantable() -> None:
    assert {s for _, s in GRANTABLE} == {Sensitivity.HEALTH, Sensitivity.FINANCE}
    assert {a for a, _ in GRANTABLE} == {
        Activity.GROUP_CONVERSATION, Activity.COMPACTION, Activity.DREAM, Activity.PROACTIVE,
        Activity.MIND,
    }


@given(contexts(), st.sampled_from(SCOPES), st.sampled_from(list(Sensitivity)), grant_sets)
def test_a_grant_naming_a_mind_opens_that_minds_reads_and_nothing_else(
    ctx: AccessContext, scope: str, sensitivity: Sensitivity, granted: list[Grant]
) -> None:
    naming = [g for g in granted if g.mind is not None]
    plain = [g for g in granted if g.mind is None]
    if ctx.activity == Activity.MIND:
        # only grants naming this very mind count for it
        mine = [g for g in naming if ctx.actor == f"mind:{g.mind}"]
        assert may_use(ctx, scope, sensitivity, granted, NOW) == may_use(
            ctx, scope, sensitivity, mine, NOW)
        assert not may_use(ctx, scope, sensitivity, plain, NOW) or sensitivity is (
            Sensitivity.ORDINARY)
    else:
        assert may_use(ctx, scope, sensitivity, granted, NOW) == may_use(
            ctx, scope, sensitivity, plain, NOW)


def _grant(activity: Activity, mind: str | None) -> Grant:
    return Grant(grant_id=1, grantor_id="pa", scope=private_scope("pa"), activity=activity,
                 sensitivity=Sensitivity.HEALTH, beneficiary_id=None, note="",
                 created_at="2026-01-01T00:00:00+00:00", expires_at=None, revoked_at=None,
                 mind=mind)


@pytest.mark.parametrize(("named", "opens"), [("calendar", True), ("desk", False), (None, False)])
def test_only_a_grant_naming_the_very_mind_opens_a_class_for_it(
    named: str | None, opens: bool
) -> None:
    ctx = AccessContext.for_mind("pa", "calendar", "a mind's read")
    assert may_use(ctx, private_scope("pa"), Sensitivity.HEALTH, [_grant(Activity.MIND, named)],
                   NOW) is opens
    # a grant naming a mind opens nothing for the member's own lanes
    dream = AccessContext.for_member("pa", Activity.DREAM, "the nightly pass")
    assert not may_use(dream, private_scope("pa"), Sensitivity.HEALTH,
                       [_grant(Activity.DREAM, "calendar")], NOW)
    assert may_use(dream, private_scope("pa"), Sensitivity.HEALTH,
                   [_grant(Activity.DREAM, None)], NOW)


def test_a_mind_is_a_person_audience_read_by_that_mind_alone() -> None:
    with pytest.raises(ValueError, match="group"):
        AccessContext.for_group(Activity.MIND, "sneaky")
    with pytest.raises(ValueError, match="mind"):
        AccessContext.for_member("pa", Activity.MIND, "a mind's read without its name")
    with pytest.raises(ValueError, match="mind"):
        AccessContext(activity=Activity.DM_CONVERSATION, purpose="p", audience="person",
                      person_id="pa", actor="mind:calendar")
    ctx = AccessContext.for_mind("pa", "calendar", "a mind's read")
    assert (ctx.actor, visible_scopes(ctx)) == ("mind:calendar", (SHARED, private_scope("pa")))


@pytest.mark.parametrize("purpose", ["", "   ", "\n"])
def test_an_access_context_cannot_be_built_without_a_purpose(purpose: str) -> None:
    with pytest.raises(ValueError, match="purpose"):
        AccessContext.for_member("pa", Activity.DM_CONVERSATION, purpose)


def test_an_access_context_cannot_be_built_without_an_activity() -> None:
    with pytest.raises(ValueError, match="activity"):
        AccessContext(purpose="p", audience="person", person_id="pa", actor="pa")  # type: ignore[call-arg]


def test_a_dm_activity_cannot_be_read_for_a_group_audience() -> None:
    with pytest.raises(ValueError, match="group"):
        AccessContext.for_group(Activity.DM_CONVERSATION, "sneaky")


# --- the same invariants through the facade, on a real database -----------------------------

FACTS = {
    "ordinary": "Bob plays five a side football on Thursdays",
    "health": "Bob has asthma and uses an inhaler",
    "finance": "Bob's overdraft is nearly maxed out",
}
# A mind's grants name a mind (tests/bot/test_mcp.py grants and revokes those).
GRANT_CHOICES = [(a, s) for a, s in sorted(GRANTABLE) if a != Activity.MIND]


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(GRANT_CHOICES), max_size=4, unique=True))
def test_granting_then_revoking_restores_every_recall_answer(
    tmp_path_factory: pytest.TempPathFactory, chosen: list[tuple[Activity, Sensitivity]]
) -> None:
    asyncio.run(_grant_then_revoke(Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp())),
                                   chosen))


async def _grant_then_revoke(folder: Path, chosen: list[tuple[Activity, Sensitivity]]) -> None:
    home = await make_household(folder / "hearth.db")
    m = home.memory
    try:
        for text in FACTS.values():
            await m.beliefs.remember(home.bob.person_id, text)
        readers = [AccessContext.for_member(p.person_id, a, "property")
                   for p in (home.bob, home.alice)
                   for a in (Activity.PROACTIVE, Activity.COMPACTION, Activity.DREAM)]
        readers.append(AccessContext.for_group(Activity.GROUP_CONVERSATION, "property"))

        async def answers() -> list[set[int]]:
            out = []
            for ctx in readers:
                found: set[int] = set()
                for text in FACTS.values():
                    found |= {r.belief.belief_id for r in await m.recall.search(ctx, text)}
                out.append(found)
            return out

        before = await answers()
        for activity, sensitivity in chosen:
            await m.grants.give(home.bob.person_id, activity, sensitivity)
        during = await answers()
        for old, new in zip(before, during, strict=True):
            assert old <= new  # adding grants never hides anything
        # Alice's and the group's view never gain Bob's private facts: a grant opens no wall
        assert during[3:] == before[3:]
        for activity, sensitivity in chosen:
            assert await m.grants.revoke(home.bob.person_id, activity, sensitivity) == 1
        assert await answers() == before
    finally:
        await m.close()
