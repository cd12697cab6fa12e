"""Grants as a household gives them: what the owner's group grant opens, and nothing more."""

from __future__ import annotations

from memory import SHARED, Activity, Sensitivity, private_scope
from tests.helpers import Household


async def test_the_owners_group_grant_opens_the_households_shared_health_facts(
    home: Household,
) -> None:
    m = home.memory
    await m.remember(home.owner.person_id, "Grandma has a heart condition", shared=True)
    await m.remember(home.owner.person_id, "Olivia has a migraine today")
    group = home.group()
    assert await m.recall(group, "heart condition") == []

    grant = await m.grant(home.owner.person_id, Activity.GROUP_CONVERSATION, Sensitivity.HEALTH)
    assert grant.scope == SHARED  # her private facts never reach a group: it can only mean these
    found = [r.belief.proposition for r in await m.recall(group, "heart condition migraine")]
    assert found == ["Grandma has a heart condition"]

    assert await m.revoke(home.owner.person_id, Activity.GROUP_CONVERSATION,
                          Sensitivity.HEALTH) == 1
    assert await m.recall(group, "heart condition") == []


async def test_a_members_grants_stay_over_their_own_facts(home: Household) -> None:
    grant = await home.memory.grant(home.bob.person_id, Activity.GROUP_CONVERSATION,
                                    Sensitivity.HEALTH)
    assert grant.scope == private_scope(home.bob.person_id)
    proactive = await home.memory.grant(home.owner.person_id, Activity.PROACTIVE,
                                        Sensitivity.HEALTH)
    assert proactive.scope == private_scope(home.owner.person_id)
