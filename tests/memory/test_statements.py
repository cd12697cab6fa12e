"""Plain statements: the first-person facts the tick keeps when the model answers nothing usable,
said as facts about their speaker, and everything less plain left alone."""

from __future__ import annotations

import pytest

from memory import SHARED, Role, Sensitivity, Turn, private_scope
from memory.consolidation import Batch, assertions_from
from memory.statements import plain_statements, statements_in

KEPT = [
    # English: the patterns a member most often uses to tell her about themselves
    ("My sister is called Ruth", "Maya's sister is called Ruth", "person"),
    ("My sister's called Ruth.", "Maya's sister is called Ruth", "person"),
    ("my sister's name is Ruth", "Maya's sister's name is Ruth", "person"),
    ("My birthday is on 14 March.", "Maya's birthday is on 14 March", "fact"),
    ("my mum's birthday is on 3 May", "Maya's mum's birthday is on 3 May", "person"),
    ("My favourite colour is green", "Maya's favourite colour is green", "preference"),
    ("My sister Ruth lives in Porto", "Maya's sister Ruth lives in Porto", "person"),
    ("I'm allergic to peanuts", "Maya is allergic to peanuts", "fact"),
    ("I am allergic to penicillin!", "Maya is allergic to penicillin", "fact"),
    ("I\u2019m allergic to cats", "Maya is allergic to cats", "fact"),
    ("I'm a nurse", "Maya is a nurse", "fact"),
    ("I am a morning person", "Maya is a morning person", "fact"),
    ("I'm vegetarian", "Maya is vegetarian", "fact"),
    ("I'm married to Tom", "Maya is married to Tom", "person"),
    ("I'm from Ghana", "Maya is from Ghana", "fact"),
    ("I'm 34 years old", "Maya is 34 years old", "fact"),
    ("I have a dog called Biscuit", "Maya has a dog called Biscuit", "fact"),
    ("I've got a cat named Miso", "Maya has a cat named Miso", "fact"),
    ("I have two kids", "Maya has two kids", "person"),
    ("I live in Leeds, by the way.", "Maya lives in Leeds", "fact"),
    ("I live with my mum", "Maya lives with Maya's mum", "person"),
    ("I work as a nurse at the Royal Infirmary.", "Maya works as a nurse at the Royal Infirmary",
     "fact"),
    ("I work at the bakery on Mill Lane", "Maya works at the bakery on Mill Lane", "fact"),
    ("I moved to York last year", "Maya moved to York last year", "fact"),
    ("I've just moved to York", "Maya moved to York", "fact"),
    ("I play bass in a band called Zorblatt", "Maya plays bass in a band called Zorblatt",
     "fact"),
    ("I was born in 1987", "Maya was born in 1987", "fact"),
    ("I speak Portuguese", "Maya speaks Portuguese", "fact"),
    # openers and second clauses fall away; the first clause is kept
    ("Also, I'm allergic to peanuts, so no satay for me.", "Maya is allergic to peanuts", "fact"),
    ("My sister is called Ruth and she lives nearby", "Maya's sister is called Ruth", "person"),
    ("Oh by the way I live in Leeds", "Maya lives in Leeds", "fact"),
    ("Ich wohne in Berlin und meine Schwester heißt Lena", "Maya wohnt in Berlin", "fact"),
    ("I play bass in a band called Zorblatt, we rehearse on Sundays",
     "Maya plays bass in a band called Zorblatt", "fact"),
    ("My sister Anna just moved to Leeds for her master's",
     "Maya's sister Anna just moved to Leeds for her master's", "person"),
    # German, French and Spanish: the same few
    ("Meine Schwester heißt Ruth", "Mayas Schwester heißt Ruth", "person"),
    ("Ich bin allergisch gegen Erdnüsse", "Maya ist allergisch gegen Erdnüsse", "fact"),
    ("Ich wohne in Berlin", "Maya wohnt in Berlin", "fact"),
    ("Ich arbeite als Lehrerin", "Maya arbeitet als Lehrerin", "fact"),
    ("Ich habe einen Hund namens Bello", "Maya hat einen Hund namens Bello", "fact"),
    ("Ma sœur s'appelle Ruth", "La sœur de Maya s'appelle Ruth", "person"),
    ("Mon frère habite à Lyon", "Le frère de Maya habite à Lyon", "person"),
    ("Je suis allergique aux arachides", "Maya est allergique aux arachides", "fact"),
    ("J'habite à Paris", "Maya habite à Paris", "fact"),
    ("J'ai un chien qui s'appelle Rex", "Maya a un chien qui s'appelle Rex", "fact"),
    ("Mi hermana se llama Ruth", "La hermana de Maya se llama Ruth", "person"),
    ("Mi perro se llama Toby", "El perro de Maya se llama Toby", "fact"),
    ("Soy alérgica a los cacahuetes", "Maya es alérgica a los cacahuetes", "fact"),
    ("Vivo en Madrid", "Maya vive en Madrid", "fact"),
    ("Tengo un gato que se llama Luna", "Maya tiene un gato que se llama Luna", "fact"),
]

