"""The simulated user on a phone call (``--tau2-speech-complexity``): its first request, as the
loopback OpenAI server received it through litellm, carries tau2's voice guidelines (read here
from the data at run time, as the product reads them) and the persona of the preset: for a tau2
task the one ``tasks_voice.json`` gives it, for the restaurant the preset's default.

The customer hangs up on its first turn, so each call is two short utterances (speech
recognition is the slow part).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.llm_scripts import DATA_DIR, STOP, model_options, node, run_pytest
from tests.support.fake_openai import FakeOpenAIServer, text

pytest.importorskip("pocketsphinx")
pytest.importorskip("jiwer")
pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")

GUIDELINES = DATA_DIR / "tau2" / "user_simulator" / "simulation_guidelines_voice.md"
RETAIL, RESTAURANT = "tau2_retail__0", "restaurant__menu_question"


@pytest.mark.skipif(not GUIDELINES.is_file(), reason=f"no tau2 voice guidelines at {GUIDELINES}")
def test_the_callers_first_request_carries_the_voice_guidelines_and_the_persona(tmp_path: Path) -> None:
    from pytest_tau2.speech.caller import INTERRUPTS, MINIMAL_VERBOSITY

    voice = json.loads((DATA_DIR / "tau2" / "domains" / "retail" / "tasks_voice.json").read_text("utf-8"))
    persona = voice["configs"]["0"]["configs"]["regular"]["persona_config"]
    assert persona == {"verbosity": "minimal", "interrupt_tendency": "interrupts"}  # what the run must honour
    before, after = GUIDELINES.read_text("utf-8").split("<PERSONA_GUIDELINES>")
    with FakeOpenAIServer() as server:
        server.add_handler("agent", text("Goodbye."))
        server.add_handler("user", text(f"Bye. {STOP}"))
        args = [node(RETAIL), node(RESTAURANT), *model_options(server), "--tau2-speech-complexity", "regular"]
        run = run_pytest(args, tmp_path)
        requests = server.requests_for("user")
    assert run.returncode == 1, run.output[-3000:]  # the customer hung up before its task was done
    firsts: dict[str, dict[str, Any]] = {}
    for request in requests:
        system = request["messages"][0]["content"]
        firsts.setdefault(RETAIL if "Domain: retail" in system else RESTAURANT, request)
    assert set(firsts) == {RETAIL, RESTAURANT}
    for name, request in firsts.items():
        system = request["messages"][0]["content"]
        persona_part = f"\n\n{MINIMAL_VERBOSITY}\n\n{INTERRUPTS}\n"
        assert system.startswith(before + persona_part + after), name  # the guidelines, the persona in place
        assert system.endswith("\n</scenario>"), name
        saved = run.results_dir / name / "scenario_config" / "user_prompt.txt"
        assert saved.read_text("utf-8") == system, name  # what the run says it sent
        metrics = run.metrics(name)
        assert metrics["stop_reason"] == "user_stop" and metrics["voice"]["complexity"] == "regular", name
    task = next(t for t in json.loads((GUIDELINES.parents[1] / "domains" / "retail" / "tasks.json").read_text("utf-8"))
                if t["id"] == "0")  # fmt: skip
    reason = task["user_scenario"]["instructions"]["reason_for_call"].split("\n")[0]
    assert reason in firsts[RETAIL]["messages"][0]["content"]  # the task's scenario follows
    assert "<scenario>\nYou are" in firsts[RESTAURANT]["messages"][0]["content"]  # the domain's own prompt
