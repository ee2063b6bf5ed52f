"""A phone call in the HTML report, opened in headless Chromium: the scenario panel plays call.wav
and lists each utterance at its time in the file; clicking one seeks the player there.

One real run (a ``python -m pytest`` subprocess) of the restaurant's shortest call under
``--tau2-speech-complexity control``: espeak-ng and pocketsphinx, offline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
NAME = "restaurant__menu_question"

pytest.importorskip("pocketsphinx")
pytest.importorskip("jiwer")
pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")


@pytest.fixture(scope="module")
def call_report(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Path:
    """The run's results folder (asks for the browser first: without one, nothing runs)."""
    results = tmp_path_factory.mktemp("call") / "results"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU2_", "PYTEST_"))}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--tau2-results-dir={results}",
               "--tau2-scenarios", NAME, "--tau2-speech-complexity", "control"]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return results


def test_the_panel_plays_the_call_and_a_click_on_a_turn_seeks_there(call_report: Path, open_report: Any) -> None:
    voice = json.loads((call_report / NAME / "metrics.json").read_text("utf-8"))["voice"]
    page = open_report(call_report / "report.html")
    page.open_panel(NAME)
    player = "#panel-body #call audio.call-audio"
    assert page.page.get_attribute(player, "src") == f"{NAME}/call.wav"
    page.page.wait_for_function(f"document.querySelector('{player}').readyState >= 1")  # the WAV's header was read
    duration = page.page.eval_on_selector(player, "a => a.duration")
    assert duration == pytest.approx(voice["call_s"], abs=0.01)

    turns = page.page.locator("#panel-body #call .call-turns li[data-start]")
    assert turns.count() == len(voice["turns"]) >= 3
    for i, turn in enumerate(voice["turns"]):  # the transcript aligned: each utterance, what was heard, when
        text = turns.nth(i).inner_text()
        assert turn["spoken"].split("###")[0].strip()[:40] in text and f"heard: {turn['heard'] or '(nothing)'}" in text

    third = voice["turns"][2]
    turns.nth(2).click()
    assert page.page.eval_on_selector(player, "a => a.currentTime") == pytest.approx(third["start_s"], abs=0.01)
    assert "playing" in (turns.nth(2).get_attribute("class") or "")
    facts = page.page.inner_text("#panel-body #call .facts").lower()
    assert "response latency" in facts and "word error rate" in facts
    page.screenshot(call_report / "call-panel.png")
    assert page.errors == []
