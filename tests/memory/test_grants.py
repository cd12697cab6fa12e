"""Grants as a household gives them: what the owner's group grant opens, and nothing more."""

from __future__ import annotations

from memory import SHARED, Activity, Sensitivity, private_scope
from tests.helpers import Household, raw_bytes


async def test_the_owners_group_grant_opens_the_households_shared_health_facts(
    home: Household,
) -> None:
    m = home.memory
    await m.beliefs.remember(home.owner.person_id, "Grandma has a heart condition", shared=True)
    await m.beliefs.remember(home.owner.person_id, "Olivia has a migraine today")
    group = home.group()
    assert await m.recall.search(group, "heart condition") == []

    grant = await m.grants.give(home.owner.person_id, Activity.GROUP_CONVERSATION,
            Sensitivity.HEALTH)
    assert grant.scope == SHARED  # her private facts never reach a group: it can only mean these
    found = [r.belief.proposition for r in await m.recall.search(group,
            "heart condition migraine")]
    assert found == ["Grandma has a heart condition"]

    assert await m.grants.revoke(home.owner.person_id, Activity.GROUP_CONVERSATION,
                          Sensitivity.HEALTH) == 1
    assert await m.recall.search(group, "heart condition") == []


async def test_a_members_grants_stay_over_their_own_facts(home: Household) -> None:
    grant = await home.memory.grants.give(home.bob.person_id, Activity.GROUP_CONVERSATION,
                                    Sensitivity.HEALTH)
    assert grant.scope == private_scope(home.bob.person_id)
    proactive = await home.memory.grants.give(home.owner.person_id, Activity.PROACTIVE,
                                        Sensitivity.HEALTH)
    assert proactive.scope == private_scope(home.owner.person_id)


# --- a grant's note is its grantor's -----------------------------------------------------------

_TOKEN = "sk-proj-9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c"


async def test_a_grant_note_is_shown_only_to_its_grantor_and_masked(home: Household) -> None:
    m = home.memory
    await m.grants.give(home.bob.person_id, Activity.PROACTIVE, Sensitivity.HEALTH,
                  note=f"remind me about the clinic, login {_TOKEN}")
    await m.grants.give(home.owner.person_id, Activity.GROUP_CONVERSATION, Sensitivity.HEALTH,
                  note="grandma's heart: ok to mention")

    (bobs,) = await m.grants.list(home.bob.person_id, viewer_id=home.bob.person_id)
    assert "clinic" in bobs.note and _TOKEN not in bobs.note  # his own words, token masked

    async def notes(viewer: str | None) -> dict[str, str]:
        return {g.grantor_id: g.note for g in await m.grants.list(viewer_id=viewer)}

    bob, owner = home.bob.person_id, home.owner.person_id
    assert (await notes(bob))[owner] == ""
    # the owner's shared grant covers the household's facts: its note is hers, Bob's is not
    assert await notes(owner) == {bob: "", owner: "grandma's heart: ok to mention"}
    for viewer in (None, home.alice.person_id):  # a listing for no one, or for another member
        assert await notes(viewer) == {bob: "", owner: ""}


async def test_a_grant_note_is_stored_with_secret_tokens_masked(home: Household) -> None:
    grant = await home.memory.grants.give(home.bob.person_id, Activity.PROACTIVE,
            Sensitivity.FINANCE,
                                    note=f"bank app token {_TOKEN}")
    assert _TOKEN not in grant.note
    assert _TOKEN.encode() not in raw_bytes(home.memory.path)
