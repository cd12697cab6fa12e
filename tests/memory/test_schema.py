"""Every table is declared once, with its columns, what holds words and whose rows they are;
the census reads only what is declared to hold no words."""

from __future__ import annotations

import sqlite3

import pytest

from memory.gate import Census
from memory.schema import TABLES, declared
from tests.helpers import Household


def _tables(conn: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    names = [str(r[0]) for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'")]
    return {name: tuple(str(c[1]) for c in conn.execute(f'PRAGMA table_info("{name}")'))
            for name in names}


async def test_every_table_the_migrations_make_is_declared_with_exactly_its_columns(
    home: Household,
) -> None:
    with sqlite3.connect(home.memory.path) as conn:
        made = _tables(conn)
    undeclared = sorted(name for name in made if declared(name) is None)
    assert undeclared == [], "declare each new table in memory/schema.py: whose rows, what words"
    for name, columns in made.items():
        if name in TABLES:
            assert set(columns) == set(TABLES[name].columns), name
    assert sorted(set(TABLES) - set(made)) == []  # nothing declared that is not there


def test_a_table_with_words_and_no_scope_says_who_alone_reads_it() -> None:
    for name, table in TABLES.items():
        if table.content and table.scope is None:
            assert table.why_unwalled, name


async def test_the_census_refuses_an_undeclared_table_column_and_a_kept_messages_body(
    home: Household,
) -> None:
    m = home.memory
    async with m._store.transaction() as tx:
        await tx.execute("CREATE TABLE scrapbook (entry_id INTEGER PRIMARY KEY, person_id TEXT,"
                         " scribble TEXT)")
        census = Census(tx)
        with pytest.raises(ValueError, match="declared tables"):
            await census.select("scrapbook", "count(*) AS n")
        with pytest.raises(ValueError, match="declared metadata"):
            await census.select("turns", "turn_id", "scribble IS NOT NULL")
        with pytest.raises(ValueError, match="no content"):
            await census.select("inbox", "update_id, payload")
        # What it is for still works: ids, counts, scopes, joins by declared keys.
        assert await census.select("inbox", "count(*) AS n")
        await census.select("evidence_turns et JOIN turns t ON t.turn_id = et.turn_id",
                            "t.scope AS scope, count(*) AS n", "t.role = 'user'", group="t.scope")
        await tx.execute("DROP TABLE scrapbook")
