"""The small-model profile: its budgets and sampling come from soul.yaml (or fall back to the
full profile), the gateway sends them to the model server, and the assembler stays within them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from memory import SHARED, Assertion, Memory, Person, Provenance, Role, private_scope
from soul.assembler import Intent, assemble, template_version
from soul.files import Sampling, Soul, SoulError, default_soul_dir, load_soul
from soul.model import Gateway, ModelConfig
from soul.tokens import count_tokens
from soul.turn import chat_id_for, respond
from tests.helpers import HashEmbedder
from tests.support.model_server import ModelServer, ResponsePlan, scripted

NOW = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
MESSAGES = [
    {"role": "system", "content": "You are Wren."},
    {"role": "user", "content": "Hello"},
]
PENALTIES = ("frequency_penalty", "presence_penalty", "repeat_penalty")


def declared() -> dict[str, Any]:
    """The bundled soul.yaml as written."""
    text = (default_soul_dir() / "soul.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


def copy_soul(tmp_path: Path, change: Any) -> Path:
    folder = Path(shutil.copytree(default_soul_dir(), tmp_path / "soul"))
    path = folder / "soul.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def small() -> Soul:
    return load_soul(profile="small")


@pytest.fixture(scope="module")
def full() -> Soul:
    return load_soul()


# --- the profile comes from soul.yaml --------------------------------------------------------


def test_the_small_profile_takes_its_budgets_and_sampling_from_soul_yaml(small: Soul) -> None:
    data = declared()
    profile = data["profiles"]["small"]
    assert small.profile == "small"
    assert small.manifest.budgets.model_dump() == {**data["budgets"], **profile["budgets"]}
    assert small.manifest.window == profile["window"]
    assert small.manifest.reply_reserve == profile["reply_reserve"]
    sampling = small.manifest.sampling.model_dump()
    for key, value in profile["sampling"].items():
        assert sampling[key] == (tuple(value) if isinstance(value, list) else value), key


def test_the_full_profile_is_the_top_level_of_soul_yaml(full: Soul) -> None:
    data = declared()
    assert full.profile == "full"
    assert full.manifest.budgets.model_dump() == data["budgets"]
    assert full.manifest.window == data["window"]
    assert full.manifest.reply_reserve == data["reply_reserve"]
    assert full.manifest.sampling == Sampling.model_validate(data.get("sampling", {}))


def test_the_small_profile_is_shorter_than_the_full_one_under_the_same_constitution(
    small: Soul, full: Soul
) -> None:
    assert small.constitution == full.constitution and small.sha256 == full.sha256
    assert small.persona == full.persona
    assert small.manifest.window < full.manifest.window
    assert small.manifest.budgets.recent_turns < full.manifest.budgets.recent_turns
    assert small.manifest.budgets.constitution == full.manifest.budgets.constitution
    sampling = small.manifest.sampling
    assert sampling.temperature < full.manifest.sampling.temperature
    assert sampling.max_tokens is not None and sampling.max_tokens <= 160
    assert all(getattr(sampling, penalty) for penalty in PENALTIES)
    assert sampling.stop_at_new_speaker
    assert template_version(small) != template_version(full)


def test_a_budget_edited_in_soul_yaml_is_the_budget_the_small_profile_gets(
    tmp_path: Path,
) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["profiles"]["small"]["budgets"]["memories"] = 123
        data["profiles"]["small"]["sampling"]["repeat_penalty"] = 1.05

    soul = load_soul(copy_soul(tmp_path, edit), profile="small")
    assert soul.manifest.budgets.memories == 123
    assert soul.manifest.sampling.repeat_penalty == 1.05


def test_a_budget_the_small_profile_does_not_name_is_the_top_levels(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["profiles"]["small"]["budgets"].pop("persona")

    soul = load_soul(copy_soul(tmp_path, edit), profile="small")
    assert soul.manifest.budgets.persona == declared()["budgets"]["persona"]


def test_a_soul_yaml_without_the_profiles_block_falls_back_to_the_full_profile(
    tmp_path: Path, full: Soul
) -> None:
    def edit(data: dict[str, Any]) -> None:
        data.pop("profiles")
        data.pop("sampling", None)

    soul = load_soul(copy_soul(tmp_path, edit), profile="small")
    assert soul.profile == "full"
    assert soul.manifest.budgets == full.manifest.budgets
    assert soul.manifest.window == full.manifest.window
    assert soul.manifest.reply_reserve == full.manifest.reply_reserve
    assert soul.manifest.sampling == Sampling()
    assert Sampling().temperature == 0.7 and Sampling().stop == ()


@pytest.mark.parametrize(
    ("change", "wording"),
    [
        (lambda p: p.update(window=900), "profiles.small: window (900) must exceed"),
        (lambda p: p["budgets"].update(feelings=10), "names 'feelings', which is not a surface"),
        (lambda p: p["budgets"].update(memories=0), "profiles.small.budgets.memories must be"),
        (lambda p: p["sampling"].update(max_tokens=4000), "sampling.max_tokens (4000) must fit"),
        (lambda p: p["sampling"].update(frequency_penalty="high"), "must be a number in [-2, 2]"),
        (lambda p: p["sampling"].update(stop="\nMaya:"), "must be a list of texts"),
        (lambda p: p["sampling"].update(stop_at_new_speaker="yes"), "must be true or false"),
        (lambda p: p["sampling"].update(top_k=3), "top_k is not a known setting"),
    ],
)
def test_a_small_profile_that_cannot_work_is_refused_in_one_line(
    tmp_path: Path, change: Any, wording: str
) -> None:
    folder = copy_soul(tmp_path, lambda data: change(data["profiles"]["small"]))
    with pytest.raises(SoulError) as caught:
        load_soul(folder, profile="small")
    message = str(caught.value)
    assert message.startswith("soul: soul.yaml: ") and "\n" not in message
    assert wording in message


def test_only_a_small_profile_may_be_declared_and_only_small_or_full_asked_for(
    tmp_path: Path,
) -> None:
    folder = copy_soul(tmp_path, lambda data: data["profiles"].update(tiny={}))
    with pytest.raises(SoulError, match="may declare only 'small'"):
        load_soul(folder)
    with pytest.raises(SoulError, match="no profile 'tiny'"):
        load_soul(profile="tiny")


# --- which profile the model gets --------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "profile"),
    [
        ({}, "small"),  # the bundled model
        ({"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}, "full"),
        ({"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1", "HEARTH_MODEL_PROFILE": "small"},
         "small"),
        ({"HEARTH_MODEL_PROFILE": " Full "}, "full"),
        ({"HEARTH_MODEL_PROFILE": ""}, "small"),
    ],
)
def test_the_bundled_model_gets_the_small_profile_and_an_endpoint_the_full_one_unless_told(
    env: dict[str, str], profile: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.settings import load_settings  # noqa: PLC0415 -- the one test of the setting

    monkeypatch.chdir(tmp_path)  # no .env of the checkout's
    for name in ("OPENAI_BASE_URL", "HEARTH_MODEL_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert load_settings().profile == profile


def test_a_profile_that_is_neither_small_nor_full_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.settings import ConfigError, load_settings  # noqa: PLC0415

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HEARTH_MODEL_PROFILE", "tiny")
    with pytest.raises(ConfigError, match=r"^bad configuration: HEARTH_MODEL_PROFILE: "):
        load_settings()


# --- the gateway sends it ----------------------------------------------------------------------


def config_for(server: ModelServer) -> ModelConfig:
    return ModelConfig(base_url=server.base_url, api_key="no-key", model="test-model",
                       timeout_s=5.0)


async def test_the_gateway_sends_the_small_profiles_penalties_stops_and_max_tokens(
    small: Soul,
) -> None:
    sampling = small.manifest.sampling
    async with (
        ModelServer(scripted("Hello, Maya.")) as server,
        Gateway(config_for(server), sampling=sampling) as gateway,
    ):
        answer = await gateway.reply(MESSAGES, max_tokens=small.manifest.reply_reserve,
                                     stop=("\nMaya:", "\nWren:"))
    assert answer == "Hello, Maya."
    body = server.requests[0]
    assert body["max_tokens"] == sampling.max_tokens
    assert body["temperature"] == sampling.temperature
    assert body["frequency_penalty"] == sampling.frequency_penalty
    assert body["presence_penalty"] == sampling.presence_penalty
    assert body["repeat_penalty"] == sampling.repeat_penalty  # llama.cpp's, via extra_body
    assert body["stop"] == [*sampling.stop, "\nMaya:", "\nWren:"]


async def test_the_full_profile_sends_what_any_openai_compatible_server_understands(
    full: Soul,
) -> None:
    async with (
        ModelServer(scripted("Hello.")) as server,
        Gateway(config_for(server), sampling=full.manifest.sampling) as gateway,
    ):
        await gateway.reply(MESSAGES, max_tokens=full.manifest.reply_reserve)
    body = server.requests[0]
    assert body["max_tokens"] == full.manifest.reply_reserve
    assert body["temperature"] == 0.7
    assert not {*PENALTIES, "stop"} & set(body)


async def test_a_callers_temperature_stands_and_its_max_tokens_is_capped_by_the_profile(
    small: Soul,
) -> None:
    async with (
        ModelServer(scripted("A quiet week.")) as server,
        Gateway(config_for(server), sampling=small.manifest.sampling) as gateway,
    ):
        await gateway.reply(MESSAGES, max_tokens=300, temperature=0.2, patient=True)
    body = server.requests[0]
    assert body["temperature"] == 0.2
    assert body["max_tokens"] == small.manifest.sampling.max_tokens


def cut_off(content: str) -> ResponsePlan:
    """A completion the server ended at max_tokens."""
    body = {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "length",
                     "message": {"role": "assistant", "content": content}}],
    }
    return ResponsePlan(raw=json.dumps(body).encode())


async def test_a_reply_the_small_profiles_cap_cut_off_ends_at_its_last_finished_sentence(
    small: Soul, full: Soul
) -> None:
    rambling = "Lily sounds lovely. A tree is a fine part! She will be the best tree in the"
    async with ModelServer(scripted(cut_off(rambling), cut_off("No sentence ends in this"),
                                    cut_off(rambling))) as server:
        async with Gateway(config_for(server), sampling=small.manifest.sampling) as gateway:
            assert await gateway.reply(MESSAGES) == "Lily sounds lovely. A tree is a fine part!"
            assert await gateway.reply(MESSAGES) == "No sentence ends in this"
        async with Gateway(config_for(server), sampling=full.manifest.sampling) as gateway:
            assert await gateway.reply(MESSAGES) == rambling  # no cap of its own, no trimming


async def test_structured_extraction_is_not_sampled_by_the_profile(small: Soul) -> None:
    from memory.consolidation import Extraction  # noqa: PLC0415 -- only this test needs it

    async with (
        ModelServer(scripted({"items": []})) as server,
        Gateway(config_for(server), sampling=small.manifest.sampling) as gateway,
    ):
        await gateway.extract(MESSAGES, Extraction)
    body = server.requests[0]
    assert not {*PENALTIES, "stop"} & set(body)
    assert body["temperature"] == 0.0


# --- a turn on the small profile ---------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


async def _household(path: Path) -> tuple[Memory, Person, Person]:
    memory = await Memory.open(path, embedder=HashEmbedder(), create=True, clock=Clock())
    owner = await memory.people.add("Olivia", telegram_id=1, owner=True)
    bob = await memory.people.add("Bob", telegram_id=2)
    return memory, owner, bob


@pytest.fixture
async def house(tmp_path: Path) -> AsyncIterator[tuple[Memory, Person, Person]]:
    memory, owner, bob = await _household(tmp_path / "h.db")
    try:
        yield memory, owner, bob
    finally:
        await memory.close()


async def test_a_turn_on_the_small_profile_stops_the_reply_at_a_new_speaker_line(
    house: tuple[Memory, Person, Person], small: Soul
) -> None:
    memory, _, bob = house
    async with (
        ModelServer(scripted("Hello, Bob.")) as server,
        Gateway(config_for(server), sampling=small.manifest.sampling) as gateway,
    ):
        reply = await respond(memory, small, gateway, speaker=bob,
                              chat_id=chat_id_for(bob, group=False), group=False,
                              text="hi there", now=NOW)
    assert reply.text == "Hello, Bob." and not reply.fallback
    body = server.requests[0]
    assert body["stop"] == [*small.manifest.sampling.stop, "\nWren:", "\nBob:"]
    assert body["max_tokens"] == small.manifest.sampling.max_tokens
    assert body["repeat_penalty"] == small.manifest.sampling.repeat_penalty


async def test_a_turn_on_the_full_profile_sends_no_stop(
    house: tuple[Memory, Person, Person], full: Soul
) -> None:
    memory, _, bob = house
    async with (
        ModelServer(scripted("Hello, Bob.")) as server,
        Gateway(config_for(server), sampling=full.manifest.sampling) as gateway,
    ):
        reply = await respond(memory, full, gateway, speaker=bob,
                              chat_id=chat_id_for(bob, group=False), group=False,
                              text="hi there", now=NOW)
    assert reply.prompt.stop == ()
    assert "stop" not in server.requests[0]


async def test_a_group_prompt_on_the_small_profile_stops_at_every_present_members_line(
    house: tuple[Memory, Person, Person], small: Soul
) -> None:
    memory, _, bob = house
    intent = Intent(speaker=bob, chat_id=chat_id_for(bob, group=True), group=True,
                    text="who is cooking tonight?", now=NOW)
    prompt = await assemble(memory, small, intent)
    assert prompt.stop == ("\nWren:", "\nBob:", "\nOlivia:")


# --- the assembler stays within the small budgets -------------------------------------------


async def _crowd(memory: Memory, bob: Person) -> None:
    """More of everything than the small profile can hold."""
    scope = private_scope(bob.person_id)
    topics = ["garden", "music", "work", "family", "food", "travel", "books", "health"]
    await memory.beliefs.assert_all([
        Assertion(
            proposition=f"Bob said the {topics[i % 8]} plan number {i} matters for the garden",
            scope=scope if i % 3 else SHARED,
            provenance=Provenance.TOLD,
            source=f"seed:{i}",
        )
        for i in range(300)
    ])
    for i in range(40):
        await memory.transcript.append(
            chat_id="dm:2",
            speaker_id=bob.person_id if i % 2 else None,
            role=Role.USER if i % 2 else Role.ASSISTANT,
            scope=scope,
            text=f"line {i}: " + "we talked about the garden and music " * 12,
        )
    await memory.summaries.write(scope, "dm:2", "A long summary of Bob's week. " * 60, 40)
    for i in range(30):
        await memory.goals.add(bob.person_id, f"Remember the garden plan {i}", scope=scope,
                               provenance="told")


async def test_a_crowded_prompt_on_the_small_profile_stays_within_the_small_budgets(
    house: tuple[Memory, Person, Person], small: Soul, full: Soul
) -> None:
    memory, _, bob = house
    await _crowd(memory, bob)
    intent = Intent(speaker=bob, chat_id="dm:2", group=False, now=NOW + timedelta(hours=1),
                    text="tell me about the garden and music plan")
    prompt = await assemble(memory, small, intent)
    budgets = small.manifest.budgets.model_dump()
    for surface, used in prompt.tokens.items():
        if surface in budgets:
            assert used <= budgets[surface], surface
    total = sum(count_tokens(m["content"]) for m in prompt.messages)
    assert total <= small.manifest.window - small.manifest.reply_reserve
    assert prompt.tokens["examples"] == 0  # the small profile shows no examples
    assert "# How you sound" not in prompt.text
    assert "# Who you are" in prompt.text and "# Honesty rule" in prompt.text
    assert "# Your persona" in prompt.text
    larger = await assemble(memory, full, intent)
    assert total < sum(count_tokens(m["content"]) for m in larger.messages)
