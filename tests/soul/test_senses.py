"""Her hearing and sight: a voice note's words and a photo's description through the real openai
client against the local model server, and plain failures when a server cannot."""

from __future__ import annotations

import pytest

from soul.model import Gateway, ModelConfig, ModelError
from soul.senses import PHOTO_MARK, VOICE_MARK, Senses
from tests.support.model_server import ModelServer, ResponsePlan, seen_image, spoken_audio


def _gateway(server: ModelServer) -> Gateway:
    return Gateway(ModelConfig(base_url=server.base_url, api_key="test", model="test-model",
                               timeout_s=5.0, attempts=1))


async def test_a_voice_note_becomes_a_line_marked_as_transcribed() -> None:
    async with (ModelServer(lambda _r: ResponsePlan(reply="unused")) as server,
                _gateway(server) as gateway):
        senses = Senses(gateway, audio_model="test-whisper")
        line = await senses.hear(spoken_audio("the bins go out on Tuesday"), "voice.ogg")
    assert line == f"{VOICE_MARK} the bins go out on Tuesday"
    assert server.transcriptions == 1


async def test_a_photo_becomes_a_short_description_with_its_caption() -> None:
    async with (ModelServer(lambda _r: ResponsePlan(reply="unused")) as server,
                _gateway(server) as gateway):
        senses = Senses(gateway, vision_model="test-model")
        line = await senses.see(seen_image("two cats asleep on a radiator"), "image/jpeg",
                                caption="ours")
    assert line == f'{PHOTO_MARK} two cats asleep on a radiator Caption: "ours"'
    assert server.images == 1 and server.requests == []  # no conversation request was made


async def test_a_server_that_is_down_fails_with_one_plain_line() -> None:
    async with ModelServer(lambda _r: ResponsePlan(reply="unused")) as server:
        url = server.base_url  # the server stops at the block's end: nothing listens there
    gateway = Gateway(ModelConfig(base_url=url, api_key="test", model="m", timeout_s=2.0,
                                  attempts=1))
    async with gateway:
        senses = Senses(gateway, audio_model="test-whisper")
        with pytest.raises(ModelError, match="could not connect") as failed:
            await senses.hear(spoken_audio("x"), "voice.ogg")
    assert "\n" not in str(failed.value)


def test_without_named_models_or_a_gateway_she_neither_hears_nor_sees() -> None:
    assert not Senses().can_hear and not Senses().can_see
    assert not Senses(object(), audio_model="whisper-1", vision_model="gpt-4o").can_hear
