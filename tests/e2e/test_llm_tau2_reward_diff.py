"""``--tau2-verdict tau2-reward`` on the model path (both transports): when the final DB differs,
the reward's failure shows the same path-level diff as DB_STATE_MATCH does under the six-signal
verdict, in the terminal, in metrics.json and in the JUnit failure text."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.llm_scripts import AgentScript, PytestRun, ScriptedModels, model_options, node, run_pytest
from tests.support.fake_openai import FakeOpenAIServer

TASK = "5"
SCENARIO = f"tau2_retail__{TASK}"
DIFF_LINE = "values_changed: root['orders']['#W6390527']['status']: expected 'return requested' but found 'delivered'"


def no_return(models: ScriptedModels) -> AgentScript:
    """The gold calls but the return itself: the order is never marked for return."""
    steps = [s for s in models.gold_steps(TASK) if "return_delivered_order_items" not in str(s.tool_calls)]
    return AgentScript(steps, closing=models.gold_closing(TASK))


def produce(tmp: Path, transport: str, verdict: str) -> PytestRun:
    models = ScriptedModels()
    models.agent[TASK] = no_return(models)
    with FakeOpenAIServer() as server:
        models.install(server)
        args = [node(SCENARIO), *model_options(server), "--tau2-llm-transport", transport, "--tau2-verdict", verdict]
        return run_pytest(args, tmp)


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_a_db_failure_under_the_tau2_reward_verdict_shows_the_path_level_diff(tmp_path: Path, transport: str) -> None:
    reward_run = produce(tmp_path / "reward", transport, "tau2-reward")
    six_run = produce(tmp_path / "six", transport, "six-signal")
    for run in (reward_run, six_run):
        assert run.outcome_line(SCENARIO) == "FAILED", run.stdout[-3000:]
    six = next(c for c in six_run.metrics(SCENARIO)["checks"] if c["signal"] == "db_state_match")
    diff_lines = [line for line in six["message"].splitlines() if line.startswith(("values_changed", "type_changes"))]
    assert diff_lines and any(line.startswith(DIFF_LINE) for line in diff_lines), six["message"]
    metrics = reward_run.metrics(SCENARIO)
    assert metrics["tau2_reward"] == 0.0 and metrics["success_signals"] == ["tau2_reward"]
    reward = next(c for c in metrics["checks"] if c["signal"] == "tau2_reward")
    assert "DB: the final DB differs from the gold replay's" in reward["message"]
    for line in diff_lines:  # the same diff, line for line
        assert line in reward["message"].splitlines(), reward["message"]
        assert line in reward_run.stdout  # the terminal's failure text
    failure = reward_run.testcase(SCENARIO).find("failure")
    assert failure is not None and DIFF_LINE in (failure.get("message", "") + (failure.text or ""))
