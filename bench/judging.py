"""The configured model as recall's judge, for the benchmarks that score it (`--model`).

`configured()` finds the model the environment configures (`OPENAI_BASE_URL`,
`OPENAI_API_KEY`, `HEARTH_MODEL`), as the bot would; `judged()` asks it about what recall
handed over, through the one call a turn makes (`soul.judge`), and says whether it could judge
(a timeout, an error or an answer that fits no schema leaves the signals' verdicts, which the
judge logs) and how long it took.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Mapping, Sequence
from datetime import datetime

from memory import Quoted, Recalled
from soul.judge import StructuredModel, judge
from soul.model import ModelConfig, model_config_from, with_model

Item = Recalled | Quoted


async def configured() -> ModelConfig:
    """The model the environment configures; one attempt per call, as a turn's judge makes."""
    config = model_config_from(os.environ.get("OPENAI_BASE_URL"),
                               os.environ.get("OPENAI_API_KEY"), os.environ.get("HEARTH_MODEL"))
    if config is None:
        raise SystemExit("--model needs OPENAI_BASE_URL (and HEARTH_MODEL, or a server that"
                         " lists one)")
    return dataclasses.replace(await with_model(config), attempts=1)


class _Failures(logging.Handler):
    """Counts what the judge logs when it cannot judge and the signals' verdicts stand."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


@dataclasses.dataclass(frozen=True)
class Judged:
    items: list[Item]  # with the model's verdicts (or the signals', when it fell back)
    fell_back: bool
    ms: float


async def judged(model: StructuredModel, handed: Sequence[Item], *, question: str, asker: str,
                 names: Mapping[str, str], now: datetime) -> Judged:
    """The model's verdicts on `handed`, as the assembler would take them."""
    judging = logging.getLogger("hearth.judge")
    failures = _Failures()
    judging.addHandler(failures)
    start = time.perf_counter()
    try:
        items = await judge(model, handed, question=question, asker=asker, names=names, now=now)
    finally:
        judging.removeHandler(failures)
    return Judged(items, failures.count > 0, (time.perf_counter() - start) * 1000)
