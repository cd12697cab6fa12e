"""The gate: the one door through which remembered content is read.

Three ways through it, and no other (tests/test_architecture.py fails on any SELECT over a
content table written anywhere but here):

- `Gate.read(ctx, method, query)` is a read for someone. It opens a transaction, embeds the
  wall's predicate (`memory.wall`) in every SELECT it makes, passes the rows through the purpose
  lens (`memory.lens`) when asked, and when the read closes it writes the receipt, in the same
  transaction, naming what the read returned.
- A `Lane` is one scope's own write path and upkeep (asserting evidence, scrubbing a forget,
  loading a scope's vectors). Every statement it makes, select, insert, update or delete, is
  confined to that scope; it returns nothing to a reader, so it writes no receipt. Evidence
  never crosses scopes because a lane cannot see another scope. Lanes come only from the gate:
  from a write transaction the gate opened (`Gate.writing`, then `Writing.lane`) or from a
  read (`Read.lane`); constructing one elsewhere raises.
- `Census(tx)` is the machinery's view across scopes: ids, counts, times, scopes and
  watermarks. It reads only tables `memory.schema` declares and only the columns declared to
  hold no words; it refuses any content column (`CONTENT_COLUMNS`) and `*`.

A read's transaction is the gate's: a write that follows a read takes its lane from the read
(`Read.lane`), and no other module reaches into it (tests/test_architecture.py).

Every other transaction refuses a statement that reads a walled table (`memory.store` raises
`ContentRefused`): a SELECT, an INSERT ... SELECT, an UPDATE ... FROM, or a write that hands
back (RETURNING) the content it touched; and it refuses to write one: a scope's rows are
written through its lane. Only the gate reads through `unwalled(tx)`, and each
of its statements carries the wall's rule, a lane's scope, or the census's allowlist.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import re
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory import wall
from memory.errors import ContentRefused
from memory.lens import may_use
from memory.models import REDACTED, AccessContext, Activity, Grant, Sensitivity
from memory.receipts import Entry, LedgerAnchor, keyed_digest, write_receipts
from memory.schema import CONTENT_COLUMNS, CONTENT_TABLES, METADATA_COLUMNS, SCOPED, declared
from memory.store import Row, Store, Tx, household, unwalled, walled_source

# The walled tables, the columns that hold words, and how each walled row reaches its scope
# (`{}` is the wall's, or the lane's, rule over a `scope` column) come from the declaration of
# every table (`memory.schema`); so does what the census may read.
_SCOPED = SCOPED
_WORD = re.compile(r"[A-Za-z_]+")
_LITERAL = re.compile(r"'[^']*'")
_ALIAS = re.compile(r"\bAS\s+([A-Za-z_]+)", re.IGNORECASE)
# The words of SQL the census's statements use; anything else they name must be declared.
_SQL_WORDS = frozenset((
    "select", "from", "where", "and", "or", "not", "in", "is", "null", "as", "distinct", "count",
    "max", "min", "sum", "avg", "total", "group", "by", "order", "asc", "desc", "limit", "join",
    "on", "left", "inner", "cross", "case", "when", "then", "else", "end", "like", "escape",
    "between", "exists", "coalesce", "ifnull", "length", "abs", "substr", "instr", "lower",
    "upper", "date", "datetime", "julianday", "strftime", "cast", "integer", "real",
))


def _aliases(source_words: Sequence[str]) -> set[str]:
    """The aliases a census source gives its tables ("evidence_turns et JOIN turns t")."""
    out = set()
    for before, word in itertools.pairwise(source_words):
        if declared(before) is not None and declared(word) is None and word not in _SQL_WORDS:
            out.add(word)
    return out

# Rows a member is shown by name get an opaque one, `ref(kind, id)` in SQL: a keyed digest of
# the row's own key, so no name tells how many rows came before it or what others said
# between two of yours (`Memory.open` defines the function on its connection).
_REFS = {"beliefs": ("belief", "belief_id"), "turns": ("line", "turn_id"),
         "goals": ("goal", "goal_id"), "grants": ("grant", "grant_id")}


@functools.lru_cache(maxsize=65_536)
def ref_for(secret: bytes, kind: str, row_id: int) -> str:
    """The opaque name of one row: its kind's letter and 8 hex digits of a keyed digest
    (remembered: the same rows are named in read after read)."""
    return kind[:1] + keyed_digest(secret, f"ref\n{kind}\n{row_id}")[:8]

# A belief as a reader gets it: its evidence count, and whether a belief the reader can also
# see contradicts it (never one they cannot).
_BELIEF_VIEW = (
    "b.belief_id, b.proposition, b.norm, b.version, b.scope, b.kind, b.subject_id,"
    " b.sensitivity, b.sensitivity_by, b.log_odds, b.quarantined, b.valid_from, b.valid_to,"
    " b.superseded_by,"
    " b.created_at, b.updated_at, b.reinforced_at, b.salience,"
    " ref('belief', b.belief_id) AS ref,"
    " (SELECT count(*) FROM evidence e WHERE e.belief_id = b.belief_id) AS evidence_count"
)


def _where(table: str, rule: str) -> str:
    try:
        return _SCOPED[table].format(rule)
    except KeyError:
        raise ValueError(f"not a content table: {table!r}") from None


def _select(columns: str, table: str, where: str, order: str | None, limit: int | None) -> str:
    sql = f"SELECT {columns} FROM {table} WHERE {where}"
    if order:
        sql += f" ORDER BY {order}"
    if limit is not None:
        sql += " LIMIT ?"
    return sql


# The tiers recall searches by keyword: each table's key, its stemmed index, and which of its
# rows are indexed (members' lines only: hers are not evidence).
_KEYWORD_TIERS = {"beliefs": ("belief_id", "beliefs_fts", "1"),
                  "turns": ("turn_id", "turns_fts", "t.role = 'user'"),
                  "chunks": ("chunk_id", "chunks_fts", "1")}


_PARENT = re.compile(r"^(\w+) IN \(SELECT (\w+) FROM (\w+) WHERE (.*)\)$", re.DOTALL)


def _row_rule(table: str) -> str:
    """The rule (`{}` over a `scope` column) for one row of `table`, named by the table's own
    name: its scope column, or its parent's, looked up by key. The declared form (`_where`)
    lists the scope's ids once per statement; a lane's statements and a reader's `select`
    name a few rows, and a lookup by key costs the same at any size where a list costs the
    size of what the reader sees."""
    def down(rule: str, outer: str) -> str:
        found = _PARENT.match(rule)
        if found is None:
            return rule
        column, key, parent, inner = found.groups()
        return (f"EXISTS (SELECT 1 FROM {parent} WHERE {parent}.{key} = {outer}.{column}"
                f" AND {down(inner, parent)})")
    return down(_where(table, "{}"), table)


_ROW_RULES = {table: _row_rule(table) for table in _SCOPED}
# The columns that tie a row to its scope: its own scope, or the key of the row it hangs from.
_TIES = {table: frozenset({"scope", *(m.groups()[:1] if (m := _PARENT.match(rule)) else ())})
         for table, rule in _SCOPED.items()}
_ASSIGNED = re.compile(r"(?:^|,)\s*([A-Za-z_]+)\s*=")


def _row_where(table: str, rule: str) -> str:
    try:
        return _ROW_RULES[table].format(rule)
    except KeyError:
        raise ValueError(f"not a content table: {table!r}") from None


def _own_rule(table: str) -> str:
    return _row_where(table, "scope = ?")


_KEYWORD_INDEXES = frozenset(index for _, index, _ in _KEYWORD_TIERS.values())


def _own_words(*fragments: str) -> None:
    """A lane's caller names columns and conditions of the lane's own table: a fragment that
    reads another walled table would read past the scope, and is refused."""
    for fragment in fragments:
        if (table := walled_source(f"SELECT {fragment}")) is not None:
            raise ContentRefused(f"a lane reads only its own scope's rows, not {table}")


STATED_BY = re.compile(r"^statement:([^:]+):")  # a member told it outright (`remember`)


@dataclass
class Sources:
    """What a belief rests on, as a reader may learn it (`Read.evidence_lines`)."""

    lines: set[int] = field(default_factory=set)
    tellers: set[str] = field(default_factory=set)


@dataclass
class Keyword:
    """A tier's keyword statistics for one reader (see `Read.keyword`)."""

    documents: int
    frequencies: list[int] = field(default_factory=list)
    ids: list[list[int]] = field(default_factory=list)


