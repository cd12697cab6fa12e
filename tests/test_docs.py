"""The README and docs/ stay true to the code: every setting, every `hearth` command and every
Telegram command is documented, every shell block parses, every link and path in them leads
to something in this repository, and the README keeps its two set-up commands."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bot.cli import build_parser
from bot.commands import command_handlers
from bot.settings import Settings
from tests.support import markdown

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELLS = ("sh", "bash", "shell")
# A link that leaves for the web is fine; one into the file system must stay in this checkout.
_WEB = re.compile(r"^(https?://|mailto:)")


def _env_names() -> list[str]:
    names = []
    for field in Settings.model_fields.values():
        alias = field.validation_alias
        choices = getattr(alias, "choices", [])
        names.extend(str(c) for c in choices)
    return names


def _commands() -> list[str]:
    """`people add`, `receipts verify`, ...: each subcommand, its sub-actions, and the words an
    optional positional argument takes (`receipts [verify|anchor]`)."""
    parser = build_parser()
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append(name)
                for inner in sub._actions:
                    if isinstance(inner, argparse._SubParsersAction):
                        found.extend(f"{name} {n}" for n in inner.choices)
                    elif not inner.option_strings and inner.nargs == "?" and inner.choices:
                        found.extend(f"{name} {c}" for c in inner.choices)
    return found


def _telegram_commands() -> list[str]:
    return sorted({name for handler in command_handlers() for name in handler.commands})


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _shell_blocks() -> list[tuple[str, markdown.Block]]:
    return [(_page_id(page), block) for page in PAGES
            for block in markdown.blocks(page.read_text()) if block.info in SHELLS]


@pytest.mark.parametrize("name", _env_names())
def test_every_setting_is_documented_in_the_readme(name: str) -> None:
    assert f"`{name}`" in README


@pytest.mark.parametrize("command", _commands())
def test_every_command_is_documented_in_the_readme(command: str) -> None:
    assert re.search(rf"`hearth {re.escape(command)}\b", README), command


def test_the_commands_found_include_sub_actions() -> None:
    assert {"people add", "persona approve", "receipts verify", "receipts anchor"} <= set(
        _commands())


@pytest.mark.parametrize("command", _telegram_commands())
def test_every_telegram_command_is_documented_in_the_readme(command: str) -> None:
    assert re.search(rf"`/{re.escape(command)}\b", README), f"/{command}"


def test_the_telegram_commands_found_are_the_registered_handlers() -> None:
    assert {"start", "invite", "household", "quiet", "checkin"} <= set(_telegram_commands())


def test_the_readme_opens_with_exactly_two_setup_commands() -> None:
    first_block = README.split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands == ["make run", "make test"]


def test_ci_runs_the_readmes_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_code_block_says_what_it_holds(page: Path) -> None:
    """A shell command in an unlabelled block would escape the parse below."""
    unlabelled = [b.line for b in markdown.blocks(page.read_text()) if not b.info]
    assert unlabelled == [], f"{_page_id(page)}: blocks without a language on lines {unlabelled}"


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize(("page", "block"), _shell_blocks(),
                         ids=[f"{p}:{b.line}" for p, b in _shell_blocks()])
def test_every_shell_block_parses(page: str, block: markdown.Block) -> None:
    result = subprocess.run(
        ["bash", "-n"],  # noqa: S607 -- the reader's own bash, from PATH
        input=block.text, capture_output=True, text=True, check=False, timeout=30,
    )
    assert result.returncode == 0, f"{page} line {block.line}: {result.stderr.strip()}"


def test_the_shell_blocks_are_found() -> None:
    assert len(_shell_blocks()) >= 5


def test_the_readme_and_the_docs_stand_on_their_own() -> None:
    assert len(PAGES) > 1
    assert [_page_id(p) for p in PAGES if "../shared" in p.read_text()] == []


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_link_leads_to_something_in_this_repository(page: Path) -> None:
    text = page.read_text()
    broken = []
    for target in markdown.links(text):
        if _WEB.match(target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        inside = not target.startswith("/") and dest.is_relative_to(ROOT) and dest.exists()
        if not inside or (anchor and dest.suffix == ".md"
                          and anchor not in markdown.anchors(dest.read_text())):
            broken.append(target)
    assert broken == [], f"{_page_id(page)}: {broken}"


def test_the_links_found_include_anchors_and_other_pages() -> None:
    found = markdown.links(README)
    assert "#use-a-better-model" in found
    assert "docs/architecture.md" in found
    assert "deploy/README.md" in found


# Paths in code spans that name a file or folder of the project (`deploy/hearth.service`).
_PROJECT_PATH = re.compile(r"`((?:bot|soul|memory|tests|bench|deploy|docs)/[\w./-]*)`")


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_every_project_path_the_docs_name_exists(page: Path) -> None:
    named = set(_PROJECT_PATH.findall(page.read_text()))
    assert sorted(p for p in named if not (ROOT / p).exists()) == []


def test_the_memory_page_names_every_book_memory_hands_out_and_its_module() -> None:
    page = (ROOT / "docs" / "memory.md").read_text()
    rows = re.findall(r"^\| `memory\.(\w+)` \| `(\w+\.py|\w+/)` \|", page, re.M)
    assert len(rows) >= 12
    facade = (ROOT / "memory" / "facade.py").read_text()
    for book, module in rows:
        assert f"self.{book} = " in facade, book
        assert (ROOT / "memory" / module).exists(), module
