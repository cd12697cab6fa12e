"""Summaries: a chat's rolling summary, one per chat and scope, in the scope it was made from.

Owns: writing a summary (secret tokens masked, classified) and reading it through the gate.
Must not: mix scopes in one summary, or return one the reader's wall or lens holds back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import datetime

from memory.classifier import classify
from memory.gate import Gate
from memory.models import AccessContext, Sensitivity, Summary, check_scope
from memory.secrets import mask_secrets
from memory.sensing import more_private
from memory.store import Store


class SummaryBook:
    """`memory.summaries`."""

    def __init__(self, store: Store, gate: Gate, now: Callable[[], datetime]) -> None:
        self._store = store
        self._gate = gate
        self._now = now

    async def write(self, scope: str, chat_id: str, text: str, through_turn_id: int,
                    made_from: Sequence[Sensitivity] = ()) -> None:
        """Store a rolling summary under the scope of what it was made from, as private as
        the most private of what it was made from (`made_from`: the classes of its lines,
        read by their words and meaning, and of the summary before it) or of its own words.
        The fitted reader of meaning is not asked about the summary itself: it reads one
        line's meaning, and on a text of many things it raises ordinary summaries."""
        check_scope(scope)
        masked = mask_secrets(text.strip())
        sensitivity = functools.reduce(more_private, made_from, classify(masked))
        async with self._gate.writing() as tx:
            await tx.lane(scope).insert(
                "summaries", {"scope": scope, "chat_id": chat_id, "text": masked,
                              "sensitivity": sensitivity.value,
                              "through_turn_id": through_turn_id,
                              "updated_at": self._now().isoformat()},
                upsert="ON CONFLICT(scope, chat_id) DO UPDATE SET text = excluded.text,"
                       " sensitivity = excluded.sensitivity,"
                       " through_turn_id = excluded.through_turn_id,"
                       " updated_at = excluded.updated_at")

    async def get(self, ctx: AccessContext, chat_id: str) -> Summary | None:
        """The chat's rolling summary, if its scope may be seen here and the work may use it."""
        async with self._gate.read(ctx, "summary", chat_id) as read:
            rows = await read.select("summaries", "chat_id = ?", (chat_id,),
                                     columns="summary_id AS id, *", order="scope")
            allowed = await read.usable(rows)
            if not allowed:
                return None
            row = allowed[-1]  # a private summary is the fuller one where both exist
            found = Summary.model_validate({k: row[k] for k in Summary.model_fields})
            read.returned([int(row["id"])], [found.scope])
        return found
