"""The README documents every setting and every command, and keeps its two set-up commands."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from bot.cli import build_parser
from bot.settings import Settings

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def _env_names() -> list[str]:
    names = []
    for field in Settings.model_fields.values():
        alias = field.validation_alias
        choices = getattr(alias, "choices", [])
        names.extend(str(c) for c in choices)
    return names


def _commands() -> list[str]:
    parser = build_parser()
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append(name)
                for inner in sub._actions:
                    if isinstance(inner, argparse._SubParsersAction):
                        found.extend(f"{name} {n}" for n in inner.choices)
    return found


@pytest.mark.parametrize("name", _env_names())
def test_every_setting_is_documented_in_the_readme(name: str) -> None:
    assert f"`{name}`" in README


@pytest.mark.parametrize("command", _commands())
def test_every_command_is_documented_in_the_readme(command: str) -> None:
    assert re.search(rf"`hearth {re.escape(command)}\b", README), command


def test_the_readme_opens_with_exactly_two_setup_commands() -> None:
    first_block = README.split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands == ["make run", "make test"]


def test_ci_runs_the_readmes_test_command() -> None:
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert "make test" in ci


ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_and_the_docs_stand_on_their_own() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert len(pages) > 1
    assert [p.name for p in pages if "../shared" in p.read_text()] == []


def test_the_memory_page_names_every_book_memory_hands_out_and_its_module() -> None:
    page = (ROOT / "docs" / "memory.md").read_text()
    rows = re.findall(r"^\| `memory\.(\w+)` \| `(\w+\.py)` \|", page, re.M)
    assert len(rows) >= 12
    facade = (ROOT / "memory" / "facade.py").read_text()
    for book, module in rows:
        assert f"self.{book} = " in facade, book
        assert (ROOT / "memory" / module).exists(), module