class Read:
    """One receipted read in progress: what the wall lets through, what the lens allows, and
    what the receipt will name."""

    def __init__(self, tx: Tx, ctx: AccessContext, now: str,
                 shared: _Together | None = None) -> None:
        self._given = tx  # walled: what a lane of this read writes through
        self._tx = unwalled(tx)
        self.ctx = ctx
        self.now = now
        self.ids: list[int] = []
        self.scopes: list[str] = []
        self.suppressed = 0
        self.others: dict[str, tuple[list[int], list[str]]] = {}
        self._grants: list[Grant] | None = None if shared is None else shared.grants
        self._shared = shared

    def lane(self, scope: str) -> Lane:
        """One scope's lane inside this read's transaction, for the write path that follows
        the read (a forget, a dream's merges): only a scope the reader may see."""
        if not wall.is_visible(self.ctx, scope):
            raise ValueError(f"a read for {self.ctx.actor} has no lane into {scope!r}")
        return Lane(self._given, scope, key=_KEY)

    def census(self) -> Census:
        """The machinery's view, inside this read's transaction: no words, ids and times."""
        return Census(self._given)

    async def contradiction_edges(self, ids: Sequence[int]) -> list[tuple[int, int]]:
        """The contradictions between two of these beliefs (ids the reader already has)."""
        marks = ", ".join("?" for _ in ids) or "NULL"
        rows = await self._tx.fetchall(
            f"SELECT low_id, high_id FROM contradictions WHERE low_id IN ({marks})"
            f" AND high_id IN ({marks}) ORDER BY low_id, high_id", (*ids, *ids))
        return [(int(r["low_id"]), int(r["high_id"])) for r in rows]

    def wall(self, column: str = "scope") -> wall.Predicate:
        return wall.predicate(self.ctx, column)

    def returned(self, ids: Sequence[int], scopes: Sequence[str], *,
                 method: str | None = None) -> None:
        """Name what this read hands back; the receipt records it. Rows of another kind than
        the read's own (a recall's quoted lines beside its beliefs) name their `method`, and
        get a receipt of their own when there are any."""
        if method is None:
            self.ids.extend(ids)
            self.scopes.extend(scopes)
            return
        other_ids, other_scopes = self.others.setdefault(method, ([], []))
        other_ids.extend(ids)
        other_scopes.extend(scopes)

    async def select(
        self,
        table: str,
        where: str = "1",
        params: Sequence[object] = (),
        *,
        columns: str = "*",
        order: str | None = None,
        limit: int | None = None,
    ) -> list[Row]:
        """Rows of a content table that the wall lets this reader see and `where` matches."""
        rule = self.wall()
        scoped = _row_where(table, rule.sql)
        if table in _REFS and columns == "*":
            kind, key = _REFS[table]
            columns = f"*, ref('{kind}', {key}) AS ref"
        sql = _select(columns, table, f"{scoped} AND ({where})", order, limit)
        tail = () if limit is None else (limit,)
        return await self._tx.fetchall(sql, (*rule.params, *params, *tail))

    async def members(self) -> dict[str, str]:
        """The household's roster, person id to name: who a question or a line may name. Not
        remembered content (every member sees the names in the group), so not receipted."""
        rows = await self._tx.fetchall("SELECT person_id, name FROM people ORDER BY person_id")
        return {str(r["person_id"]): str(r["name"]) for r in rows}

    async def beliefs(
        self,
        where: str = "1",
        params: Sequence[object] = (),
        *,
        order: str = "b.belief_id",
        limit: int = -1,
    ) -> list[Row]:
        """Belief rows (alias `b`) this reader may see, with `evidence_count`, and a
        `contradicted` flag computed only from contradicting beliefs they can also see."""
        rule, other = self.wall("b.scope"), self.wall("o.scope")
        # The rows are chosen (and ranked, and cut to `limit`) on the table's own columns
        # first; the view's costly columns (evidence count, contradiction, ref) are computed
        # for the chosen rows only, not for every row a sort had to look at.
        sql = (
            f"SELECT {_BELIEF_VIEW},"
            " EXISTS (SELECT 1 FROM contradictions c JOIN beliefs o ON o.belief_id ="
            "   CASE WHEN c.low_id = b.belief_id THEN c.high_id ELSE c.low_id END"
            "   WHERE (c.low_id = b.belief_id OR c.high_id = b.belief_id)"
            f"   AND {other.sql} AND o.superseded_by IS NULL AND o.log_odds >= b.log_odds)"
            " AS contradicted"
            " FROM beliefs b WHERE b.belief_id IN (SELECT b.belief_id FROM beliefs b"
            f"  WHERE {rule.sql} AND ({where}) ORDER BY {order} LIMIT ?)"
            f" ORDER BY {order}"
        )
        return await self._tx.fetchall(sql, (*other.params, *rule.params, *params, limit))

    async def contradicting(self, belief_id: int) -> tuple[int, ...]:
        """Ids of the beliefs this reader may see that contradict `belief_id`."""
        other = self.wall("o.scope")
        rows = await self._tx.fetchall(
            "SELECT o.belief_id FROM contradictions c JOIN beliefs o ON o.belief_id ="
            " CASE WHEN c.low_id = ? THEN c.high_id ELSE c.low_id END"
            f" WHERE (c.low_id = ? OR c.high_id = ?) AND {other.sql} ORDER BY o.belief_id",
            (belief_id, belief_id, belief_id, *other.params),
        )
        return tuple(int(r["belief_id"]) for r in rows)

    async def evidence_lines(self, belief_ids: Sequence[int]) -> dict[int, Sources]:
        """What each of these visible beliefs rests on: the ids of its lines, and the members
        who told it (who said those lines, or stated it outright). A line is reached through
        the wall as well, so a teller is never learned from a row the reader cannot see."""
        if not belief_ids:
            return {}
        rule, heard = self.wall("b.scope"), self.wall("t.scope")
        marks = ", ".join("?" for _ in belief_ids)
        rows = await self._tx.fetchall(
            "SELECT e.belief_id, et.turn_id, t.speaker_id,"
            " CASE WHEN e.source LIKE 'statement:%' THEN e.source END AS statement"
            " FROM evidence e JOIN beliefs b ON b.belief_id = e.belief_id"
            " LEFT JOIN evidence_turns et ON et.evidence_id = e.evidence_id"
            f" LEFT JOIN turns t ON t.turn_id = et.turn_id AND {heard.sql}"
            f" WHERE e.belief_id IN ({marks}) AND {rule.sql}",
            (*heard.params, *belief_ids, *rule.params))
        found: dict[int, Sources] = {}
        for row in rows:
            sources = found.setdefault(int(row["belief_id"]), Sources())
            if row["turn_id"] is not None:
                sources.lines.add(int(row["turn_id"]))
            if row["speaker_id"] is not None:
                sources.tellers.add(str(row["speaker_id"]))
            if row["statement"] is not None and (stated := STATED_BY.match(row["statement"])):
                sources.tellers.add(stated.group(1))
        return found

    async def around(self, line_ids: Sequence[int], count: int, *,
                     later: bool = False) -> dict[int, list[Row]]:
        """For each of these lines, the `count` lines said just before it in its chat (or just
        after it, `later`), nearest first, with their `ref`: the lines this reader may see and
        this work may use, and not forgotten. A line held back is left out as if it had not been
        said (and not counted), so it cannot change what is made of the lines around it."""
        if not line_ids:
            return {}
        rule = self.wall("p.scope")
        marks = ", ".join("?" for _ in line_ids)
        side, nearest = (">", "ASC") if later else ("<", "DESC")
        rows = await self._tx.fetchall(
            "SELECT p.*, ref('line', p.turn_id) AS ref, t.turn_id AS line"
            " FROM turns t JOIN turns p ON p.turn_id IN (SELECT q.turn_id FROM turns q"
            f"  WHERE q.chat_id = t.chat_id AND q.turn_id {side} t.turn_id"
            f"  ORDER BY q.turn_id {nearest} LIMIT ?)"
            f" WHERE t.turn_id IN ({marks}) AND {rule.sql} AND p.text != ?"
            f" ORDER BY t.turn_id, p.turn_id {nearest}",
            (count, *line_ids, *rule.params, REDACTED))
        grants = await self.grants()
        found: dict[int, list[Row]] = {}
        for row in rows:
            if may_use(self.ctx, str(row["scope"]), Sensitivity(row["sensitivity"]), grants,
                       self.now):
                found.setdefault(int(row["line"]), []).append(row)
        return found

    async def keyword(self, tier: str, matches: Sequence[str], cap: int) -> Keyword:
        """Keyword statistics of one tier (`beliefs`, `turns` or `chunks`) over the rows this
        reader may see, and nothing else: how many rows they see in all, and for each FTS5
        query in `matches` how many of those match it and the ids of up to `cap` of them (the
        newest, when more match). A row behind the wall is never counted, so it cannot shape a
        score."""
        key, index, only = _KEYWORD_TIERS[tier]
        rule = self.wall("t.scope")
        visible = f"SELECT count(*) FROM {tier} t WHERE {rule.sql}"
        # One statement for the whole tier, one trip to the database thread: each word's newest
        # `cap + 1` visible matches, their ids as one string (not a row apiece), and for a word
        # that common the visible rows since the oldest of its newest `cap` (see below).
        newest = (f"SELECT f.rowid AS id FROM {index} f JOIN {tier} t ON t.{key} = f.rowid"
                  f" WHERE {index} MATCH ? AND {only} AND {rule.sql}"
                  " ORDER BY f.rowid DESC LIMIT ?")
        columns = [f"({visible})"]
        params: list[object] = list(rule.params)
        for i, _ in enumerate(matches):
            columns.append(f"(SELECT group_concat(id) FROM m{i})")
            columns.append(
                f"CASE WHEN (SELECT count(*) FROM m{i}) > ? THEN ({visible} AND t.{key} >="
                f" (SELECT min(id) FROM (SELECT id FROM m{i} ORDER BY id DESC LIMIT ?))) END")
            params += [cap, *rule.params, cap]
        ctes = [f"m{i} AS MATERIALIZED ({newest})" for i, _ in enumerate(matches)]
        sql = ("WITH " + ", ".join(ctes) + " " if ctes else "") + "SELECT " + ", ".join(columns)
        head = [p for match in matches for p in (match, *rule.params, cap + 1)]
        row = await self._tx.fetchone(sql, (*head, *params))
        if row is None:
            raise ValueError("a count gave no row")
        found = Keyword(documents=int(row[0]))
        for i, _ in enumerate(matches):
            joined, since = row[1 + 2 * i], row[2 + 2 * i]
            ids = sorted(map(int, str(joined).split(",")), reverse=True) if joined else []
            count = len(ids)
            if count > cap:
                # A word this common weighs little, and counting every row holding it is most
                # of a recall's time at 100k rows: its count is estimated from the visible rows
                # since the oldest of its newest `cap` (visible rows only, so exact for what
                # the reader sees in that span, and nothing hidden shapes it).
                count = max(cap, round(cap * found.documents / max(int(since), 1)))
            found.frequencies.append(count)
            found.ids.append(ids[:cap])
        return found

    async def replacements(self, tier: str, ids: Sequence[int]) -> list[tuple[int, int]]:
        """The marks (old id, new id) of `tier` ("beliefs" or "turns") naming any of these
        rows, where both rows are ones this reader may see and this work may use: a mark and
        its two rows share one scope, so the wall is the mark's, and the lens is asked of each
        row's sensitivity."""
        if not ids:
            return []
        key = {"beliefs": "belief_id", "turns": "turn_id"}[tier]
        rule = self.wall("r.scope")
        marks = ", ".join("?" for _ in ids)
        pick = (f"SELECT r.old_id, r.new_id, r.scope, o.sensitivity AS old_class,"
                f" n.sensitivity AS new_class FROM replacements r"
                f" JOIN {tier} o ON o.{key} = r.old_id JOIN {tier} n ON n.{key} = r.new_id"
                f" WHERE r.tier = ? AND {rule.sql} AND r.{{side}} IN ({marks})")
        rows = await self._tx.fetchall(
            pick.format(side="old_id") + " UNION " + pick.format(side="new_id"),
            (tier, *rule.params, *ids, tier, *rule.params, *ids))
        grants = await self.grants()
        return [(int(r["old_id"]), int(r["new_id"])) for r in rows
                if all(may_use(self.ctx, str(r["scope"]), Sensitivity(r[side]), grants, self.now)
                       for side in ("old_class", "new_class"))]

    async def reply_memories(self, chat_id: str) -> list[tuple[str, int, str, str]]:
        """What her last reply in a chat this reader sees was given from memory, as its turn
        log keeps it: (tier, id, verdict, why) each, ids the reader must still read through
        the wall. [] when she has not replied there, or the reply is not theirs to see."""
        rule = self.wall("t.scope")
        row = await self._tx.fetchone(
            "SELECT l.memories FROM turns t JOIN turn_log l ON l.turn_id = t.turn_id"
            f" WHERE t.chat_id = ? AND t.role = 'assistant' AND {rule.sql}"
            " ORDER BY t.turn_id DESC LIMIT 1", (chat_id, *rule.params))
        if row is None:
            return []
        return [(str(tier), int(row_id), str(verdict), str(why))
                for tier, row_id, verdict, why in json.loads(row["memories"])]

    async def ledger(self, where: str = "1", params: Sequence[object] = (), *,
                     order: str = "seq", limit: int = -1) -> list[Row]:
        """Receipts this reader may list (`wall.ledger_predicate`)."""
        rule = wall.ledger_predicate(self.ctx)
        return await self._tx.fetchall(
            f"SELECT * FROM receipts WHERE {rule.sql} AND ({where}) ORDER BY {order} LIMIT ?",
            (*rule.params, *params, limit),
        )

    async def usable(self, rows: Sequence[Row], *, unread: Collection[int] = ()) -> list[Row]:
        """The rows (already behind the wall) the purpose lens lets this work use, in order;
        the rest are counted as held back. Members' lines among `unread` (ids of lines whose
        meaning is not yet read, `VectorBook.unfiled`) are judged as the most private class:
        a line of unknown class is used only where a credential could be."""
        grants = await self.grants()
        allowed = [
            r for r in rows
            if may_use(self.ctx, str(r["scope"]),
                       Sensitivity.CREDENTIALS if unread and int(r["turn_id"]) in unread
                       else Sensitivity(r["sensitivity"]), grants, self.now)
        ]
        self.suppressed += len(rows) - len(allowed)
        return allowed

    async def grants(self) -> list[Grant]:
        """Active-or-not grants over the scopes this reader sees, for this activity (the lens
        decides which of them open anything). Their notes are not read."""
        if self._grants is None:
            rule = self.wall()
            rows = await self._tx.fetchall(
                f"SELECT {GRANT_COLUMNS} FROM grants WHERE {rule.sql} AND activity = ?"
                " AND revoked_at IS NULL",
                (*rule.params, self.ctx.activity.value),
            )
            self._grants = [grant_from_row(r) for r in rows]
            if self._shared is not None:  # the block's other reads: same reader, same tx
                self._shared.grants = self._grants
        return self._grants


