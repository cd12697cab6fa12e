"""Forgetting works: after forget and a checkpoint the words are nowhere in the file."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from memory import (
    Activity,
    Assertion,
    InvalidRequest,
    Memory,
    Provenance,
    Role,
    private_scope,
)
from tests.helpers import Household, raw_bytes


async def _tell(home: Household, text: str) -> tuple[int, int]:
    m = home.memory
    scope = private_scope(home.bob.person_id)
    line = await m.transcript.append(chat_id="dm:1002", speaker_id=home.bob.person_id,
                               role=Role.USER, scope=scope, text=f"by the way, {text}!")
    echo = await m.transcript.append(chat_id="dm:1002", speaker_id=None, role=Role.ASSISTANT,
                               scope=scope, text=f"Oh! So {text.lower()}. Noted.")
    (outcome,) = await m.beliefs.assert_all([
        Assertion(proposition=text, scope=scope, provenance=Provenance.CONSOLIDATED,
                  source=f"turns:{line}", turn_ids=(line,)),
    ])
    assert outcome.status == "created" and outcome.belief_id is not None
    return outcome.belief_id, echo


async def test_forgotten_words_are_absent_from_the_database_its_wal_and_its_index(
    home: Household,
) -> None:
    m = home.memory
    secret = "Alice is quietly pregnant with twins"
    await _tell(home, secret)
    for i in range(30):  # enough other traffic that pages are shared with the secret
        await m.beliefs.remember(home.bob.person_id, f"Bob watered the tomato plants on day {i}")
    await m.checkpoint()
    assert b"quietly pregnant" in raw_bytes(m.path)

    count = await m.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT),
            "quietly pregnant")
    await m.checkpoint()

    assert count == 1
    raw = raw_bytes(m.path)
    for fragment in (b"quietly pregnant", b"pregnant", b"twins", b"quietly"):
        assert fragment not in raw, fragment
    assert b"tomato plants" in raw  # the rest of memory is intact


async def test_a_forgotten_belief_is_not_recalled_and_its_lines_are_redacted(
    home: Household,
) -> None:
    m = home.memory
    belief_id, _ = await _tell(home, "Bob is thinking of quitting his job")
    ctx = home.dm(home.bob)
    assert await m.recall.search(ctx, "quitting job")
    assert await m.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT),
            "quitting his job") == 1
    assert await m.recall.search(ctx, "quitting job") == []
    assert await m.beliefs.explain(ctx, belief_id) is None
    lines = await m.transcript.lines(ctx, limit=10)
    assert [t.text for t in lines] == ["[forgotten]", "[forgotten]"]


async def test_background_work_cannot_recreate_a_forgotten_belief_but_the_member_can(
    home: Household,
) -> None:
    m = home.memory
    scope = private_scope(home.bob.person_id)
    await m.beliefs.remember(home.bob.person_id, "Bob's brother owes him money")
    await m.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT), "brother owes him money")
    (again,) = await m.beliefs.assert_all([
        Assertion(proposition="bob's brother owes him money.", scope=scope,
                  provenance=Provenance.EXTRACTED, source="turns:1"),
    ])
    assert again.status == "refused"
    told = await m.beliefs.remember(home.bob.person_id, "Bob's brother owes him money")
    assert told.status == "created"


async def test_forget_touches_only_the_members_own_scope(home: Household) -> None:
    m = home.memory
    await m.beliefs.remember(home.bob.person_id, "The boiler makes a knocking noise")
    await m.beliefs.remember(home.alice.person_id, "The boiler makes a knocking noise")
    await m.beliefs.remember(home.owner.person_id, "The boiler makes a knocking noise",
            shared=True)
    assert await m.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT), "boiler") == 1
    assert len(await m.recall.search(home.dm(home.alice), "boiler knocking")) == 2
    assert len(await m.recall.search(home.group(), "boiler knocking")) == 1


async def test_a_member_cannot_forget_shared_beliefs_but_the_owner_can(home: Household) -> None:
    m = home.memory
    await m.beliefs.remember(home.owner.person_id, "The spare key is under the blue pot",
            shared=True)
    bob = home.dm(home.bob, Activity.MEMBER_INSPECT)
    with pytest.raises(InvalidRequest, match="owner"):
        await m.forgetting.forget(bob, "spare key", shared=True)
    assert await m.forgetting.forget(bob, "spare key") == 0
    assert len(await m.recall.search(home.group(), "spare key")) == 1
    owner = home.dm(home.owner, Activity.MEMBER_INSPECT)
    assert await m.forgetting.forget(owner, "spare key", shared=True) == 1
    assert await m.recall.search(home.group(), "spare key") == []


async def test_her_paraphrase_and_a_summary_in_other_words_are_scrubbed_too(
    home: Household,
) -> None:
    m = home.memory
    scope = private_scope(home.bob.person_id)
    chat = "dm:1002"
    said = await m.transcript.append(chat_id=chat, speaker_id=home.bob.person_id, role=Role.USER,
                               scope=scope, text="my secret nickname is Zephyrine Quokka")
    echo = await m.transcript.append(chat_id=chat, speaker_id=None, role=Role.ASSISTANT,
            scope=scope,
                               text="Noted: your secret nickname is Zephyrine Quokka")
    other = await m.transcript.append(chat_id=chat, speaker_id=home.bob.person_id, role=Role.USER,
                                scope=scope, text="I saw a quokka at the zoo today")
    await m.beliefs.assert_all([
        Assertion(proposition="Bob's secret nickname is Zephyrine Quokka", scope=scope,
                  provenance=Provenance.EXTRACTED, source="c1", turn_ids=(said,)),
    ])
    await m.summaries.write(scope, chat, "Bob said his secret nickname is Zephyrine Quokka; "
                          "he also saw a quokka", echo)
    assert await m.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT),
            "secret nickname") == 1
    await m.checkpoint()
    lines = {t.turn_id: t.text for t in await m.transcript.lines(home.dm(home.bob), limit=10)}
    assert lines[said] == lines[echo] == "[forgotten]"
    assert lines[other] == "I saw a quokka at the zoo today"  # one shared word is not a repeat
    summary = await m.summaries.get(home.dm(home.bob), chat)
    assert summary is not None and "Zephyrine" not in summary.text
    assert b"zephyrine" not in raw_bytes(m.path).lower()


async def test_a_restore_of_a_backup_made_before_a_forget_forgets_it_again(
    home: Household, tmp_path: Path
) -> None:
    m = home.memory
    await _tell(home, "Bob is secretly saving for a motorbike")
    await _tell(home, "Bob sings in the shower")
    copy = tmp_path / "before.db"
    await m.backup(copy)
    ctx = home.dm(home.bob, Activity.MEMBER_INSPECT)
    assert await m.forgetting.forget(ctx, "motorbike") == 1
    path = m.path
    await m.close()

    await Memory.restore(copy, path)

    home.memory = restored = await Memory.open(path)
    beliefs = [b.proposition for b in await restored.beliefs.inspect(ctx)]
    assert beliefs == ["Bob sings in the shower"]  # the backup, less what was forgotten since
    lines = [t.text for t in await restored.transcript.lines(ctx)]
    assert not any("motorbike" in line for line in lines)
    assert any("shower" in line for line in lines)
    await restored.checkpoint()
    assert b"motorbike" not in raw_bytes(path)
    # Positive control: the backup itself still holds it (it was made before the forget).
    assert b"motorbike" in raw_bytes(copy)


def _tables_holding(path: Path, fragment: bytes) -> list[str]:
    """Every table of the file (FTS5's shadow tables included) with a value holding
    `fragment`, read through a connection of its own."""
    found = []
    with sqlite3.connect(path) as conn:
        names = [str(r[0]) for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        for name in names:
            try:
                rows = conn.execute(f'SELECT * FROM "{name}"').fetchall()
            except sqlite3.OperationalError:  # a virtual table needing its module's functions
                continue
            for row in rows:
                if any(fragment in (v if isinstance(v, bytes) else str(v).encode()).lower()
                       for v in row if v is not None):
                    found.append(name)
                    break
    return found


async def test_a_line_forgotten_before_any_belief_leaves_no_word_in_the_keyword_indexes(
    home: Household,
) -> None:
    m = home.memory
    scope = private_scope(home.bob.person_id)
    await m.transcript.append(chat_id="dm:1002", speaker_id=home.bob.person_id, role=Role.USER,
                              scope=scope, text="the shed padlock is zorblatt quinoxide")
    for day in range(40):  # other lines share the index's pages with it
        await m.transcript.append(chat_id="dm:1002", speaker_id=home.bob.person_id,
                                  role=Role.USER, scope=scope,
                                  text=f"watered the tomato plants on day {day}")
    await m.checkpoint()
    assert "turns_fts_data" in _tables_holding(m.path, b"zorblatt")  # the index had it

    await m.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT), "zorblatt quinoxide")

    assert _tables_holding(m.path, b"zorblatt") == []
    assert _tables_holding(m.path, b"quinox") == []
    raw = raw_bytes(m.path)
    assert b"zorblatt" not in raw and b"quinox" not in raw  # nor in free pages or the WAL
    assert b"tomato" in raw


async def test_forget_empties_the_wal_once_another_programs_read_ends(
    home: Household,
) -> None:
    m = home.memory
    await _tell(home, "Bob keeps the spare key under the gnomewhistle")
    await m.checkpoint()
    reader = sqlite3.connect(m.path)  # another program, reading
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM beliefs").fetchone()

    async def finish_reading() -> None:
        await asyncio.sleep(1.5)  # longer than one checkpoint waits for a reader
        reader.commit()

    ending = asyncio.ensure_future(finish_reading())
    try:
        count = await m.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT),
                                          "gnomewhistle")
    finally:
        await ending
        reader.close()

    assert count == 1
    wal = m.path.with_name(m.path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    assert b"gnomewhistle" not in raw_bytes(m.path)


_BOBS_DAYS = (  # a member's everyday lines, in German: what a forget must leave alone
    "Heute gab es Spaghetti zum Abendessen", "Der Zug nach Köln hatte wieder Verspätung",
    "Ich habe endlich das Fahrrad repariert", "Am Samstag spielen wir Fußball im Park",
    "Die Heizung im Bad macht komische Geräusche", "Meine Schwester kommt nächste Woche",
    "Ich muss noch die Steuererklärung machen", "Das Konzert gestern war richtig gut",
    "Wir brauchen neue Glühbirnen für den Flur", "Der Hund hat den ganzen Garten umgegraben",
    "Ich lese gerade ein Buch über Island", "Morgen früh habe ich einen Zahnarzttermin",
    "Die Kinder wollen im Sommer ans Meer", "Mein Chef hat mir mehr Urlaub gegeben",
    "Ich habe mir neue Laufschuhe gekauft", "Der Kühlschrank ist schon wieder leer",
    "Im Winter fahren wir in die Berge", "Ich lerne seit März Spanisch",
    "Die Nachbarn feiern heute eine Party", "Unser Auto muss zur Inspektion",
    "Ich koche am Sonntag für alle Kartoffelsuppe", "Das WLAN ist seit gestern so langsam",
)


async def test_a_line_that_says_a_forgotten_fact_in_other_words_goes_and_the_rest_stays(
    e5_home: Household,
) -> None:
    home = e5_home
    m = home.memory
    scope = private_scope(home.bob.person_id)

    async def say(text: str) -> int:
        return await m.transcript.append(chat_id="dm:1002", speaker_id=home.bob.person_id,
                                         role=Role.USER, scope=scope, text=text)

    kept = [await say(text) for text in _BOBS_DAYS[:11]]
    fact = await say("Ich bin allergisch gegen Erdnüsse")
    kept += [await say(text) for text in _BOBS_DAYS[11:]]
    # The same fact again in other words: neither the words asked to forget nor enough of
    # the belief's own.
    again = await say("Ich reagiere allergisch auf Nüsse")
    await m.beliefs.assert_all([
        Assertion(proposition="Bob ist allergisch gegen Erdnüsse", scope=scope,
                  provenance=Provenance.CONSOLIDATED, source=f"turns:{fact}",
                  turn_ids=(fact,)),
    ])

    assert await m.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT),
                                     "Erdnüsse") == 1

    lines = {t.turn_id: t.text for t in await m.transcript.lines(home.dm(home.bob),
                                                                  limit=50)}
    assert lines[fact] == lines[again] == "[forgotten]"
    assert [lines[i] for i in kept] == list(_BOBS_DAYS)


_BOBS_PLANS = (  # his goals that have nothing to do with nuts: a forget leaves them
    "Die Steuererklärung bis Ende Mai abgeben", "Neue Glühbirnen für den Flur kaufen",
    "Das Auto zur Inspektion bringen", "Für den Urlaub in Island ein Hotel buchen",
    "Jeden Morgen zwanzig Minuten Spanisch lernen",
)


async def test_a_goal_and_a_summary_that_say_a_forgotten_fact_in_other_words_go_too(
    e5_home: Household,
) -> None:
    home = e5_home
    m = home.memory
    scope = private_scope(home.bob.person_id)
    for text in _BOBS_DAYS:
        await m.transcript.append(chat_id="dm:1002", speaker_id=home.bob.person_id,
                                  role=Role.USER, scope=scope, text=text)
    fact = await m.transcript.append(chat_id="dm:1002", speaker_id=home.bob.person_id,
                                     role=Role.USER, scope=scope,
                                     text="Ich bin allergisch gegen Erdnüsse")
    await m.beliefs.assert_all([
        Assertion(proposition="Bob ist allergisch gegen Erdnüsse", scope=scope,
                  provenance=Provenance.CONSOLIDATED, source=f"turns:{fact}",
                  turn_ids=(fact,)),
    ])
    for text in (*_BOBS_PLANS, "Dem Restaurant sagen, dass ich allergisch auf Nüsse bin"):
        await m.goals.add(home.bob.person_id, text, scope=scope, provenance="stated")
    await m.summaries.write(
        scope, "dm:1002", "Bob hat seine Schwester eingeladen. Er reagiert auf Nüsse"
        " allergisch und muss beim Essen aufpassen. Am Samstag spielt er Fußball.", fact)

    assert await m.forgetting.forget(home.dm(home.bob, Activity.MEMBER_INSPECT),
                                     "Erdnüsse") == 1

    goals = await m.goals.open(home.dm(home.bob))
    assert sorted(g.text for g in goals) == sorted(_BOBS_PLANS)
    summary = await m.summaries.get(home.dm(home.bob), "dm:1002")
    assert summary is None or "Nüsse" not in summary.text
