"""A minimal pipecat pipeline bot (tests/support/pipecat_bot.py: pipecat's WebSocket server transport
and TwilioFrameSerializer, STT and TTS processors around the offline engines) evaluated by a nested
pytest run with --tau2-agent-url and --tau2-speech-complexity control."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.bot.agents import oracle_factory
from pytest_tau2.bot.session import BotConfig
from pytest_tau2.settings import Settings
from tests.e2e.conftest import REPO

pytest.importorskip("pipecat")
pytest.importorskip("pocketsphinx")
pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")

NAME = "restaurant__menu_question"  # the caller asks about drinks and hangs up: few, short turns


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_pipecat_pipeline_bot_passes_a_call(bot_settings: Settings, registry: dict[str, Any], tmp_path: Path) -> None:
    from tests.support.pipecat_bot import PipecatBotThread

    bot = PipecatBotThread(BotConfig(bot_settings, oracle_factory()), registry, _free_port())
    results = tmp_path / "results"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tau2-scenarios", NAME]
    command += ["--tau2-speech-complexity", "control", "--tau2-audio-pace", "0", "--tau2-results-dir", str(results)]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with bot as url:
        run = subprocess.run([*command, "--tau2-agent-url", url], cwd=REPO, env=env, capture_output=True, text=True,
                             timeout=300)  # fmt: skip
    assert bot.error is None, repr(bot.error)
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    metrics = json.loads((results / NAME / "metrics.json").read_text("utf-8"))
    assert metrics["clean_exit"] is True
    voice = metrics["voice"]
    # pipecat paced its audio in real time and never said its turn was over: the runner heard its silence
    assert voice["latencies_s"] and all(v > 0 for v in voice["latencies_s"])
    agent = [t for t in voice["turns"] if t["side"] == "agent"]
    assert agent and all(t["audio_s"] > 1.0 and t["tts_s"] == 0.0 for t in agent)
    assert (results / NAME / "call.wav").stat().st_size > 44 + 4 * 16000
