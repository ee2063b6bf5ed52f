"""The NL judge on the model path (the fake OpenAI server, through the OpenAI wire path and
litellm), answering as judges do: in this project's format (plain, in a code fence, without
indexes), contradicting itself (one index twice with different verdicts; a stray entry ahead of
unindexed verdicts; a verdict for an assertion nobody asked about), failing (HTTP 500 on every
retry) or empty.

A judge that cannot grade is the item's infrastructure error naming the problem; it never
rewrites the conversation (stop reason and CLEAN_EXIT stay the agent's), and judge_result.json
keeps what the judge was sent and what it answered. The terminal's and the report's stalled
counts agree (an infrastructure error counts as one, not as stalled)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.llm_scripts import (
    AgentScript,
    PytestRun,
    ScriptedModels,
    call,
    model_options,
    node,
    run_pytest,
)
from tests.support.fake_openai import FakeOpenAIServer, error, judge_answer

SHAPES = {"36": "ok", "59": "fenced", "62": "unindexed", "37": "duplicate_index", "38": "stray_entry",
          "40": "extra_entry", "110": "empty"}  # fmt: skip
FAILING_CALL = "109"  # the judge answers 500 on every attempt; the agent also never speaks (stalled)
STALLED = "19"  # graded normally, but the agent never speaks: stalled, not an error
PASSING = ("36", "59", "62")
CONTRADICTIONS = {
    "37": "entries 0 and 2 give contradicting verdicts for assertion 0 (passed True and False)",
    "38": "3 entries without 'index' for 2 assertions: cannot tell which verdict grades which assertion",
    "40": "entry 2 has index 2 outside 0..1",
}
TASKS = (*SHAPES, FAILING_CALL, STALLED)


def retail(task_id: str) -> str:
    return f"tau2_retail__{task_id}"


def _mute(models: ScriptedModels, task_id: str) -> AgentScript:
    """The gold calls without a word, then the exit tool without a word: 0 agent turns."""
    gold = [call(a["name"], a["arguments"]) for a in models.tasks.gold(task_id)]
    silent_exit = call("EndConversationTool", {})
    return AgentScript(gold, idle=silent_exit, closing=silent_exit)


def produce(tmp: Path, transport: str) -> PytestRun:
    models = ScriptedModels()
    for task_id, shape in SHAPES.items():
        models.judge[task_id] = lambda request, shape=shape: judge_answer(request, shape)
    models.judge[FAILING_CALL] = error(500, "the judge's GPU fell over")
    models.agent[FAILING_CALL] = _mute(models, FAILING_CALL)
    models.agent[STALLED] = _mute(models, STALLED)
    with FakeOpenAIServer() as server:
        models.install(server)
        args = [
            *(node(retail(t)) for t in TASKS),
            *model_options(server, sides=("agent", "user", "judge")),
            "--tau2-llm-transport",
            transport,
            "--tau2-llm-retries",
            "1",
        ]
        return run_pytest(args, tmp)


@pytest.fixture(scope="module", params=["auto", "litellm"])
def judged(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> PytestRun:
    return produce(tmp_path_factory.mktemp(f"judge-{request.param}"), request.param)


def test_replies_in_this_projects_format_grade_the_scenario(judged: PytestRun) -> None:
    for task_id in PASSING:
        assert judged.outcome_line(retail(task_id)) == "PASSED", judged.stdout[-4000:]
        metrics = judged.metrics(retail(task_id))
        assert metrics["nl_assertion_pass_rate"] == 1.0 and metrics["infrastructure_error"] is None


@pytest.mark.parametrize("task_id", sorted(CONTRADICTIONS))
def test_a_contradicting_judge_is_an_infrastructure_error_naming_the_contradiction(
    judged: PytestRun, task_id: str
) -> None:
    assert judged.outcome_line(retail(task_id)) == "ERROR", judged.stdout[-4000:]
    metrics = judged.metrics(retail(task_id))
    error_text = metrics["infrastructure_error"]
    assert "gave no readable verdict, not the agent's fault" in error_text
    assert CONTRADICTIONS[task_id] in error_text, error_text
    assert metrics["nl_assertion_pass_rate"] is None  # no verdict made up, first or last
    assert CONTRADICTIONS[task_id] in judged.stdout  # the item's error says it too


@pytest.mark.parametrize("task_id", [FAILING_CALL, "110", "37"])
def test_a_judge_failure_leaves_the_conversation_as_it_ended(judged: PytestRun, task_id: str) -> None:
    metrics = judged.metrics(retail(task_id))
    assert metrics["infrastructure_error"], metrics
    assert metrics["stop_reason"] == "exit", metrics["stop_reason"]
    assert metrics["clean_exit"] is True
    clean = next(c for c in metrics["checks"] if c["signal"] == "clean_exit")
    assert clean["passed"] is True, clean
    assert metrics["db_state_match"] is True  # the agent did its part
    nl = [c for c in metrics["checks"] if c["signal"] == "nl_assertion"]
    assert nl and all(c["passed"] is None and c["message"].startswith("not judged: ") for c in nl)


def _judge_file(run: PytestRun, task_id: str) -> dict[str, Any]:
    return run.judge_result(retail(task_id))


def test_judge_result_json_is_written_whenever_the_judge_was_called(judged: PytestRun) -> None:
    failed = _judge_file(judged, FAILING_CALL)
    assert "the NL-assertion judge failed, not the agent" in failed["error"] and "GPU fell over" in failed["error"]
    assert failed["raw_reply"] is None and failed["model"] == "openai/judge"
    assert [m["role"] for m in failed["judge_input"]] == ["system", "user"]
    assert "## nl_assertions" in failed["judge_input"][1]["content"]
    empty = _judge_file(judged, "110")
    assert empty["raw_reply"] == "" and "the judge returned an empty reply" in empty["error"]
    contradiction = _judge_file(judged, "37")
    assert '"on second thought"' in contradiction["raw_reply"] and CONTRADICTIONS["37"] in contradiction["error"]
    ok = _judge_file(judged, "36")
    assert ok["error"] is None and [v["passed"] for v in ok["nl_assertion_verdicts"]] == [True, True]
    assert _judge_file(judged, STALLED)["error"] is None  # a stalled agent is still graded


def test_the_terminal_and_the_files_count_stalled_and_errors_alike(judged: PytestRun) -> None:
    run = judged
    assert run.metrics(retail(FAILING_CALL))["stalled"] is True  # stalled too, but an error first
    assert run.outcome_line(retail(FAILING_CALL)) == "ERROR"
    assert run.outcome_line(retail(STALLED)) == "FAILED"
    errors = len(CONTRADICTIONS) + 2  # the contradictions, the empty reply, the failed call
    headline = run.summary().splitlines()[0]
    assert "1 stalled" in headline and f"{errors} infrastructure errors" in headline, headline
    assert "Stalled: 1 scenario, in which the agent spoke 0 times" in run.summary()
    assert headline in run.stdout
    from pytest_tau2.report.html.loader import load_run
    from pytest_tau2.report.html.stats import overview

    shown = overview(load_run(run.results_dir), "run")
    assert shown.markers["stalled"] == 1 and shown.outcomes["error"] == errors
    assert re.search(r"\b1 stalled\b", (run.results_dir / "report.html").read_text("utf-8"))
