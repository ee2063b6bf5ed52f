"""``pytest-tau2 bot --oracle --voice`` evaluated with ``--tau2-agent-url`` under ``--tau2-speech-complexity
control``: the six restaurant scenarios pass as audio calls, each with its stereo call.wav and latencies.

One nested run shared by the assertions (speech recognition costs about the audio's length in CPU):
the user's speech is streamed as fast as the socket takes it (``--tau2-audio-pace 0``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import wave
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import REPO, RESTAURANT

pytest.importorskip("pocketsphinx")
pytest.importorskip("jiwer")
pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")


@pytest.fixture
def voice_bot(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The reference bot's command line with --voice, on a free port; yields its URL and log."""
    log = tmp_path / "bot.log"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    command = [sys.executable, "-m", "pytest_tau2.cli", "bot", "--oracle", "--voice"]
    with log.open("w") as out:
        bot = subprocess.Popen([*command, "--port", "0"], cwd=REPO, env=env, stderr=out, stdout=out)
    try:
        deadline = time.monotonic() + 60
        while "serving" not in log.read_text() and bot.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        text = log.read_text()
        assert "serving" in text, text
        yield text.split(" on ", 1)[1].split()[0], log
    finally:
        bot.terminate()
        bot.wait(10)


def test_the_voice_bot_passes_the_restaurant_calls_with_wavs_and_latencies(
    voice_bot: tuple[str, Path], tmp_path: Path
) -> None:
    url, log = voice_bot
    results = tmp_path / "results"
    command = [sys.executable, "-m", "pytest", "-p", "xdist", "-n", "2", "-p", "no:cacheprovider", "-q"]
    command += ["-k", "restaurant", "--tau2-agent-url", url, "--tau2-speech-complexity", "control"]
    command += ["--tau2-audio-pace", "0", "--tau2-results-dir", str(results)]
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    run = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=540)
    assert run.returncode == 0 and "6 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    for name in RESTAURANT:
        with wave.open(str(results / name / "call.wav"), "rb") as call:
            assert (call.getnchannels(), call.getframerate(), call.getsampwidth()) == (2, 16000, 2)
            assert call.getnframes() / call.getframerate() > 1.0
        metrics = json.loads((results / name / "metrics.json").read_text("utf-8"))
        voice = metrics["voice"]
        assert metrics["agent"].startswith("websocket:ws://127.0.0.1:") and metrics["clean_exit"] is True
        assert voice["complexity"] == "control"
        # one agent turn answered the caller in audio: end of the user's speech -> its first audio frame
        assert len(voice["latencies_s"]) >= 1 and all(isinstance(v, float) for v in voice["latencies_s"]), voice
        agent_turns = [t for t in voice["turns"] if t["side"] == "agent"]
        assert agent_turns[-1]["spoken"] == "Your request has been handled. Is there anything else I can help with?"
        assert agent_turns[-1]["audio_s"] > 1.0 and agent_turns[-1]["tts_s"] == 0.0  # the bot's audio, not ours
    # the bot logs a session when it has seen its connection close, which may come after the run ends
    deadline = time.monotonic() + 30
    while log.read_text().count("session=") < 6 and time.monotonic() < deadline:
        time.sleep(0.2)
    sessions = [line for line in log.read_text().splitlines() if "session=" in line]
    assert len(sessions) == 6 and all("stop=exit" in line for line in sessions), sessions
