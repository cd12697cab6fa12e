"""`--model` in the recall benchmarks (`bench.recall_quality`, `bench.household_memory`): the
configured model judges what recall handed over, and its figures count what it would tell,
beside the signal judge's, through the real client."""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from bench import household_memory, recall_quality
from bench.household_memory import DATA, Household, load_household
from bench.replay import HOUSEHOLDS
from tests.support.model_server import ModelServer, ResponsePlan

_SHOWN = re.compile(r'^(m\d+): .*?: "(.*)"$', re.MULTILINE)


def _small_household(folder: Path, source: Path = HOUSEHOLDS / "en-held-leeds") -> Household:
    """A household asked a dozen of its questions (answerable and not)."""
    shutil.copytree(source, folder)
    lines = (source / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    answerable = [q for q in lines if '"kind": "paraphrase"' in q][:8]
    abstain = [q for q in lines if '"kind": "absent"' in q][:4]
    (folder / "questions.jsonl").write_text("\n".join(answerable + abstain) + "\n",
                                            encoding="utf-8")
    return load_household(folder)


def _oracle(household: Household) -> Any:
    """A model that knows the answer key: a memory answers when it is one of the question's
    evidence lines (as said, or as its belief), and is unrelated otherwise."""
    evidence = {q.text: {" ".join(t.split()) for key in q.evidence
                         for t in (household.by_key[key].text, household.by_key[key].proposition)}
                for q in household.questions}

    def respond(request: dict[str, Any]) -> ResponsePlan:
        shown = str(request["messages"][-1]["content"])
        message, _, listing = shown.partition("\n\nMemories:\n")
        question = message.split("'s message: ", 1)[1]
        right = evidence[question]
        return ResponsePlan(reply={"verdicts": [
            {"ref": ref, "verdict": "answers" if text in right else "unrelated"}
            for ref, text in _SHOWN.findall(listing)]})

    return respond


async def _run(folder: Path) -> dict[str, Any]:
    args = argparse.Namespace(embedder="none", data=str(folder), split="all", model=True)
    return await recall_quality.run(args)


async def test_a_model_that_knows_the_answers_tells_every_evidence_recall_handed_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    household = _small_household(tmp_path / "households" / "en-held-leeds")
    async with ModelServer(_oracle(household)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("HEARTH_MODEL", "judge-model")
        out = await _run(tmp_path / "households")
    every = out["all"]
    assert server.requests, "the model was never asked"
    assert every["judged_at_12"] > every["told_at_10"]  # the signals alone leave some untold
    assert every["model_told"] == every["judged_at_12"]
    assert every["model_precision"] == 1.0
    assert every["model_nothing_told"] == 1.0
    assert every["model_fell_back"] == 0
    assert out["model"] == "judge-model"


async def test_a_model_that_answers_garbage_is_counted_and_the_signals_stand(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _small_household(tmp_path / "households" / "en-held-leeds")
    async with ModelServer(lambda _request: ResponsePlan(reply="no verdicts today")) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("HEARTH_MODEL", "judge-model")
        out = await _run(tmp_path / "households")
    every = out["all"]
    assert 0 < every["model_fell_back"] <= len(server.requests)
    assert every["model_told"] == every["told_at_10"]
    assert every["model_nothing_told"] == every["nothing_told"]


async def test_asking_for_the_model_judge_without_a_configured_model_says_what_is_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _small_household(tmp_path / "households" / "en-held-leeds")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(SystemExit, match="OPENAI_BASE_URL"):
        await _run(tmp_path / "households")


async def test_the_household_benchmark_counts_what_the_model_would_tell_beside_the_signals(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    household = _small_household(tmp_path / "household", DATA)
    args = household_memory.arguments().parse_args(
        ["--data", str(tmp_path / "household"), "--embedder", "none", "--model",
         "--baseline", "none"])
    async with ModelServer(_oracle(household)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("HEARTH_MODEL", "judge-model")
        out = await household_memory.run(args)
    model = out["model"]
    assert model["name"] == "judge-model"
    assert model["false_memory_rate"] == 0.0  # it knows no answer is there
    assert model["answer_accuracy"] > out["answer_accuracy"]
