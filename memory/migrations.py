"""Named schema migrations, applied in order, each recorded in its own transaction.

Owns: the schema. Must not: be edited in place once released; a change is a new named step.
Every content table carries a NOT NULL scope, so no row can fall outside the wall.
"""

from __future__ import annotations

_SCOPE_CHECK = "CHECK (scope = 'shared' OR (scope LIKE 'private:_%'))"

_INITIAL: tuple[str, ...] = (
    """CREATE TABLE people (
        person_id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        telegram_id INTEGER UNIQUE,
        is_owner INTEGER NOT NULL DEFAULT 0 CHECK (is_owner IN (0, 1)),
        created_at TEXT NOT NULL
    )""",
    "CREATE UNIQUE INDEX people_one_owner ON people(is_owner) WHERE is_owner = 1",
    f"""CREATE TABLE turns (
        turn_id INTEGER PRIMARY KEY,
        chat_id TEXT NOT NULL,
        speaker_id TEXT REFERENCES people(person_id) ON DELETE SET NULL,
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
        scope TEXT NOT NULL {_SCOPE_CHECK},
        sensitivity TEXT NOT NULL,
        text TEXT NOT NULL,
        at TEXT NOT NULL
    )""",
    "CREATE INDEX turns_by_scope ON turns(scope, turn_id)",
    "CREATE INDEX turns_by_chat ON turns(chat_id, turn_id)",
    f"""CREATE TABLE beliefs (
        belief_id INTEGER PRIMARY KEY,
        proposition TEXT NOT NULL,
        norm TEXT NOT NULL,
        scope TEXT NOT NULL {_SCOPE_CHECK},
        kind TEXT NOT NULL,
        subject_id TEXT REFERENCES people(person_id) ON DELETE SET NULL,
        sensitivity TEXT NOT NULL,
        log_odds REAL NOT NULL DEFAULT 0,
        version INTEGER NOT NULL DEFAULT 0,
        quarantined INTEGER NOT NULL DEFAULT 0,
        salience REAL NOT NULL DEFAULT 0.5,
        valid_from TEXT,
        valid_to TEXT,
        superseded_by INTEGER REFERENCES beliefs(belief_id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        reinforced_at TEXT NOT NULL,
        UNIQUE (scope, norm)
    )""",
    "CREATE INDEX beliefs_by_scope ON beliefs(scope, belief_id)",
    "CREATE INDEX beliefs_by_subject ON beliefs(subject_id)",
    """CREATE VIRTUAL TABLE beliefs_fts USING fts5(
        proposition, content='beliefs', content_rowid='belief_id',
        tokenize='unicode61 remove_diacritics 2'
    )""",
    """CREATE TRIGGER beliefs_fts_insert AFTER INSERT ON beliefs BEGIN
        INSERT INTO beliefs_fts(rowid, proposition) VALUES (new.belief_id, new.proposition);
    END""",
    """CREATE TRIGGER beliefs_fts_delete AFTER DELETE ON beliefs BEGIN
        INSERT INTO beliefs_fts(beliefs_fts, rowid, proposition)
        VALUES ('delete', old.belief_id, old.proposition);
    END""",
    """CREATE TRIGGER beliefs_fts_update AFTER UPDATE OF proposition ON beliefs BEGIN
        INSERT INTO beliefs_fts(beliefs_fts, rowid, proposition)
        VALUES ('delete', old.belief_id, old.proposition);
        INSERT INTO beliefs_fts(rowid, proposition) VALUES (new.belief_id, new.proposition);
    END""",
    """CREATE TABLE evidence (
        evidence_id INTEGER PRIMARY KEY,
        belief_id INTEGER NOT NULL REFERENCES beliefs(belief_id) ON DELETE CASCADE,
        source TEXT NOT NULL,
        sign INTEGER NOT NULL CHECK (sign IN (-1, 1)),
        weight REAL NOT NULL CHECK (weight > 0 AND weight <= 1),
        provenance TEXT NOT NULL,
        reliability REAL NOT NULL,
        version INTEGER NOT NULL,
        at TEXT NOT NULL,
        UNIQUE (belief_id, source, sign)
    )""",
    """CREATE TABLE evidence_turns (
        evidence_id INTEGER NOT NULL REFERENCES evidence(evidence_id) ON DELETE CASCADE,
        turn_id INTEGER NOT NULL REFERENCES turns(turn_id) ON DELETE CASCADE,
        PRIMARY KEY (evidence_id, turn_id)
    )""",
    "CREATE INDEX evidence_turns_by_turn ON evidence_turns(turn_id)",
    """CREATE TABLE contradictions (
        low_id INTEGER NOT NULL REFERENCES beliefs(belief_id) ON DELETE CASCADE,
        high_id INTEGER NOT NULL REFERENCES beliefs(belief_id) ON DELETE CASCADE,
        at TEXT NOT NULL,
        PRIMARY KEY (low_id, high_id),
        CHECK (low_id < high_id)
    )""",
    "CREATE INDEX contradictions_by_high ON contradictions(high_id)",
    f"""CREATE TABLE sensitivity_overrides (
        scope TEXT NOT NULL {_SCOPE_CHECK},
        norm TEXT NOT NULL,
        sensitivity TEXT NOT NULL,
        set_by TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (scope, norm)
    )""",
    """CREATE TABLE belief_vectors (
        belief_id INTEGER PRIMARY KEY REFERENCES beliefs(belief_id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
    )""",
    "CREATE TABLE tombstones (fingerprint TEXT PRIMARY KEY, at TEXT NOT NULL)",
    f"""CREATE TABLE grants (
        grant_id INTEGER PRIMARY KEY,
        grantor_id TEXT NOT NULL REFERENCES people(person_id) ON DELETE CASCADE,
        scope TEXT NOT NULL {_SCOPE_CHECK},
        activity TEXT NOT NULL,
        sensitivity TEXT NOT NULL CHECK (sensitivity IN ('health', 'finance')),
        beneficiary_id TEXT REFERENCES people(person_id) ON DELETE CASCADE,
        note TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        expires_at TEXT,
        revoked_at TEXT
    )""",
    "CREATE INDEX grants_by_scope ON grants(scope, activity, sensitivity)",
    """CREATE TABLE receipts (
        seq INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        actor TEXT NOT NULL,
        activity TEXT NOT NULL,
        purpose TEXT NOT NULL,
        method TEXT NOT NULL,
        query_digest TEXT NOT NULL,
        returned_ids TEXT NOT NULL,
        scopes TEXT NOT NULL,
        suppressed INTEGER NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL
    )""",
    "CREATE INDEX receipts_by_actor ON receipts(actor, method, seq)",
)

