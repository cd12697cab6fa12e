"""The shape of the code: imports point bot -> soul -> memory, and only memory touches SQL."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

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
