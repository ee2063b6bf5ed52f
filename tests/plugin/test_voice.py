"""--tau2-speech-complexity end to end: a restaurant scenario as a phone call (espeak-ng + pocketsphinx).

Speech recognition is the slow part (about a tenth of the speech's length in CPU): issue 40's three
calls in one run, and the shortest restaurant call twice.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import wave

import pytest

from tests.plugin.conftest import Project
from tests.support.tau2_data import DATA_DIR, requires_data

pytest.importorskip("pocketsphinx")
pytest.importorskip("jiwer")
pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")

NAME = "restaurant__menu_question"  # the caller asks about drinks and hangs up: few, short turns
DONE_WHEN = ("restaurant__pizza_pepperoni", "tau2_retail__0", "tau2_retail__5")
TAU2_CONFTEST = "import restaurant_scenarios  # noqa: F401\nimport pytest_tau2.domains.tau2_sources  # noqa: F401\n"
"""What a project needs for both sources: its own scenarios and tau2's (with TAU2_DATA_DIR set)."""


@requires_data("retail")
def test_issue_40s_check_three_calls_pass_with_their_wavs_and_latencies(project: Project) -> None:
    # -k's full names are exact (tau2_retail__5 is not tau2_retail__50); under xdist call.wav
    # travels from the worker in the item's report (base64), as every result file does.
    project.restaurant().write("conftest.py", TAU2_CONFTEST)
    selection = " or ".join(DONE_WHEN)
    run = project.run("-k", selection, "--tau2-speech-complexity", "control", "-n", "1", xdist=True)
    assert run.result.ret == 0, run.stdout[-3000:]
    assert run.result.parseoutcomes()["passed"] == 3, run.stdout[-3000:]  # the three, none of tau2_retail__5x
    assert all(f"PASSED test_scenarios.py::test_scenario[{name}]" in run.stdout for name in DONE_WHEN)
    rows = list(csv.DictReader(io.StringIO((run.results_dir / "all_latencies.csv").read_text("utf-8"))))
    for name in DONE_WHEN:
        with wave.open(str(run.results_dir / name / "call.wav"), "rb") as call:
            assert (call.getnchannels(), call.getframerate(), call.getsampwidth()) == (2, 16000, 2)
            assert call.getnframes() / call.getframerate() > 1.0
        voice = run.metrics(name)["voice"]
        assert voice["complexity"] == "control" and voice["engines"] == {"tts": "espeak-ng", "asr": "pocketsphinx"}
        assert voice["latencies_s"] and all(v >= 0 for v in voice["latencies_s"])
        assert set(voice["latency_s"]) == {"p50", "p90", "p95"} and voice["wer"]["user"] is not None
        assert voice["interruptions"] == 0  # control: the persona waits
        assert [float(r["latency_s"]) for r in rows if r["scenario"] == name] == voice["latencies_s"]
        assert '"heard"' in (run.results_dir / name / "transcript.json").read_text("utf-8")
    presets = json.loads((DATA_DIR / "tau2" / "domains" / "retail" / "tasks_voice.json").read_text("utf-8"))
    persona = presets["configs"]["0"]["configs"]["control"]["persona_name"]
    assert run.metrics("tau2_retail__0")["voice"]["persona"] == persona  # the task's, from tasks_voice.json
    block = json.loads((run.results_dir / "all_metrics.json").read_text("utf-8"))["voice"]
    assert block["calls"] == 3 and block["turns"] == len(rows)
    summary = run.summary().splitlines()
    assert summary[0] == "Success rate: 3/3 (100.0%) of 3 scenarios"
    assert summary[1].startswith(f"  voice: 3 calls, agent response latency p50 {block['latency_s']['p50']:.2f} s")


def test_the_same_seed_gives_the_same_call(project: Project) -> None:
    project.restaurant()
    args = ("--tau2-scenarios", NAME, "--tau2-speech-complexity", "regular", "--tau2-seed", "7")
    first, second = project.run(*args), project.run(*args)
    wavs = [(run.results_dir / NAME / "call.wav").read_bytes() for run in (first, second)]
    assert len(wavs[0]) > 44 + 16000 * 4
    assert wavs[0] == wavs[1]
    voices = [run.metrics(NAME)["voice"] for run in (first, second)]
    starts = [[t["start_s"] for t in v["turns"]] for v in voices]
    assert starts[0] == starts[1]
    assert voices[0]["interruptions"] == voices[1]["interruptions"]  # regular: the persona may cut in, seeded
