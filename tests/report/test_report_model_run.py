"""report.html of a run made through the model path (the fake OpenAI server, via the OpenAI wire
path and via litellm), opened in headless Chromium: the agent calls its tools as real models do
(arguments as JSON strings, two calls under one id, calls without an id, an id reused in every
message, arguments cut off mid-way; tests/e2e/llm_scripts.py:realistic_agent_script).

The scenario panel finds every gold call in the transcript (it compares parsed arguments, as
ACTION_MATCH does), shows arguments as JSON rather than an escaped string, flags the cut-off
arguments and shows them as sent, and shows each call with its own result: the failed call that
shared its id with a successful one is red, with its own error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.llm_scripts import (
    BAD_ARGUMENTS,
    ScriptedModels,
    model_options,
    node,
    realistic_agent_script,
    run_pytest,
)
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.tau2_data import has_data, skip_reason

if not has_data("retail"):
    pytest.skip(skip_reason("retail"), allow_module_level=True)

TASK = "5"
SCENARIO = f"tau2_retail__{TASK}"


@pytest.fixture(scope="module", params=["auto", "litellm"])
def model_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Path:
    """The results folder of one run (asks for the browser first: without one, nothing runs)."""
    tmp = tmp_path_factory.mktemp(f"model-run-{request.param}")
    models = ScriptedModels()
    models.agent[TASK] = realistic_agent_script(models, TASK)
    with FakeOpenAIServer() as server:
        models.install(server)
        run = run_pytest([node(SCENARIO), *model_options(server), "--tau2-llm-transport", request.param], tmp)
    assert run.returncode == 0, run.stdout[-3000:]
    assert (run.results_dir / "report.html").is_file()
    return run.results_dir


def test_every_gold_call_is_found_beside_a_green_action_match(model_run: Path, open_report: Any) -> None:
    page = open_report(model_run / "report.html")
    page.open_panel(SCENARIO)
    signal = page.page.inner_text('#panel-body [data-signal="action_match"]')
    assert "✓" in signal, signal
    check = page.page.inner_text('#panel-body [data-check="action_match"]')
    assert "no identical call in the transcript" not in check, check
    assert check.count("an identical call is in the transcript") == 5, check
    assert page.page.locator("#panel-body ol.gold li.missing").count() == 0
    assert page.errors == []


def test_arguments_show_as_json_and_a_cut_off_string_as_flagged_text(model_run: Path, open_report: Any) -> None:
    page = open_report(model_run / "report.html", f"#s={SCENARIO}")
    page.page.wait_for_selector("#panel-body #conversation .call")
    shown = page.page.eval_on_selector_all(
        "#panel-body #conversation .call .args", "els => els.map(e => e.textContent)"
    )
    assert '{"first_name":"Mei","last_name":"Kovacs","zip":"28236"}' in shown, shown
    assert not any('\\"' in text for text in shown), shown  # no escaped JSON string anywhere
    assert BAD_ARGUMENTS in shown
    flagged = page.page.locator("#panel-body .call", has_text="arguments not a JSON object")
    assert flagged.count() == 1 and BAD_ARGUMENTS in flagged.inner_text()
    assert page.errors == []


def test_each_call_shows_its_own_result_when_two_share_an_id(model_run: Path, open_report: Any) -> None:
    page = open_report(model_run / "report.html", f"#s={SCENARIO}")
    page.page.wait_for_selector("#panel-body #conversation .call")
    calls = page.page.locator("#panel-body #conversation .call")
    first, second = calls.nth(0), calls.nth(1)
    assert "find_user_id_by_name_zip" in first.inner_text() and "mei_kovacs_8020" in first.inner_text()
    assert "error" not in (first.get_attribute("class") or "")
    assert "error" in (second.get_attribute("class") or "") and "Order not found" in second.inner_text()
    assert "id call_0 repeated" in second.inner_text()
    assert page.page.locator("#panel-body #conversation .call.error").count() == 2  # the lookup, the cut-off call
    assert page.page.locator("#panel-body #conversation .call", has_text="no result recorded").count() == 0
    # no result is shown twice, nor apart from its call
    assert page.page.locator("#panel-body #conversation .chat > .msg > .result").count() == 0
    assert page.errors == []


def test_a_transcript_that_holds_argument_strings_reads_the_same(
    model_run: Path, open_report: Any, tmp_path: Path
) -> None:
    """Runs made before arguments were stored parsed hold the strings the model sent, and results
    under repeated ids: the panel parses them and pairs results by place, not by id."""
    import json
    import shutil

    from pytest_tau2.report.html import write_report

    old = tmp_path / "old-run"
    shutil.copytree(model_run, old)
    path = old / SCENARIO / "transcript.json"
    data = json.loads(path.read_text("utf-8"))
    for message in data["messages"]:
        for call in message.get("tool_calls") or []:
            if isinstance(call["arguments"], dict):
                call["arguments"] = json.dumps(call["arguments"])
            call.pop("invalid_arguments", None)
            call["id"] = call.pop("sent_id", call["id"])
        if message.get("role") == "tool":
            message["tool_call_id"] = "call_0"
    path.write_text(json.dumps(data), "utf-8")
    page = open_report(write_report([old], old / "report.html"), f"#s={SCENARIO}")
    page.page.wait_for_selector("#panel-body #conversation .call")
    check = page.page.inner_text('#panel-body [data-check="action_match"]')
    assert "no identical call in the transcript" not in check, check
    shown = page.page.eval_on_selector_all(
        "#panel-body #conversation .call .args", "els => els.map(e => e.textContent)"
    )
    assert '{"first_name":"Mei","last_name":"Kovacs","zip":"28236"}' in shown, shown
    assert page.page.locator("#panel-body .call", has_text="arguments not a JSON object").count() == 1
    assert "Order not found" in page.page.locator("#panel-body #conversation .call").nth(1).inner_text()
    assert page.page.locator("#panel-body #conversation .call.error").count() == 2
    assert page.errors == []


@pytest.fixture(scope="module")
def reward_run(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Path:
    """A run under --tau2-verdict tau2-reward whose agent (through the wire path) never makes the return."""
    from tests.e2e.llm_scripts import AgentScript

    models = ScriptedModels()
    steps = [s for s in models.gold_steps(TASK) if "return_delivered_order_items" not in str(s.tool_calls)]
    models.agent[TASK] = AgentScript(steps, closing=models.gold_closing(TASK))
    tmp = tmp_path_factory.mktemp("reward-run")
    with FakeOpenAIServer() as server:
        models.install(server)
        run = run_pytest([node(SCENARIO), *model_options(server), "--tau2-verdict", "tau2-reward"], tmp)
    assert run.outcome_line(SCENARIO) == "FAILED", run.stdout[-3000:]
    return run.results_dir


def test_the_tau2_reward_check_shows_the_db_diff_as_db_state_match_does(reward_run: Path, open_report: Any) -> None:
    page = open_report(reward_run / "report.html", f"#s={SCENARIO}")
    page.page.wait_for_selector('#panel-body [data-check="tau2_reward"]')
    reward = page.page.locator('#panel-body [data-check="tau2_reward"] .diff-line.mono')
    db = page.page.locator('#panel-body [data-check="db_state_match"] .diff-line.mono')
    assert reward.count() == db.count() == 3
    assert reward.all_inner_texts() == db.all_inner_texts()
    status = reward.filter(has_text="['status']")
    assert status.locator(".diff-exp").inner_text() == "'return requested'"
    assert status.locator(".diff-act").inner_text() == "'delivered'"
    assert page.errors == []
