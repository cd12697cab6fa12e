"""Every table of the database, once: its columns, which of them hold words, and how its rows
reach a scope.

The gate is built from this list: the wall's predicate for each walled table (`scope`), the
content tables only the gate may select from, and the census's allowlist (every column listed
here that holds no words). A table or a column the migrations add and this list does not name
fails `tests/memory/test_schema.py`, and the census refuses to read it, so nothing new is
readable across scopes until someone has said what it holds and whose it is.

Owns: the declaration. Must not: run SQL.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    """One table: its columns; those that hold words, their embeddings or a message's body
    (`content`); and how a row reaches the scope it lives in (`scope`: "{}" is the wall's rule
    over its own `scope` column, a subquery reaches it through the row's parent; None for the
    household's machinery, which holds no member's scope)."""

    columns: tuple[str, ...]
    content: frozenset[str] = frozenset()
    scope: str | None = None
    why_unwalled: str = ""  # for a table with content and no scope: who alone reads it

    @property
    def metadata(self) -> frozenset[str]:
        return frozenset(self.columns) - self.content


def _cols(spec: str) -> tuple[str, ...]:
    return tuple(spec.split())


_BY_BELIEF = "belief_id IN (SELECT belief_id FROM beliefs WHERE {})"

TABLES: dict[str, Table] = {
    # What members said and what she concluded from it: walled.
    "turns": Table(_cols("turn_id chat_id speaker_id role scope sensitivity text at"
                         " source_update sensitivity_by"), frozenset({"text"}), "{}"),
    "beliefs": Table(_cols("belief_id proposition norm scope kind subject_id sensitivity log_odds"
                           " version quarantined salience valid_from valid_to superseded_by"
                           " created_at updated_at reinforced_at sensitivity_by"),
                     frozenset({"proposition", "norm"}), "{}"),
    "summaries": Table(_cols("summary_id scope chat_id text sensitivity through_turn_id"
                             " updated_at"), frozenset({"text"}), "{}"),
    "goals": Table(_cols("goal_id person_id scope text norm sensitivity priority state due"
                         " provenance source_turn_id created_at updated_at"),
                   frozenset({"text", "norm"}), "{}"),
    "grants": Table(_cols("grant_id grantor_id scope activity sensitivity beneficiary_id note"
                          " created_at expires_at revoked_at mind"), frozenset({"note"}), "{}"),
    "replacements": Table(_cols("tier old_id new_id scope similarity at"), scope="{}"),
    "evidence": Table(_cols("evidence_id belief_id source sign weight provenance reliability"
                            " version at"), scope=_BY_BELIEF),
    "belief_vectors": Table(_cols("belief_id model vector"), frozenset({"vector"}), _BY_BELIEF),
    "turn_vectors": Table(_cols("turn_id model vector"), frozenset({"vector"}),
                          "turn_id IN (SELECT turn_id FROM turns WHERE {})"),
    "evidence_turns": Table(_cols("evidence_id turn_id"),
                            scope="evidence_id IN (SELECT evidence_id FROM evidence WHERE"
                                  " belief_id IN (SELECT belief_id FROM beliefs WHERE {}))"),
    # The keyword indexes: their words are the stemmed words of turns and beliefs.
    "turns_fts": Table(_cols("text"), frozenset({"text"}), "rowid IN (SELECT turn_id FROM turns"
                                                           " WHERE {})"),
    "beliefs_fts": Table(_cols("proposition"), frozenset({"proposition"}),
                         "rowid IN (SELECT belief_id FROM beliefs WHERE {})"),
    # The shelf: documents sent in chat and their passages (`memory.knowledge`).
    "documents": Table(_cols("document_id scope title format added_by sensitivity size pages"
                             " passages created_at"), frozenset({"title"}), "{}"),
    "chunks": Table(_cols("chunk_id document_id scope seq page section text sensitivity"
                          " sensitivity_by"), frozenset({"section", "text"}), "{}"),
    "chunk_vectors": Table(_cols("chunk_id model vector"), frozenset({"vector"}),
                           "chunk_id IN (SELECT chunk_id FROM chunks WHERE {})"),
    "chunks_fts": Table(_cols("text"), frozenset({"text"}),
                        "rowid IN (SELECT chunk_id FROM chunks WHERE {})"),
    # Voice notes and photos waiting to be heard or seen: a file id is a member's media.
    "media_waiting": Table(_cols("media_id kind file_id chat_id telegram_chat speaker_id scope at"
                                 " attempts"), frozenset({"file_id"}), "{}"),
    # A chat's snapshot (`memory.snapshots`): who was around, open questions, reminders due.
    "snapshots": Table(_cols("snapshot_id scope chat_id body through_turn_id made_at"),
                       frozenset({"body"}), "{}"),
    # Words that are not read across scopes: each read only by the module that writes it.
    "sensitivity_overrides": Table(
        _cols("scope norm sensitivity set_by at"), frozenset({"norm"}),
        why_unwalled="a member's own class for a belief: the belief book, in that belief's scope"),
    "inbox": Table(_cols("update_id chat_id payload state attempts received_at done_at"),
                   frozenset({"payload"}),
                   why_unwalled="a member's update until its turn is stored: bot intake only"),
    "outbox": Table(_cols("reply_id chat_id update_id reply_to text parts_sent message_ids state"
                          " attempts created_at sent_at"), frozenset({"text"}),
                    why_unwalled="her reply to one chat until Telegram has it: the courier only"),
    "persona_proposals": Table(_cols("proposal_id text reason proposed_by state created_at"
                                     " decided_at decided_by"), frozenset({"text", "reason"}),
                               why_unwalled="edits to how she talks to everyone: the owner's"),
    "dream_reports": Table(_cols("report_id at report")),
    "ledger_keying": Table(_cols("keyed_at rows broken_at reason"), frozenset({"reason"}),
                           why_unwalled="why the ledger was re-keyed: the owner's audit"),
    # The household's machinery: ids, times, counts, states; no member's words.
    "affect": Table(_cols("key valence arousal drives updated_at")),
    "bootstrap_done": Table(_cols("person_id at")),
    "consolidation_failures": Table(_cols("scope after_turn_id attempts at")),
    "consolidation_marks": Table(_cols("scope through_turn_id updated_at")),
    "contradictions": Table(_cols("low_id high_id at")),
    "evidence_rehoming": Table(_cols("done_at moved")),
    "household_chats": Table(_cols("chat_id enabled_by enabled_at")),
    "invites": Table(_cols("code_digest created_by created_at expires_at used_at used_by")),
    "member_settings": Table(_cols("person_id timezone quiet_start quiet_end updated_at")),
    "media_notices": Table(_cols("person_id kind at")),
    "migrations": Table(_cols("name applied_at")),
    # Other agents' credentials: a name, the member each acts for, a keyed digest of its token.
    "minds": Table(_cols("mind_id name person_id token_digest created_at revoked_at")),
    "people": Table(_cols("person_id name telegram_id is_owner created_at")),
    "receipts": Table(_cols("seq at actor activity purpose method query_digest returned_ids"
                            " scopes suppressed prev_hash hash")),
    "reminder_firings": Table(_cols("reminder_id due_at person_id fired_at local_day why"
                                    " self_started turn_id reply_id template_version used")),
    "reminders": Table(_cols("reminder_id person_id scope kind goal_id chat_id telegram_chat"
                             " due_at zone recurrence wall exact self_started snoozed state"
                             " source_turn_id created_at updated_at")),  # words: its goal's
    "tombstones": Table(_cols("fingerprint at")),
    "turn_log": Table(_cols("turn_id template_version tokens belief_ids at memories")),
}

# FTS5 keeps an index's words in tables of its own, named after it.
FTS_SHADOWS = ("_data", "_idx", "_docsize", "_config", "_content")


def declared(name: str) -> Table | None:
    """The declaration of a table, or of the FTS5 index a shadow table belongs to."""
    if name in TABLES:
        return TABLES[name]
    for suffix in FTS_SHADOWS:
        if name.endswith(suffix) and name.removesuffix(suffix) in TABLES:
            return TABLES[name.removesuffix(suffix)]
    return None


# Walled: only the gate selects from them, and every select carries the wall's rule.
CONTENT_TABLES = frozenset(name for name, t in TABLES.items() if t.scope is not None)
SCOPED = {name: t.scope for name, t in TABLES.items() if t.scope is not None}
# Every column of any table that holds words or their embeddings: never read by the census.
CONTENT_COLUMNS = frozenset(c for t in TABLES.values() for c in t.content)
# What the census may name: every column no table keeps words in.
METADATA_COLUMNS = frozenset(c for t in TABLES.values() for c in t.metadata) - CONTENT_COLUMNS
