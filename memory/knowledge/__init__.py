"""The knowledge shelf: documents sent in chat, as cited passages, behind the memory gate.

Its contract, apart from memory's facade (never beliefs): `Shelf.put` (ingest), `Shelf.search`,
`Shelf.documents` (inspect) and `Shelf.forget`. Knowledge cites a document and its page or
section; memory cites a conversation line. See `memory.knowledge.shelf` for its rules.
"""

from memory.knowledge.reading import MAX_BYTES, Unreadable
from memory.knowledge.shelf import LIMIT, Document, Found, Shelf, Shelved

__all__ = ["LIMIT", "MAX_BYTES", "Document", "Found", "Shelf", "Shelved", "Unreadable"]
