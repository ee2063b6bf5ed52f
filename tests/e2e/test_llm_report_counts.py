"""pytest's counts on the model path (issue 24 point 5): through the OpenAI wire path and litellm,
the count line and ``-x`` count scenarios, and the sub-results are counted as sub-results, the
same at every verbosity (tests/plugin/test_report_consumers.py has the same on the offline lab)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.llm_scripts import AgentScript, PytestRun, ScriptedModels, call, model_options, node, run_pytest
from tests.support.fake_openai import FakeOpenAIServer

GOLD = "5"  # passes
WRONG = "88"  # cancel_pending_order with the other reason: DB_STATE_MATCH (and ACTION_MATCH) fail
SCENARIOS = [f"tau2_retail__{task}" for task in (GOLD, WRONG)]


def _models() -> ScriptedModels:
    models = ScriptedModels()
    steps = models.gold_steps(WRONG)
    steps[0] = call("cancel_pending_order", {"order_id": "#W8835847", "reason": "no longer needed"})
    models.agent[WRONG] = AgentScript(steps)
    return models


def _expected_sub_results(run: PytestRun) -> str:
    """``N subtests passed, M subtests failed[, K subtests skipped]`` from the runs' metrics.json."""
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for scenario in SCENARIOS:
        metrics = run.metrics(scenario)
        gating = set(metrics["success_signals"])
        for check in metrics["checks"]:
            if check["signal"] in gating:
                counts[{True: "passed", False: "failed", None: "skipped"}[check["passed"]]] += 1
    return ", ".join(f"{n} subtests {word}" for word, n in counts.items() if n)


def _count_line(run: PytestRun) -> str:
    """pytest's count line, without its ``N warnings`` (litellm's first completion imports modules
    that make pydantic warn; those are not this plugin's counts)."""
    line = [line for line in run.stdout.splitlines() if re.search(r" in [\d.]+s\b", line)][-1]
    return re.sub(r"\d+ warnings?, ", "", line)


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_the_count_line_counts_scenarios_on_the_model_path(tmp_path: Path, transport: str) -> None:
    models = _models()
    runs = {}
    with FakeOpenAIServer() as server:
        models.install(server)
        options = [*(node(s) for s in SCENARIOS), *model_options(server), "--tau2-llm-transport", transport]
        # run_pytest adds -v: nothing more is -v, one -q the default verbosity, two -q quiet
        # (the three on the wire path; litellm's transport changes no reporting: the default).
        levels = {"verbose": [], "default": ["-q"], "quiet": ["-q", "-q"]}
        for label, extra in levels.items() if transport == "auto" else [("default", ["-q"])]:
            runs[label] = run_pytest([*options, *extra], tmp_path / label)
    for label, run in runs.items():
        assert run.returncode == 1, run.stdout[-3000:]
        assert run.metrics(SCENARIOS[0])["is_successful"] is True
        assert run.metrics(SCENARIOS[1])["is_successful"] is False
        line = _count_line(run)
        assert f"1 failed, 1 passed, {_expected_sub_results(run)} in " in line, (label, line)
    assert "SUBFAILED" not in runs["default"].stdout
    if transport == "auto":
        assert f"{node(SCENARIOS[1])} SUBFAILED[db_state_match] - " in runs["verbose"].stdout
        assert "SUBFAILED" not in runs["quiet"].stdout


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_exitfirst_stops_after_the_first_failing_scenario_on_the_model_path(tmp_path: Path, transport: str) -> None:
    models = _models()
    with FakeOpenAIServer() as server:
        models.install(server)
        # The failing scenario first: -x stops before the passing one, whatever number of its checks failed.
        args = [node(SCENARIOS[1]), node(SCENARIOS[0]), *model_options(server), "--tau2-llm-transport", transport]
        run = run_pytest([*args, "-x", "-p", "no:randomly"], tmp_path)
    assert run.returncode == 1, run.stdout[-3000:]
    assert "stopping after 1 failures" in run.stdout
    assert run.outcome_line(SCENARIOS[1]) == "FAILED" and run.outcome_line(SCENARIOS[0]) == ""
    assert "1 failed, " in _count_line(run) and " passed," not in _count_line(run).split("subtests")[0]
