"""--tau2-speech-complexity end to end: a restaurant scenario as a phone call (espeak-ng + pocketsphinx).

Speech recognition is slow on a loaded machine (seconds per utterance): one short scenario, three runs.
"""

from __future__ import annotations

import shutil
import wave

import pytest

from tests.plugin.conftest import Project

pytest.importorskip("pocketsphinx")
pytest.importorskip("jiwer")
pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")

NAME = "restaurant__menu_question"  # the caller asks about drinks and hangs up: few, short turns


def test_a_control_call_passes_and_writes_the_call_and_its_latencies(project: Project) -> None:
    # Under xdist: call.wav travels from the worker in the item's report (base64), as every result file does.
    args = ("--tau2-scenarios", NAME, "--tau2-speech-complexity", "control", "-n", "1")
    run = project.restaurant().run(*args, xdist=True)
    assert run.result.ret == 0 and f"PASSED test_scenarios.py::test_scenario[{NAME}]" in run.stdout, run.stdout
    with wave.open(str(run.results_dir / NAME / "call.wav"), "rb") as call:
        assert (call.getnchannels(), call.getframerate(), call.getsampwidth()) == (2, 16000, 2)
        assert call.getnframes() / call.getframerate() > 1.0
    voice = run.metrics(NAME)["voice"]
    assert voice["complexity"] == "control"
    assert voice["engines"] == {"tts": "espeak-ng", "asr": "pocketsphinx"}
    assert voice["latencies_s"] and all(v >= 0 for v in voice["latencies_s"])
    assert set(voice["latency_s"]) == {"p50", "p90", "p95"}
    assert voice["wer"]["user"] is not None
    transcript = (run.results_dir / NAME / "transcript.json").read_text("utf-8")
    assert '"heard"' in transcript


def test_the_same_seed_gives_the_same_call(project: Project) -> None:
    project.restaurant()
    args = ("--tau2-scenarios", NAME, "--tau2-speech-complexity", "regular", "--tau2-seed", "7")
    first, second = project.run(*args), project.run(*args)
    wavs = [(run.results_dir / NAME / "call.wav").read_bytes() for run in (first, second)]
    assert len(wavs[0]) > 44 + 16000 * 4
    assert wavs[0] == wavs[1]
