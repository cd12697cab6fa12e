"""The extraction prompt: short instructions, worked examples a small model can copy, and the
batch's own lines last."""

from __future__ import annotations

from memory import Role, Sensitivity, Turn, private_scope
from memory.consolidation import Batch, Extraction, extraction_messages


def test_the_extraction_prompt_shows_worked_answers_and_ends_with_the_batchs_lines_only() -> None:
    scope = private_scope("p-maya")
    turns = (
        Turn(turn_id=3, chat_id="dm:1", speaker_id="p-maya", role=Role.USER, scope=scope,
             sensitivity=Sensitivity.ORDINARY, text="I live in Leeds",
             at="2026-12-01T12:00:00+00:00"),
    )
    batch = Batch(scope=scope, turns=turns, after_turn_id=2, read_through=3, read_count=1)
    messages = extraction_messages(batch, {"p-maya": "Maya"}, "Wren")
    assert messages[0]["role"] == "system" and "Wren" in messages[0]["content"]
    assert messages[-1] == {"role": "user", "content": "Transcript:\n1. Maya: I live in Leeds"}
    examples = messages[1:-1]
    assert [m["role"] for m in examples] == ["user", "assistant"] * (len(examples) // 2)
    answers = [Extraction.model_validate_json(m["content"]) for m in examples[1::2]]
    assert any(a.items == [] for a in answers)  # small talk: nothing to remember
    assert any(a.items for a in answers)
    # Her own lines in the examples are never cited.
    for shown, answer in zip(examples[::2], answers, strict=True):
        hers = {int(line.split(".")[0]) for line in shown["content"].splitlines()[1:]
                if ". Wren: " in line}
        assert hers and not hers & {n for item in answer.items for n in item.lines}
    assert "Maya" not in "".join(m["content"] for m in messages[:-1])
    assert sum(len(m["content"]) for m in messages[:-1]) < 2500  # kept short
