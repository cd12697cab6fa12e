"""The shape of the code: imports point bot -> soul -> memory, and only memory touches SQL."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from memory import Memory
from memory.gate import CONTENT_TABLES

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "memory": {"soul", "bot", "telegram", "openai"},
    "soul": {"bot", "telegram"},
    "bot": set(),
}
DATABASE_MODULES = {"aiosqlite", "sqlite3"}
SQL = re.compile(r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b", re.I)


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", ["bot", "soul", "memory"])
def test_imports_point_down_only(package: str) -> None:
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _sources(package)
        for name in _imports(path)
        if name.split(".")[0] in FORBIDDEN[package]
    ]
    assert offenders == []


@pytest.mark.parametrize("package", ["bot", "soul", "bench"])
def test_nothing_outside_memory_imports_a_database_driver(package: str) -> None:
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _sources(package)
        for name in _imports(path)
        if name.split(".")[0] in DATABASE_MODULES
    ]
    assert offenders == []


def test_only_the_store_imports_aiosqlite_inside_memory() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in _sources("memory")
        if "aiosqlite" in {n.split(".")[0] for n in _imports(path)} and path.name != "store.py"
    ]
    assert offenders == []


@pytest.mark.parametrize("package", ["bot", "soul", "bench"])
def test_nothing_outside_memory_writes_sql(package: str) -> None:
    offenders = []
    for path in _sources(package):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and SQL.search(node.value)):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


@pytest.mark.parametrize("package", ["bot", "soul", "memory"])
def test_each_package_has_a_sorted_public_face(package: str) -> None:
    module = importlib.import_module(package)
    exported = list(module.__all__)
    assert exported == sorted(exported)
    for name in exported:
        assert hasattr(module, name), name


@pytest.mark.parametrize("package", ["bot", "soul", "memory"])
def test_every_module_opens_with_a_docstring(package: str) -> None:
    missing = [
        str(path.relative_to(ROOT))
        for path in _sources(package)
        if path.stat().st_size and ast.get_docstring(ast.parse(path.read_text())) is None
    ]
    assert missing == []


# --- the gate as a structure ------------------------------------------------------------------

def _sql_texts(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string literal in a module, with f-strings joined (their holes as `{}`)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(
                part.value if isinstance(part, ast.Constant) and isinstance(part.value, str)
                else "{}"
                for part in node.values
            )
            found.append((node.lineno, text))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.lineno, node.value))
    return found


def _content_selects(source: str) -> list[int]:
    tables = "|".join(sorted(CONTENT_TABLES, key=len, reverse=True))
    reads = re.compile(rf"\b(FROM|JOIN)\s+({tables})\b", re.I)
    return [
        line for line, text in _sql_texts(ast.parse(source))
        if re.search(r"\bSELECT\b", text, re.I) and reads.search(text)
    ]


def test_the_content_read_check_catches_a_select_written_beside_the_gate() -> None:
    planted = (
        'async def peek(tx, scope):\n'
        '    await tx.fetchall("SELECT text FROM turns WHERE scope = ?", (scope,))\n'
        '    await tx.fetchall(f"SELECT {cols} FROM beliefs b WHERE b.scope = ?")\n'
        '    await tx.fetchall("SELECT o.belief_id FROM contradictions c JOIN beliefs o ON 1")\n'
        '    await tx.fetchall("SELECT key FROM affect")\n'
    )
    assert _content_selects(planted) == [2, 3, 4]  # the affect read is not remembered content


def test_no_module_selects_remembered_content_except_the_gate() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _sources("memory")
        # The schema's own steps may rebuild an index from its table: they run at open,
        # before any reader, and hand nothing to anyone. The declaration of the tables holds
        # the wall's subqueries, which only the gate runs.
        if path.name not in {"gate.py", "migrations.py", "schema.py"}
        for line in _content_selects(path.read_text())
    ]
    assert offenders == []


def test_only_the_gate_reads_through_an_unwalled_transaction() -> None:
    """Every transaction refuses to select content; `unwalled` lifts that for the gate alone
    (and for the store's own schema steps at open)."""
    offenders = []
    for path in _sources("memory"):
        if path.name in {"gate.py", "store.py"}:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Name | ast.Attribute) and (
                    node.id if isinstance(node, ast.Name) else node.attr) == "unwalled":
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_only_the_gate_makes_a_receipted_read() -> None:
    """A `Read` (the walled, lensed, receipted read) is only ever made by `Gate.read`."""
    offenders = []
    for path in _sources("memory"):
        if path.name == "gate.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "Read"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


