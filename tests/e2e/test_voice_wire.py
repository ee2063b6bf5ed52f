"""Audio negotiated in the handshake: a text bot stays a text bot under a speech preset, a bot whose
``ready`` says ``audio`` gets Twilio's ``connected`` and ``start``; a bot's mark ends its turn; its
broken audio is the scenario's error, naming it; the reference voice bot with a model behind it."""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from pytest_tau2.bot import audio_wire
from pytest_tau2.bot.client import WebSocketAgent
from pytest_tau2.bot.server import BotServer, ServerThread
from pytest_tau2.bot.session import BotConfig
from pytest_tau2.bot.voice import VoiceEngines
from pytest_tau2.errors import ProtocolError
from pytest_tau2.run import run_scenario
from pytest_tau2.settings import Settings
from tests.e2e.conftest import offline_user, scenario_or_skip

SCENARIO = "restaurant__menu_question"


def test_audio_is_negotiated(registry: Any, bot_settings: Settings, reference_bot: BotServer) -> None:
    speech = replace(bot_settings, speech_complexity="control")
    scenario = scenario_or_skip(registry, SCENARIO, speech)

    async def start(url: str) -> WebSocketAgent:
        agent = WebSocketAgent(url, scenario, speech)
        await agent.start()
        await agent.aclose()
        return agent

    text_bot = asyncio.run(start(reference_bot.url))
    assert text_bot.audio is None and "audio" not in (text_bot.ready or {})  # phase 1's text over the line
    config = BotConfig(bot_settings, reference_bot.config.agent_factory, voice=VoiceEngines.offline())
    with ServerThread(BotServer(config, port=0)) as url:
        voice_bot = asyncio.run(start(url))
    assert (voice_bot.ready or {})["audio"] == {
        "format": "twilio", "encoding": "audio/x-mulaw", "sample_rate": 8000, "ends_turns": True
    }  # fmt: skip


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")
def test_a_mark_ends_the_agents_turn_and_broken_audio_is_the_scenarios_error(
    registry: Any, bot_settings: Settings, fake_bot: Any
) -> None:
    pytest.importorskip("pocketsphinx")
    seen: list[str] = []

    async def handler(ws: Any) -> None:
        json.loads(await ws.recv())
        await ws.send(
            json.dumps({"type": "ready", "protocol_version": 1, "session_id": "f", "audio": {"format": "twilio"}})
        )
        json.loads(await ws.recv())
        await ws.send(json.dumps({"type": "initialized", "db_hash": None}))
        while True:
            event = json.loads(await ws.recv())
            seen.append(event.get("event") or event.get("type"))
            if event.get("event") == "mark" and seen.count("mark") == 1:  # first turn: 0.4 s of tone, a mark
                tone = (3000 * np.sin(np.arange(3200) * 2 * np.pi * 440 / 8000)).astype(np.int16)
                for chunk in audio_wire.frames(audio_wire.ulaw_encode(tone), 800):
                    await ws.send(json.dumps(audio_wire.media("MZ", chunk)))
                await ws.send(json.dumps(audio_wire.mark("MZ", "reply_done")))
            elif event.get("event") == "mark":  # second turn: broken audio
                await ws.send(json.dumps({"event": "media", "streamSid": "MZ", "media": {"payload": "not audio!"}}))
                await asyncio.sleep(5)
                return

    settings = replace(bot_settings, speech_complexity="control", audio_pace=0.0)
    scenario = scenario_or_skip(registry, SCENARIO, settings)
    agent = WebSocketAgent(fake_bot(handler), scenario, settings, reply_timeout=30)
    outcome = asyncio.run(run_scenario(scenario, agent=agent, user=offline_user(scenario, settings), settings=settings))
    assert outcome.conversation.stop_reason == "error" and isinstance(outcome.conversation.error, ProtocolError)
    assert "media event from the bot: payload is not base64" in str(outcome.conversation.error)
    assert seen[:2] == ["connected", "start"] and "media" in seen and seen[-1] == "mark"
    # the first turn ended on the bot's mark: its audio is the agent's utterance, recognized by the runner
    agent = [u for u in outcome.extra["voice"].utterances if u.side == "agent"]
    assert len(agent) == 1 and len(agent[0].signal) == 6400 and agent[0].tts_s == 0.0  # 0.4 s at 16 kHz
    said = [m for m in outcome.conversation.transcript if m["role"] == "assistant"]
    assert said and said[-1]["content"] == said[-1]["heard"]  # no agent_message: its words are what was heard


class _StubTTS:
    name = "stub"

    def synthesize(self, text: str, voice: str) -> tuple[bytes, int]:
        return b"\x10\x20" * 8000, 16000  # half a second at 16 kHz


class _StubASR:
    name, rate = "stub", 16000

    def __init__(self) -> None:
        self.heard: list[int] = []

    def transcribe(self, pcm16: bytes) -> str:
        self.heard.append(len(pcm16))
        return "what drinks do you have"


def test_the_voice_bot_with_a_model_behind_it(registry: Any, bot_settings: Settings) -> None:
    """ASR -> an LLM agent (the loopback server) -> TTS: its tool call reported, its words spoken, then said."""
    from pytest_tau2.bot.agents import litellm_factory
    from pytest_tau2.bot.client import initialization_frame
    from pytest_tau2.bot.session import BotSession
    from tests.support.fake_openai import FakeOpenAIServer, sequence, text, tool_calls

    scenario = scenario_or_skip(registry, SCENARIO, bot_settings)
    asr = _StubASR()
    with FakeOpenAIServer() as server:
        server.add_handler("agent", sequence(tool_calls([("GetMenuTool", {})]), text("We have cola and lemonade.")))
        factory = litellm_factory("openai/agent", json.dumps({"api_base": server.base_url, "api_key": "sk-x"}))
        session = BotSession(BotConfig(bot_settings, factory, voice=VoiceEngines(_StubTTS(), asr)), registry)

        async def call() -> list[dict[str, Any]]:
            out: list[dict[str, Any]] = []
            frames = [{"type": "hello", "protocol_version": 1, "scenario": SCENARIO}, initialization_frame(scenario)]
            frames += [audio_wire.connected(), audio_wire.start("MZ9", "CA9", {})]
            frames += [audio_wire.media("MZ9", audio_wire.silence())]  # leading silence: not speech
            frames += [audio_wire.media("MZ9", b"\x20" * 160, sequence=4, chunk=2) for _ in range(10)]
            frames += [audio_wire.mark("MZ9", audio_wire.USER_TURN_END, 15)]
            for frame in frames:
                out += [answer async for answer in session.handle(frame)]
            return out

        out = asyncio.run(call())
    kinds = [audio_wire.kind(frame) for frame in out]
    assert kinds[:3] == ["ready", "initialized", "tool_call"] and kinds[-1] == "agent_message", kinds
    assert out[2]["name"] == "GetMenuTool" and out[-1]["text"] == "We have cola and lemonade."
    media = [frame for frame, kind in zip(out, kinds, strict=True) if kind == "media"]
    assert len(media) == 5 and all(frame["streamSid"] == "MZ9" for frame in media)  # 0.5 s in 100 ms events
    assert asr.heard == [10 * 160 * 2 * 2]  # the ten frames of speech, at 16 kHz, 16-bit
    user_turn = server.requests_for("agent")[0]["messages"][-1]
    assert user_turn == {"role": "user", "content": "what drinks do you have"}