GRANT_COLUMNS = (
    "grant_id, grantor_id, scope, activity, sensitivity, beneficiary_id, created_at,"
    " expires_at, revoked_at, mind, ref('grant', grant_id) AS ref"
)


def grant_from_row(row: Row, note: str = "") -> Grant:
    return Grant(
        grant_id=int(row["grant_id"]),
        grantor_id=str(row["grantor_id"]),
        scope=str(row["scope"]),
        activity=Activity(row["activity"]),
        sensitivity=Sensitivity(row["sensitivity"]),
        beneficiary_id=row["beneficiary_id"],
        note=note,
        created_at=str(row["created_at"]),
        expires_at=row["expires_at"],
        revoked_at=row["revoked_at"],
        ref=str(row["ref"]),
        mind=row["mind"],
    )


# What the gate hands a lane it makes: a lane constructed without it raises.
_KEY = object()


class Lane:
    """One scope's own rows, for that scope's write path and upkeep. Every statement it makes
    is confined to `scope`: what it selects, and what it inserts, updates and deletes (a row
    of another scope is neither seen nor touched). Nothing read here is handed to a reader, so
    no receipt is written.

    Made only by the gate (`Writing.lane`, `Read.lane`). The transaction stays the gate's:
    the household's own tables (tombstones, a member's classes) are written through
    `household`, which, like every transaction outside the gate, refuses to read or write
    content."""

    def __init__(self, tx: Tx, scope: str, *, key: object = None) -> None:
        if key is not _KEY:
            raise TypeError("a lane comes from the gate: Gate.writing() or Read.lane()")
        self.scope = scope
        self._reads = unwalled(tx)
        self.household = household(tx)

    async def insert(self, table: str, row: Mapping[str, object], *, ignore: bool = False,
                     upsert: str = "") -> int:
        """Add `row` to `table` if it belongs to this scope (its scope column, or the row it
        hangs from); returns its rowid (0 when `ignore` skipped it). `ignore` skips a row a
        unique key already holds; `upsert` is an `ON CONFLICT ...` clause. A row of another
        scope raises and writes nothing."""
        _own_words(upsert)
        sql = self._inserting(table, list(row), "OR IGNORE" if ignore else "")
        sql += f" {upsert}" if upsert else ""
        rowid = await self._reads.execute(sql, (*row.values(), self.scope))
        # An upsert that updated says so only in the count of changes, not in a rowid.
        landed = rowid or (upsert and await self._reads.scalar("SELECT changes()"))
        if not landed and not ignore:
            raise ValueError(f"a lane of {self.scope!r} writes only its own rows of {table}")
        return rowid

    async def insert_many(self, table: str, columns: Sequence[str],
                          rows: Sequence[Sequence[object]], *, ignore: bool = False,
                          replace: bool = False) -> None:
        """Add each of `rows` (values in the order of `columns`) to `table`, as `insert`;
        `replace` puts each in place of a row its unique key already holds."""
        if not rows:
            return
        conflict = "OR IGNORE" if ignore else "OR REPLACE" if replace else ""
        changed = await self._reads.executemany(self._inserting(table, columns, conflict),
                                                [(*row, self.scope) for row in rows])
        if changed < len(rows) and not ignore:
            raise ValueError(f"a lane of {self.scope!r} writes only its own rows of {table}")

    def _inserting(self, table: str, columns: Sequence[str], conflict: str) -> str:
        # The values pass through the scope's rule before they land: a row that does not
        # belong to this scope selects nothing, so nothing is inserted.
        names = ", ".join(columns)
        new = ", ".join(f"? AS {column}" for column in columns)
        return (f"INSERT {conflict} INTO {table}({names}) SELECT {names} FROM (SELECT {new})"
                f" AS {table} WHERE {_own_rule(table)}")

    async def update(self, table: str, assignments: str, where: str,
                     params: Sequence[object] = ()) -> int:
        """`UPDATE table SET assignments WHERE where`, on this scope's rows only (`params`
        fill the assignments, then the condition); returns how many rows changed. What ties
        a row to its scope (its scope, its parent) is not changed here: a row would leave."""
        _own_words(assignments, where)
        assigned = {c.casefold() for c in _ASSIGNED.findall(_LITERAL.sub("''", assignments))}
        if assigned & _TIES.get(table, frozenset()):
            raise ValueError(f"a lane's update keeps its rows of {table} in {self.scope!r}")
        return await self._reads.execute(
            f"UPDATE {table} SET {assignments} WHERE ({where}) AND {_own_rule(table)}",
            (*params, self.scope))

    async def delete(self, table: str, where: str = "1", params: Sequence[object] = ()) -> int:
        """Delete this scope's rows of `table` that meet `where`; returns how many went."""
        _own_words(where)
        return await self._reads.execute(
            f"DELETE FROM {table} WHERE ({where}) AND {_own_rule(table)}",
            (*params, self.scope))

    async def merge_indexes(self, *indexes: str) -> None:
        """Rewrite keyword indexes whole, so words deleted from them leave their segments
        (FTS5 keeps them until a merge): no row of anyone's is read or written."""
        for index in indexes:
            if index not in _KEYWORD_INDEXES:
                raise ValueError(f"not a keyword index: {index!r}")
            await self._reads.execute(f"INSERT INTO {index}({index}) VALUES ('optimize')")

    async def select(
        self,
        table: str,
        where: str = "1",
        params: Sequence[object] = (),
        *,
        columns: str = "*",
        order: str | None = None,
        limit: int | None = None,
    ) -> list[Row]:
        _own_words(columns, where, order or "")
        sql = _select(columns, table, f"{_own_rule(table)} AND ({where})", order, limit)
        tail = () if limit is None else (limit,)
        return await self._reads.fetchall(sql, (self.scope, *params, *tail))

    async def one(self, table: str, where: str, params: Sequence[object] = (), *,
                  columns: str = "*") -> Row | None:
        rows = await self.select(table, where, params, columns=columns, limit=1)
        return rows[0] if rows else None

    async def value(self, table: str, column: str, where: str,
                    params: Sequence[object] = ()) -> object:
        row = await self.one(table, where, params, columns=f"{column} AS value")
        return None if row is None else row["value"]


