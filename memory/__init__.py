"""hearth's memory: what she knows and who may see it.

The facade (`Memory`) is the only door: every read takes an `AccessContext`, passes the scope
wall, then the purpose lens, and is receipted. Nothing outside this package touches SQL.
"""

from memory.beliefs import Assertion, normalize
from memory.embedder import E5Embedder, Embedder, MiniLMEmbedder, make_embedder
from memory.errors import (
    HearthError,
    InvalidRequest,
    LedgerError,
    StoreBusy,
    StoreError,
    UnknownMind,
    UnknownPerson,
)
from memory.facade import Memory, utc_now
from memory.history import Held
from memory.inbox import Delivery, OwedReply
from memory.knowledge import MAX_BYTES as MAX_DOCUMENT_BYTES
from memory.knowledge import Found, Shelved, Unreadable
from memory.lens import GRANTABLE
from memory.lockfile import hold_database
from memory.minds import Issued, Mind
from memory.models import (
    SHARED,
    AccessContext,
    Activity,
    Belief,
    BeliefStatus,
    Evidence,
    Explanation,
    Goal,
    Grant,
    Kind,
    Person,
    Provenance,
    Quoted,
    Recalled,
    Receipt,
    Role,
    Sensitivity,
    Summary,
    Turn,
    Verdict,
    WriteOutcome,
    chat_scope,
    dm_chat,
    group_chat,
    private_scope,
    scope_owner,
)
from memory.preferences import Preferences
from memory.recall import LIMIT as RECALL_LIMIT
from memory.reminders import Firing, Listed, Reminder
from memory.snapshots import Snapshot, SnapshotItem
from memory.terms import text_cache
from memory.transcript import MAX_TURN_CHARS

__all__ = [
    "AccessContext",
    "Activity",
    "Assertion",
    "Belief",
    "BeliefStatus",
    "Delivery",
    "E5Embedder",
    "Embedder",
    "Evidence",
    "Explanation",
    "Firing",
    "Found",
    "GRANTABLE",
    "Goal",
    "Grant",
    "HearthError",
    "Held",
    "InvalidRequest",
    "Issued",
    "Kind",
    "LedgerError",
    "Listed",
    "MAX_DOCUMENT_BYTES",
    "MAX_TURN_CHARS",
    "Memory",
    "Mind",
    "MiniLMEmbedder",
    "OwedReply",
    "Person",
    "Preferences",
    "Provenance",
    "Quoted",
    "RECALL_LIMIT",
    "Recalled",
    "Receipt",
    "Reminder",
    "Role",
    "SHARED",
    "Sensitivity",
    "Shelved",
    "Snapshot",
    "SnapshotItem",
    "StoreBusy",
    "StoreError",
    "Summary",
    "Turn",
    "UnknownMind",
    "UnknownPerson",
    "Unreadable",
    "Verdict",
    "WriteOutcome",
    "chat_scope",
    "dm_chat",
    "group_chat",
    "hold_database",
    "make_embedder",
    "normalize",
    "private_scope",
    "scope_owner",
    "text_cache",
    "utc_now",
]
