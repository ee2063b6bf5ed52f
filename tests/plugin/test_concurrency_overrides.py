"""``--tau2-concurrency`` beside a conftest that overrides ``tau2_agent``: the overridden items run
with their own agent, one at a time, and no prefetched built-in conversation is run for them or
written over their results."""

from __future__ import annotations

import json

from tests.plugin.conftest import RIGHT_AND_WRONG, Project

# Without an agent_script, LAB_CONFTEST's tau2_agent returns the run's own agent (the oracle).
BY_THE_ORACLE = """
@register_eval_scenario
class ByTheOracle(LabBase):
    name = "lab__by_the_oracle"
"""


def test_overridden_items_keep_their_own_results_under_concurrency(project: Project) -> None:
    project.lab(RIGHT_AND_WRONG + BY_THE_ORACLE)  # LAB_CONFTEST overrides tau2_agent; lab__wrong's script fails
    run = project.run("--tau2-concurrency=4")
    assert run.items() == {"lab__by_the_oracle": "PASSED", "lab__right": "PASSED", "lab__wrong": "FAILED"}
    assert run.metrics("lab__wrong")["is_successful"] is False  # the scripted agent's run, not the oracle's
    document = json.loads((run.results_dir / "all_metrics.json").read_text("utf-8"))
    assert {m["scenario"]: m["is_successful"] for m in document["scenarios"]} == {
        "lab__by_the_oracle": True,
        "lab__right": True,
        "lab__wrong": False,
    }
    assert "finished in the background" not in run.summary()