# The soul's per-member state and the turn log. Content-bearing tables carry a scope.
_SOUL_STATE: tuple[str, ...] = (
    f"""CREATE TABLE summaries (
        summary_id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL {_SCOPE_CHECK},
        chat_id TEXT NOT NULL,
        text TEXT NOT NULL,
        sensitivity TEXT NOT NULL,
        through_turn_id INTEGER NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL,
        UNIQUE (scope, chat_id)
    )""",
    f"""CREATE TABLE goals (
        goal_id INTEGER PRIMARY KEY,
        person_id TEXT NOT NULL REFERENCES people(person_id) ON DELETE CASCADE,
        scope TEXT NOT NULL {_SCOPE_CHECK},
        text TEXT NOT NULL,
        norm TEXT NOT NULL,
        sensitivity TEXT NOT NULL,
        priority INTEGER NOT NULL DEFAULT 2 CHECK (priority BETWEEN 1 AND 3),
        state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'done', 'dropped')),
        due TEXT,
        provenance TEXT NOT NULL,
        source_turn_id INTEGER REFERENCES turns(turn_id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE UNIQUE INDEX goals_open_once ON goals(person_id, norm) WHERE state = 'open'",
    # Keyed by whom her mood is toward: "person:<id>" in a DM, "group:<chat>" in a group, so
    # a mood shaped by a private talk never colours what the group sees.
    """CREATE TABLE affect (
        key TEXT PRIMARY KEY,
        valence REAL NOT NULL,
        arousal REAL NOT NULL,
        drives TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    """CREATE TABLE bootstrap_done (
        person_id TEXT PRIMARY KEY REFERENCES people(person_id) ON DELETE CASCADE,
        at TEXT NOT NULL
    )""",
    """CREATE TABLE persona_proposals (
        proposal_id INTEGER PRIMARY KEY,
        text TEXT NOT NULL,
        reason TEXT NOT NULL,
        proposed_by TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending'
            CHECK (state IN ('pending', 'approved', 'rejected')),
        created_at TEXT NOT NULL,
        decided_at TEXT,
        decided_by TEXT
    )""",
    """CREATE TABLE turn_log (
        turn_id INTEGER PRIMARY KEY REFERENCES turns(turn_id) ON DELETE CASCADE,
        template_version TEXT NOT NULL,
        tokens TEXT NOT NULL,
        belief_ids TEXT NOT NULL,
        at TEXT NOT NULL
    )""",
)

# The household on Telegram and the tick. None of these rows holds what a member said:
# watermarks are ids, invites are digests, household chats are ids, dream reports are counts.
_HOUSEHOLD_AND_TICK: tuple[str, ...] = (
    f"""CREATE TABLE consolidation_marks (
        scope TEXT PRIMARY KEY {_SCOPE_CHECK},
        through_turn_id INTEGER NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    # Unusable answers for a scope's current batch (the model answered, but not in the schema),
    # so a batch a small model cannot read is eventually passed over instead of blocking.
    f"""CREATE TABLE consolidation_failures (
        scope TEXT PRIMARY KEY {_SCOPE_CHECK},
        after_turn_id INTEGER NOT NULL,
        attempts INTEGER NOT NULL,
        at TEXT NOT NULL
    )""",
    """CREATE TABLE invites (
        code_digest TEXT PRIMARY KEY,
        created_by TEXT NOT NULL REFERENCES people(person_id) ON DELETE CASCADE,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        used_at TEXT,
        used_by TEXT REFERENCES people(person_id) ON DELETE SET NULL
    )""",
    """CREATE TABLE household_chats (
        chat_id TEXT PRIMARY KEY,
        enabled_by TEXT REFERENCES people(person_id) ON DELETE SET NULL,
        enabled_at TEXT NOT NULL
    )""",
    """CREATE TABLE dream_reports (
        report_id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        report TEXT NOT NULL
    )""",
)

# Nothing a member says is lost: the inbox holds a member's update from before its offset is
# confirmed to Telegram until the turn it produced is stored; the outbox holds her reply until
# Telegram accepted every part of it. Both are transport, not memory: no read of the gate, no
# export and no recall ever reads them, and a row's text is cleared the moment it is done.
_INBOX_AND_OUTBOX: tuple[str, ...] = (
    """CREATE TABLE inbox (
        update_id INTEGER PRIMARY KEY,
        chat_id INTEGER NOT NULL,
        payload TEXT,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done')),
        attempts INTEGER NOT NULL DEFAULT 0,
        received_at TEXT NOT NULL,
        done_at TEXT,
        CHECK ((state = 'pending') = (payload IS NOT NULL))
    )""",
    "CREATE INDEX inbox_by_state ON inbox(state, update_id)",
    """CREATE TABLE outbox (
        reply_id INTEGER PRIMARY KEY,
        chat_id INTEGER NOT NULL,
        update_id INTEGER,
        reply_to INTEGER,
        text TEXT NOT NULL,
        parts_sent INTEGER NOT NULL DEFAULT 0,
        message_ids TEXT NOT NULL DEFAULT '[]',
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        sent_at TEXT
    )""",
    "CREATE INDEX outbox_by_chat ON outbox(state, chat_id, reply_id)",
    # The update a member's line came from: a turn replayed after a crash stores it once.
    "ALTER TABLE turns ADD COLUMN source_update INTEGER",
    "CREATE UNIQUE INDEX turns_by_update ON turns(source_update)"
    " WHERE source_update IS NOT NULL",
)

# The read ledger chained with an HMAC under the install secret (see `memory.receipts`). A
# ledger written before this is keyed once, in Python, the first time a hearth that knows this
# step opens it (it needs the secret, which SQL never sees); this table records that it was,
# how many rows were re-chained, and, when the old plain chain was already broken, where.
_KEYED_LEDGER: tuple[str, ...] = (
    """CREATE TABLE ledger_keying (
        keyed_at TEXT NOT NULL,
        rows INTEGER NOT NULL,
        broken_at INTEGER,
        reason TEXT
    )""",
)

# Evidence an older hearth recorded on another scope's belief is re-homed once, in Python, by
# `memory.beliefs.rehome_crossed_evidence` the first time a hearth that knows this step opens
# the database; this table records that it ran and how many evidence rows it moved.
_EVIDENCE_REHOMED: tuple[str, ...] = (
    "CREATE TABLE evidence_rehoming (done_at TEXT NOT NULL, moved INTEGER NOT NULL)",
)

# Recall by stems, over both tiers of her memory. The keyword indexes hold each content word's
# stems in four languages (`memory.terms.index_text`, which every connection defines in SQL as
# `stems()`), so the triggers stem exactly as a query does; they store no copy of the text (the
# content stays in its table). Members' lines get an index and vectors of their own: what was
# said is recalled beside what she concluded. Her own lines are not indexed: what she said is
# not evidence of what is true. A line's vector goes the moment its words change (a forget).
_STEMMED_RECALL: tuple[str, ...] = (
    "DROP TRIGGER beliefs_fts_insert",
    "DROP TRIGGER beliefs_fts_delete",
    "DROP TRIGGER beliefs_fts_update",
    "DROP TABLE beliefs_fts",
    """CREATE VIRTUAL TABLE beliefs_fts USING fts5(
        proposition, content='beliefs', content_rowid='belief_id',
        tokenize='unicode61 remove_diacritics 2'
    )""",
    "INSERT INTO beliefs_fts(rowid, proposition)"
    " SELECT belief_id, stems(proposition) FROM beliefs",
    """CREATE TRIGGER beliefs_fts_insert AFTER INSERT ON beliefs BEGIN
        INSERT INTO beliefs_fts(rowid, proposition) VALUES (new.belief_id, stems(new.proposition));
    END""",
    """CREATE TRIGGER beliefs_fts_delete AFTER DELETE ON beliefs BEGIN
        INSERT INTO beliefs_fts(beliefs_fts, rowid, proposition)
        VALUES ('delete', old.belief_id, stems(old.proposition));
    END""",
    """CREATE TRIGGER beliefs_fts_update AFTER UPDATE OF proposition ON beliefs BEGIN
        INSERT INTO beliefs_fts(beliefs_fts, rowid, proposition)
        VALUES ('delete', old.belief_id, stems(old.proposition));
        INSERT INTO beliefs_fts(rowid, proposition) VALUES (new.belief_id, stems(new.proposition));
    END""",
    """CREATE TABLE turn_vectors (
        turn_id INTEGER PRIMARY KEY REFERENCES turns(turn_id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
    )""",
    """CREATE VIRTUAL TABLE turns_fts USING fts5(
        text, content='turns', content_rowid='turn_id',
        tokenize='unicode61 remove_diacritics 2'
    )""",
    "INSERT INTO turns_fts(rowid, text)"
    " SELECT turn_id, stems(text) FROM turns WHERE role = 'user'",
    """CREATE TRIGGER turns_fts_insert AFTER INSERT ON turns WHEN new.role = 'user' BEGIN
        INSERT INTO turns_fts(rowid, text) VALUES (new.turn_id, stems(new.text));
    END""",
    """CREATE TRIGGER turns_fts_delete AFTER DELETE ON turns WHEN old.role = 'user' BEGIN
        INSERT INTO turns_fts(turns_fts, rowid, text)
        VALUES ('delete', old.turn_id, stems(old.text));
    END""",
    """CREATE TRIGGER turns_fts_update AFTER UPDATE OF text ON turns WHEN old.role = 'user' BEGIN
        INSERT INTO turns_fts(turns_fts, rowid, text)
        VALUES ('delete', old.turn_id, stems(old.text));
        INSERT INTO turns_fts(rowid, text) VALUES (new.turn_id, stems(new.text));
        DELETE FROM turn_vectors WHERE turn_id = new.turn_id;
    END""",
)

# Reminders and the lane she writes first in (DESIGN §13). A reminder's words are its goal's
# (`goals`, read through the gate); these rows hold only when, where and what happened: ids,
# instants, zones, states and counts, never what anyone said. Removing a member or forgetting
# a goal removes its reminders with it (ON DELETE CASCADE).
_REMINDERS: tuple[str, ...] = (
    """CREATE TABLE member_settings (
        person_id TEXT PRIMARY KEY REFERENCES people(person_id) ON DELETE CASCADE,
        timezone TEXT,
        quiet_start INTEGER CHECK (quiet_start BETWEEN 0 AND 1439),
        quiet_end INTEGER CHECK (quiet_end BETWEEN 0 AND 1439),
        updated_at TEXT NOT NULL,
        CHECK ((quiet_start IS NULL) = (quiet_end IS NULL))
    )""",
    f"""CREATE TABLE reminders (
        reminder_id INTEGER PRIMARY KEY,
        person_id TEXT NOT NULL REFERENCES people(person_id) ON DELETE CASCADE,
        scope TEXT NOT NULL {_SCOPE_CHECK},
        kind TEXT NOT NULL CHECK (kind IN ('reminder', 'checkin')),
        goal_id INTEGER REFERENCES goals(goal_id) ON DELETE CASCADE,
        chat_id TEXT NOT NULL,
        telegram_chat INTEGER,
        due_at TEXT,
        zone TEXT NOT NULL,
        recurrence TEXT,
        wall TEXT,
        exact INTEGER NOT NULL DEFAULT 0 CHECK (exact IN (0, 1)),
        self_started INTEGER NOT NULL DEFAULT 0 CHECK (self_started IN (0, 1)),
        snoozed INTEGER NOT NULL DEFAULT 0 CHECK (snoozed IN (0, 1)),
        state TEXT NOT NULL DEFAULT 'scheduled'
            CHECK (state IN ('asking', 'scheduled', 'done', 'cancelled')),
        source_turn_id INTEGER REFERENCES turns(turn_id) ON DELETE SET NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        CHECK ((kind = 'reminder') = (goal_id IS NOT NULL)),
        CHECK (state != 'scheduled' OR due_at IS NOT NULL),
        CHECK ((recurrence IS NULL) = (wall IS NULL))
    )""",
    "CREATE INDEX reminders_by_state ON reminders(state, due_at)",
    "CREATE INDEX reminders_by_person ON reminders(person_id, state)",
    "CREATE INDEX reminders_by_goal ON reminders(goal_id)",
    "CREATE UNIQUE INDEX reminders_one_checkin ON reminders(person_id)"
    " WHERE kind = 'checkin' AND state = 'scheduled'",
    # One row per occurrence she handled: delivered (with the line and the outbox entry it
    # became), or passed over (a check-in past the day's cap). Its key is what makes a restart
    # fire nothing twice; it is also the trace: why, when, and the ids of what it used.
    """CREATE TABLE reminder_firings (
        reminder_id INTEGER NOT NULL REFERENCES reminders(reminder_id) ON DELETE CASCADE,
        due_at TEXT NOT NULL,
        person_id TEXT NOT NULL REFERENCES people(person_id) ON DELETE CASCADE,
        fired_at TEXT NOT NULL,
        local_day TEXT NOT NULL,
        why TEXT NOT NULL,
        self_started INTEGER NOT NULL CHECK (self_started IN (0, 1)),
        turn_id INTEGER REFERENCES turns(turn_id) ON DELETE SET NULL,
        reply_id INTEGER,
        template_version TEXT NOT NULL,
        used TEXT NOT NULL,
        PRIMARY KEY (reminder_id, due_at)
    )""",
    "CREATE INDEX reminder_firings_by_day ON reminder_firings(person_id, local_day)",
    # A member's open goal is one per scope: the same words asked for in the group and in
    # their DM are two goals (each read where its scope may be seen), not a refused insert.
    "DROP INDEX goals_open_once",
    "CREATE UNIQUE INDEX goals_open_once ON goals(person_id, scope, norm) WHERE state = 'open'",
)

# Recall's judge reads, rather than decides again, whether a member's newer word replaced an
# older one (`memory.recall.replacements`): ids and a similarity, in the scope both rows live
# in. A mark goes with either row: a belief deleted, a line forgotten or removed.
_REPLACEMENTS: tuple[str, ...] = (
    f"""CREATE TABLE replacements (
        tier TEXT NOT NULL CHECK (tier IN ('beliefs', 'turns')),
        old_id INTEGER NOT NULL,
        new_id INTEGER NOT NULL,
        scope TEXT NOT NULL {_SCOPE_CHECK},
        similarity REAL NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (tier, old_id, new_id)
    )""",
    "CREATE INDEX replacements_by_new ON replacements(tier, new_id)",
    """CREATE TRIGGER replacements_belief_gone AFTER DELETE ON beliefs BEGIN
        DELETE FROM replacements WHERE tier = 'beliefs'
            AND (old_id = OLD.belief_id OR new_id = OLD.belief_id);
    END""",
    """CREATE TRIGGER replacements_line_gone AFTER DELETE ON turns BEGIN
        DELETE FROM replacements WHERE tier = 'turns'
            AND (old_id = OLD.turn_id OR new_id = OLD.turn_id);
    END""",
    """CREATE TRIGGER replacements_line_forgotten AFTER UPDATE OF text ON turns
        WHEN NEW.text != OLD.text BEGIN
        DELETE FROM replacements WHERE tier = 'turns'
            AND (old_id = OLD.turn_id OR new_id = OLD.turn_id);
    END""",
    # Which memories a reply was given and what the judge made of each (ids, verdicts and
    # signal values; never words), for a member's /why.
    "ALTER TABLE turn_log ADD COLUMN memories TEXT NOT NULL DEFAULT '[]'",
)

# How a line's or a belief's class was given, when not by the word rules at write time (NULL):
# "meaning 0.87" when the fitted reader of its vector raised it (`memory.sensing`). Numbers
# only, never a word of the row.
_SENSITIVITY_BY: tuple[str, ...] = (
    "ALTER TABLE turns ADD COLUMN sensitivity_by TEXT",
    "ALTER TABLE beliefs ADD COLUMN sensitivity_by TEXT",
)

# The shelf (`memory.knowledge`): documents members sent in chat, their passages and their
# passages' vectors, behind the same wall as memory. A document's title and its passages are
# words; its class is the most private of its passages' (each passage carries its own).
_KNOWLEDGE: tuple[str, ...] = (
    f"""CREATE TABLE documents (
        document_id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL {_SCOPE_CHECK},
        title TEXT NOT NULL,
        format TEXT NOT NULL,
        added_by TEXT REFERENCES people(person_id) ON DELETE SET NULL,
        sensitivity TEXT NOT NULL,
        size INTEGER NOT NULL,
        pages INTEGER,
        passages INTEGER NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX documents_by_scope ON documents(scope, document_id)",
    f"""CREATE TABLE chunks (
        chunk_id INTEGER PRIMARY KEY,
        document_id INTEGER NOT NULL REFERENCES documents(document_id) ON DELETE CASCADE,
        scope TEXT NOT NULL {_SCOPE_CHECK},
        seq INTEGER NOT NULL,
        page INTEGER,
        section TEXT,
        text TEXT NOT NULL,
        sensitivity TEXT NOT NULL,
        sensitivity_by TEXT
    )""",
    "CREATE INDEX chunks_by_document ON chunks(document_id, seq)",
    "CREATE INDEX chunks_by_scope ON chunks(scope, chunk_id)",
    """CREATE TABLE chunk_vectors (
        chunk_id INTEGER PRIMARY KEY REFERENCES chunks(chunk_id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        vector BLOB NOT NULL
    )""",
    """CREATE VIRTUAL TABLE chunks_fts USING fts5(
        text, content='chunks', content_rowid='chunk_id',
        tokenize='unicode61 remove_diacritics 2'
    )""",
    # A passage is found by the words of the section it sits under too ("Error codes").
    """CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts(rowid, text)
        VALUES (new.chunk_id, stems(coalesce(new.section, '') || ' ' || new.text));
    END""",
    """CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, text)
        VALUES ('delete', old.chunk_id, stems(coalesce(old.section, '') || ' ' || old.text));
    END""",
)

# Other agents with a credential each (`memory.minds`), acting for one member: the token is
# kept only as a keyed digest, and a revoked mind keeps its row (its name is never reused, so
# the receipts that name it keep meaning it). A grant may name the one mind it opens for.
_MINDS: tuple[str, ...] = (
    """CREATE TABLE minds (
        mind_id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        person_id TEXT NOT NULL REFERENCES people(person_id) ON DELETE CASCADE,
        token_digest TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    )""",
    "CREATE INDEX minds_by_person ON minds(person_id)",
    "ALTER TABLE grants ADD COLUMN mind TEXT",
)

# Voice notes and photos she could not take in yet, by Telegram's file id (never the file), and
# which members were told she cannot listen or see on this setup (`memory.media`).
_MEDIA: tuple[str, ...] = (
    f"""CREATE TABLE media_waiting (
        media_id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('voice', 'photo')),
        file_id TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        telegram_chat INTEGER NOT NULL,
        speaker_id TEXT REFERENCES people(person_id) ON DELETE CASCADE,
        scope TEXT NOT NULL {_SCOPE_CHECK},
        at TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        UNIQUE (file_id, chat_id)
    )""",
    """CREATE TABLE media_notices (
        person_id TEXT NOT NULL REFERENCES people(person_id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (person_id, kind)
    )""",
)

# A small picture of each chat, made on the tick (`memory.snapshots`): who has been around, what
# is open, what is due soon. One row per chat and scope, in the scope of the view it was made
# from; its words (and each item's own class) are in `body`.
_SNAPSHOTS: tuple[str, ...] = (
    f"""CREATE TABLE snapshots (
        snapshot_id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL {_SCOPE_CHECK},
        chat_id TEXT NOT NULL,
        body TEXT NOT NULL,
        through_turn_id INTEGER NOT NULL,
        made_at TEXT NOT NULL,
        UNIQUE (scope, chat_id)
    )""",
)

MIGRATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("0001_initial", _INITIAL),
    ("0002_soul_state", _SOUL_STATE),
    ("0003_household_and_tick", _HOUSEHOLD_AND_TICK),
    ("0004_inbox_and_outbox", _INBOX_AND_OUTBOX),
    ("0005_keyed_ledger", _KEYED_LEDGER),
    ("0006_evidence_rehomed", _EVIDENCE_REHOMED),
    ("0008_reminders", _REMINDERS),
    ("0009_stemmed_recall", _STEMMED_RECALL),
    ("0010_replacements", _REPLACEMENTS),
    ("0011_sensitivity_by", _SENSITIVITY_BY),
    ("0012_knowledge", _KNOWLEDGE),
    ("0013_minds", _MINDS),
    ("0014_snapshots", _SNAPSHOTS),
    ("0015_media", _MEDIA),
)