class Census:
    """The machinery's view across scopes: ids, counts, times, scopes and watermarks, never a
    content column, never `*`."""

    def __init__(self, tx: Tx) -> None:
        self._tx = unwalled(tx)  # its own allowlist stands in for the wall: no content at all

    async def select(
        self,
        source: str,
        columns: str,
        where: str = "1",
        params: Sequence[object] = (),
        *,
        group: str | None = None,
        order: str | None = None,
        limit: int | None = None,
    ) -> list[Row]:
        said = _LITERAL.sub("''", " ".join((source, columns, where, group or "", order or "")))
        words = {w.casefold() for w in _WORD.findall(said)}
        if "*" in columns.replace("count(*)", "") or words & CONTENT_COLUMNS:
            raise ValueError(f"the census reads no content: {columns!r} from {source!r}")
        # An allowlist: every name is a declared table, an alias given here, a word of SQL, or
        # a column `memory.schema` declares as holding no words.
        named = [w.casefold() for w in _WORD.findall(_LITERAL.sub("''", source))]
        tables = {w for i, w in enumerate(named) if i == 0 or named[i - 1] in ("join", "from")}
        undeclared = {t for t in tables if declared(t) is None}
        if undeclared:
            raise ValueError(f"the census reads only declared tables: {sorted(undeclared)}")
        aliases = _aliases(named) | {a.casefold() for a in _ALIAS.findall(columns)}
        unknown = words - METADATA_COLUMNS - _SQL_WORDS - tables - aliases
        if unknown:
            raise ValueError(f"the census reads only declared metadata: {sorted(unknown)}")
        sql = f"SELECT {columns} FROM {source} WHERE {where}"
        if group:
            sql += f" GROUP BY {group}"
        if order:
            sql += f" ORDER BY {order}"
        if limit is not None:
            sql += " LIMIT ?"
        return await self._tx.fetchall(sql, (*params, *(() if limit is None else (limit,))))

    async def value(self, source: str, column: str, where: str = "1",
                    params: Sequence[object] = ()) -> object:
        rows = await self.select(source, f"{column} AS value", where, params, limit=1)
        return None if not rows else rows[0]["value"]