BOOKS = {
    "transcript": ("memory.transcript", "TranscriptBook"),
    "beliefs": ("memory.beliefs", "BeliefBook"),
    "recall": ("memory.recall", "RecallBook"),
    "vectors": ("memory.vectors", "VectorBook"),
    "goals": ("memory.goals", "GoalBook"),
    "reminders": ("memory.reminders", "ReminderBook"),
    "preferences": ("memory.preferences", "PreferenceBook"),
    "summaries": ("memory.summaries", "SummaryBook"),
    "consolidation": ("memory.consolidation", "ConsolidationBook"),
    "dream": ("memory.dream", "DreamBook"),
    "forgetting": ("memory.forget", "ForgetBook"),
    "grants": ("memory.grants", "GrantBook"),
    "ledger": ("memory.ledger", "LedgerBook"),
    "export": ("memory.export", "ExportBook"),
    "people": ("memory.people", "PeopleBook"),
    "household": ("memory.household", "HouseholdBook"),
    "state": ("memory.state", "StateBook"),
    "inbox": ("memory.inbox", "Inbox"),
    "outbox": ("memory.inbox", "Outbox"),
}


async def test_each_concept_is_a_book_from_the_module_named_after_it(tmp_path: Path) -> None:
    memory = await Memory.open(tmp_path / "hearth.db", create=True)
    try:
        for attribute, (module, name) in BOOKS.items():
            book = getattr(memory, attribute)
            assert (type(book).__module__, type(book).__name__) == (module, name), attribute
    finally:
        await memory.close()


def test_what_remains_of_memory_is_a_small_object() -> None:
    lines = (ROOT / "memory" / "facade.py").read_text().count("\n")
    assert lines < 300


# Memoised functions whose arguments are not remembered text: a secret and a purpose, a row id,
# the tokenizer's file, a lore key of the soul's own files.
NOT_TEXT_CACHES = {"memory/receipts.py:_subkey", "memory/gate.py:ref_for",
                   "soul/tokens.py:_tokenizer", "soul/files.py:_key_pattern",
                   "memory/recall/judge.py:weights_for",  # these two: keyed by the
                   "memory/sensing.py:senser_for",  # embedder's name
                   "soul/model.py:_strict_schema_of"}  # keyed by a schema class


def test_every_memo_of_text_is_one_a_forget_empties() -> None:
    """A cache keyed by texts keeps a copy of them: made with `text_cache`, a forget empties
    it; made with `functools.lru_cache` or `cache`, a forgotten line would outlive its forget."""
    memos = set()
    for package in ("memory", "soul", "bot"):
        for path in _sources(package):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for decorator in node.decorator_list:
                    target = decorator.func if isinstance(decorator, ast.Call) else decorator
                    name = target.attr if isinstance(target, ast.Attribute) else getattr(
                        target, "id", "")
                    if name in {"lru_cache", "cache"}:
                        memos.add(f"{path.relative_to(ROOT)}:{node.name}")
    assert memos == NOT_TEXT_CACHES


def test_no_module_reaches_into_a_reads_transaction_or_makes_a_read() -> None:
    """A read's transaction is the gate's: what it reads is walled and receipted there, and a
    write that follows a read goes through a lane the read hands out (`Read.lane`)."""
    reaching = re.compile(r"\bread\._?tx\b|\bRead\(")
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for package in ("memory", "soul", "bot")
        for path in _sources(package)
        if path.name != "gate.py"
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if reaching.search(line)
    ]
    assert offenders == []
