"""Cloud speech engines (--tau2-tts-model, --tau2-asr-model): litellm's speech() and transcription()
over real HTTP to the loopback server (tests/support/fake_audio.py), a call carried by them, and a
failing cloud call as the scenario's infrastructure error."""

from __future__ import annotations

import json
import wave

import pytest

from pytest_tau2.errors import InfrastructureError, SettingsError
from pytest_tau2.run.checks import check_options
from pytest_tau2.settings import Settings
from pytest_tau2.speech.engines import LiteLLMSpeech, LiteLLMTranscriber, engines_for
from pytest_tau2.speech.line import PhoneLine
from pytest_tau2.speech.presets import default_preset
from tests.plugin.conftest import Project
from tests.support.fake_openai import FakeOpenAIServer

NAME = "restaurant__menu_question"


def _models(settings: Settings) -> tuple[tuple[str, dict[str, object]] | None, ...]:
    """The cloud engines as settings.roles resolved them (None: the offline engine)."""
    roles = settings.roles
    return tuple(None if role is None else (role.model, role.args) for role in (roles.tts, roles.asr))


def _args(server: FakeOpenAIServer) -> str:
    return json.dumps({"api_base": server.base_url, "api_key": "sk-loopback", "max_retries": 0})


def test_cloud_engines_carry_an_utterance_over_the_line() -> None:
    with FakeOpenAIServer() as server:
        settings = Settings(tts_model="openai/tts-1", tts_args=_args(server), asr_model="openai/whisper-1",
                            asr_args=_args(server))  # fmt: skip
        tts, asr = engines_for(*_models(settings))
        assert isinstance(tts, LiteLLMSpeech) and isinstance(asr, LiteLLMTranscriber)
        assert [role.option for role in settings.roles.speech()] == ["--tau2-tts-model", "--tau2-asr-model"]
        assert "sk-loopback" in settings.roles.secrets()  # masked in saved text like every role's key
        line = PhoneLine(default_preset("control"), 7, tts, asr)
        import asyncio

        heard = asyncio.run(line.carry("user", "I would like a pepperoni pizza."))
        agent = asyncio.run(line.carry("agent", "Your order is placed."))
        assert (heard, agent) == ("I would like a pepperoni pizza.", "Your order is placed.")
        # each side its own voice; the WAV asked for, the telephone band applied to what came back
        assert [(r["model"], r["voice"], r["response_format"]) for r in server.audio.speech] == [
            ("tts-1", "alloy", "wav"),
            ("tts-1", "nova", "wav"),
        ]
        assert len(server.audio.transcriptions) == 2 and all(size > 1000 for size in server.audio.transcriptions)
        assert line.summary()["engines"] == {"tts": "litellm:openai/tts-1", "asr": "litellm:openai/whisper-1"}


def test_offline_engines_stay_the_default_and_bad_arguments_are_refused() -> None:
    tts, asr = engines_for(*_models(Settings()))
    assert (tts.name, asr.name) == ("espeak-ng", "pocketsphinx")
    with pytest.raises(SettingsError, match="--tau2-tts-args"):
        check_options(Settings(tts_model="openai/tts-1", tts_args="[1]"))
    with pytest.raises(SettingsError, match="--tau2-asr-args"):
        check_options(Settings(asr_args='{"api_base": "http://x"}'))  # arguments without a model


def test_a_failing_cloud_call_is_one_line() -> None:
    with FakeOpenAIServer() as server:
        server.audio.fail_status = 500
        tts = LiteLLMSpeech("openai/tts-1", {"api_base": server.base_url, "api_key": "k", "max_retries": 0})
        with pytest.raises(InfrastructureError) as caught:
            tts.synthesize("Hello.", "en-us")
        message = str(caught.value)
        assert message.startswith("--tau2-tts-model openai/tts-1: the speech call failed: ") and "\n" not in message


def test_a_call_with_cloud_engines_passes_and_a_failing_one_is_an_error(project: Project) -> None:
    project.restaurant()
    with FakeOpenAIServer() as server:
        cloud = ("--tau2-tts-model", "openai/tts-1", "--tau2-tts-args", _args(server))
        cloud += ("--tau2-asr-model", "openai/whisper-1", "--tau2-asr-args", _args(server))
        scenarios = ("--tau2-scenarios", f"{NAME},restaurant__pizza_pepperoni", "--tau2-speech-complexity", "control")
        run = project.run(*scenarios, *cloud)
        assert run.result.ret == 0, run.stdout
        voice = run.metrics(NAME)["voice"]
        assert voice["engines"] == {"tts": "litellm:openai/tts-1", "asr": "litellm:openai/whisper-1"}
        assert voice["wer"] == {"user": 0.0, "agent": 0.0} and voice["latencies_s"]
        with wave.open(str(run.results_dir / NAME / "call.wav"), "rb") as call:
            assert call.getnchannels() == 2 and call.getnframes() > 16000
        server.audio.fail_status = 503
        failed = project.run(*scenarios, *cloud)
    assert failed.items() == {NAME: "ERROR", "restaurant__pizza_pepperoni": "ERROR"}, failed.stdout
    assert "--tau2-tts-model openai/tts-1: the speech call failed: " in failed.stdout