class Writing(Tx):
    """A write transaction the gate opened (`Gate.writing`): it refuses to read or write
    content like any other, and it is where the lanes of the scopes it writes come from."""

    def lane(self, scope: str) -> Lane:
        """One scope's lane in this transaction: its statements confined to `scope`."""
        return Lane(self, scope, key=_KEY)

    async def lanes(self, table: str, where: str = "1",
                    params: Sequence[object] = ()) -> list[Lane]:
        """The lanes of the scopes holding rows of `table` that meet `where` (a condition
        over columns without words: the census reads it), to write those rows in each."""
        rows = await Census(self).select(table, "DISTINCT scope", where, params, order="scope")
        return [self.lane(str(r["scope"])) for r in rows]


@dataclass
class _Together:
    """The transaction `Gate.together` holds, whom its reads are for, and their receipts."""

    gate: Gate
    ctx: AccessContext
    tx: Tx
    task: asyncio.Task[Any] | None
    receipts: list[Entry] = field(default_factory=list)  # written together as the block ends
    grants: list[Grant] | None = None  # read once for the block's reader


# The `together` block the running task is inside, if any. A task started inside it inherits
# the variable but not the block: only the task that opened it reads in its transaction.
_TOGETHER: ContextVar[_Together | None] = ContextVar("hearth_gate_together", default=None)


