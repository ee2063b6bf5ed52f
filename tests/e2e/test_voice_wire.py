"""Audio negotiated in the handshake: a text bot stays a text bot under a speech preset, a bot whose
``ready`` says ``audio`` gets Twilio's ``connected`` and ``start``; a bot's broken audio is the
scenario's error, naming it."""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import replace
from typing import Any

import pytest

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
def test_broken_audio_from_the_bot_is_the_scenarios_error(registry: Any, bot_settings: Settings, fake_bot: Any) -> None:
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
            if event.get("event") == "mark":
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