NOT_STATEMENTS = [
    # questions
    "Is my sister called Ruth?",
    "is my sister called Ruth",
    "I live in Leeds, right?",
    "¿Vivo en Madrid?",
    # negations
    "My sister is not called Ruth",
    "My sister isn't called Ruth",
    "I'm not allergic to peanuts",
    "I don't live in Leeds anymore",
    "I no longer live in Leeds",
    "My sister is Ruth, not Rachel",
    "Ich wohne nicht in Berlin",
    "Je n'habite pas à Paris",
    "No vivo en Madrid",
    # hypotheticals
    "If I moved to York I'd be happier",
    "If I'm allergic to peanuts, what then",
    "I'd move to York",
    "Maybe I'm allergic to peanuts",
    "Imagine I live in Paris",
    "Wenn ich in Berlin wohne",
    "Si vivo en Madrid",
    # reported speech and hedges
    "Tom says my sister is called Ruth",
    "My mum said I'm allergic to peanuts",
    "He told me I live in Leeds",
    "I think my sister is called Ruth",
    '"My name is Bob," she said',
    # chit-chat and passing states
    "Anyway, what a grey day it is.",
    "I'm a bit tired",
    "I'm an hour late",
    "My day is going well",
    "my head is killing me",
    "My dog is so cute",
    "My birthday is tomorrow",
    "I have a cold",
    "I play it by ear",
    "My boss is you lol",
    "Our dog is called Rex",
    "my name is Maya",
    "I am restoring an old lighthouse lamp",
    # what she is told never to copy
    "My password is hunter2",
    "My PIN is 4471",
    "my door code is 4471",
    "my bank account number is 12345678",
    "Mein Passwort ist Sonne123",
    # commands and lines memory has already blanked
    "/remember my sister is Ruth",
    "My sister is called [forgotten]",
]


@pytest.mark.parametrize(("line", "statement", "kind"), KEPT, ids=[k[0] for k in KEPT])
def test_a_plain_first_person_statement_becomes_a_fact_about_its_speaker(
    line: str, statement: str, kind: str
) -> None:
    assert plain_statements("Maya", line) == [(statement, kind)]


@pytest.mark.parametrize("line", NOT_STATEMENTS)
def test_a_question_negation_hypothetical_report_or_chit_chat_is_not_a_statement(
    line: str,
) -> None:
    assert plain_statements("Maya", line) == []


def test_each_plain_sentence_of_a_line_is_kept_once() -> None:
    line = "A beagle. Also I'm allergic to peanuts! I live in Leeds. I live in Leeds."
    assert plain_statements("Maya", line) == [
        ("Maya is allergic to peanuts", "fact"), ("Maya lives in Leeds", "fact")
    ]


def test_a_question_beside_a_statement_leaves_the_statement() -> None:
    assert plain_statements("Maya", "I'm allergic to nuts. Is that a problem?") == [
        ("Maya is allergic to nuts", "fact")
    ]


def _line(turn_id: int, text: str, scope: str, *, speaker: str | None = "p-maya",
          role: Role = Role.USER) -> Turn:
    return Turn(turn_id=turn_id, chat_id="dm:1", speaker_id=speaker, role=role, scope=scope,
                sensitivity=Sensitivity.ORDINARY, text=text, at="2026-12-01T12:00:00+00:00")


def _batch(scope: str, *turns: Turn) -> Batch:
    return Batch(scope=scope, turns=turns, after_turn_id=turns[0].turn_id - 1,
                 read_through=turns[-1].turn_id, read_count=len(turns))


NAMES = {"p-maya": "Maya", "p-tom": "Tom"}
PEOPLE = {"maya": "p-maya", "tom": "p-tom"}


def test_her_own_lines_are_never_read_as_statements() -> None:
    scope = private_scope("p-maya")
    batch = _batch(
        scope,
        _line(10, "I live in the cloud, ha", scope, speaker=None, role=Role.ASSISTANT),
        _line(11, "I'm allergic to peanuts", scope),
    )
    extraction = statements_in(batch, NAMES)
    assert [(i.statement, i.lines) for i in extraction.items] == [
        ("Maya is allergic to peanuts", [2])
    ]


def test_in_a_dm_every_member_line_is_about_the_dm_owner() -> None:
    scope = private_scope("p-maya")
    batch = _batch(scope, _line(5, "My sister is called Ruth", scope, speaker=None))
    (item,) = statements_in(batch, NAMES).items
    assert (item.statement, item.about) == ("Maya's sister is called Ruth", "Maya")


def test_in_the_group_a_statement_is_about_the_member_who_said_it() -> None:
    batch = _batch(
        SHARED,
        _line(7, "I work as a vet", SHARED, speaker="p-tom"),
        _line(8, "I live in Leeds", SHARED, speaker="p-maya"),
        _line(9, "I play chess", SHARED, speaker="p-stranger"),
    )
    assert [(i.statement, i.about) for i in statements_in(batch, NAMES).items] == [
        ("Tom works as a vet", "Tom"), ("Maya lives in Leeds", "Maya")
    ]


def test_statements_become_first_hand_evidence_in_the_batchs_own_scope_with_their_line() -> None:
    scope = private_scope("p-maya")
    batch = _batch(scope, _line(20, "Hello!", scope), _line(21, "I'm a nurse", scope))
    (assertion,) = assertions_from(batch, statements_in(batch, NAMES), PEOPLE)
    assert assertion.proposition == "Maya is a nurse"
    assert assertion.scope == scope
    assert assertion.subject_id == "p-maya"
    assert assertion.weight == 1.0
    assert assertion.turn_ids == (21,)
    assert assertion.provenance.value == "extracted"