class Gate:
    """Opens receipted reads over one store."""

    def __init__(self, store: Store, secret: bytes, anchor: LedgerAnchor,
                 now: Callable[[], datetime]) -> None:
        self._store = store
        self._secret = secret
        self._anchor = anchor
        self._now = now

    def writing(self) -> AbstractAsyncContextManager[Writing]:
        """A write transaction whose lanes read one scope each (`Writing.lane`): a write path
        and upkeep that must read a scope's own rows, which it hands to no reader."""
        return self._store.opened(Writing)

    @asynccontextmanager
    async def together(self, ctx: AccessContext) -> AsyncIterator[None]:
        """The reads for `ctx` this task makes inside the block share one transaction: each
        is walled, lensed and receipted as on its own (the receipts chained in one statement
        as the block ends), and all of them commit (or none) when the block ends. A turn
        reads what it needs at one trip to the database instead of queueing once per read
        behind every other member's turn. Any other transaction this task opens inside it
        (the household's own state) joins it (`Store.joined`)."""
        inside = _TOGETHER.get()
        if inside is not None and inside.task is asyncio.current_task():
            raise RuntimeError("reads already share a transaction here")
        seq = None
        async with self._store.joined() as tx:
            shared = _Together(self, ctx, tx, asyncio.current_task())
            token = _TOGETHER.set(shared)
            try:
                yield
            finally:
                _TOGETHER.reset(token)
            if shared.receipts:  # every read's receipts, chained, in one statement
                seq = await write_receipts(tx, shared.receipts, secret=self._secret,
                                           anchor=self._anchor)
        if seq is not None:
            self._store.committed(functools.partial(self._anchor.committed, seq))

    @asynccontextmanager
    async def read(self, ctx: AccessContext, method: str, query: str = "") -> AsyncIterator[Read]:
        """A read for `ctx`; its receipt commits with it when the block ends (a read that
        raises writes nothing and returns nothing). Inside `together`, in its transaction."""
        now = self._now().isoformat()
        shared = _TOGETHER.get()
        if shared is not None and shared.gate is self and shared.task is asyncio.current_task():
            if shared.ctx != ctx:
                raise RuntimeError("reads that share a transaction are for one reader")
            read = Read(shared.tx, ctx, now, shared)
            yield read
            shared.receipts += _receipts(read, method, query, now)
            return
        async with self._store.transaction() as tx:
            read = Read(tx, ctx, now)
            yield read
            seq = await write_receipts(tx, _receipts(read, method, query, now),
                                       secret=self._secret, anchor=self._anchor)
        self._store.committed(functools.partial(self._anchor.committed, seq))


def _receipts(read: Read, method: str, query: str, now: str) -> list[Entry]:
    """A read's receipts: one for what it returned, one for each other kind of row it named."""
    entries = [Entry(read.ctx, method, query, read.ids, read.scopes, read.suppressed, now)]
    entries += [Entry(read.ctx, other, query, ids, scopes, 0, now)
                for other, (ids, scopes) in read.others.items() if ids]
    return entries


__all__ = ["CONTENT_COLUMNS", "CONTENT_TABLES", "Census", "Gate", "Lane", "Read", "Writing"]
