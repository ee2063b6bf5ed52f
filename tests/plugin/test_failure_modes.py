"""Why did it fail, where users look: the first divergence in the failure text, JUnit, metrics.json
and the report; the run's failure modes in the summary, failure_modes.json, the report and compare."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.plugin.conftest import RIGHT_AND_WRONG, Project, junit_cases

DIVERGENCE = "set_value called with other arguments than gold action #0 set_value (value: expected 7, found 8)"


def test_a_failed_scenario_names_its_first_divergence_everywhere(project: Project) -> None:
    run = project.lab(RIGHT_AND_WRONG).run("--junitxml=junit.xml")
    assert run.items() == {"lab__right": "PASSED", "lab__wrong": "FAILED"}
    assert f"first divergence from gold: turn 3: {DIVERGENCE}" in run.stdout

    found = run.metrics("lab__wrong")["first_divergence"]
    assert (found["kind"], found["tool"], found["turn_idx"]) == ("wrong_arguments", "set_value", 3)
    assert found["gold"] == {"index": 0, "name": "set_value", "arguments": {"key": "x", "value": 7}}
    assert found["argument_diff"] == {"value": {"expected": 7, "found": 8}}
    assert run.metrics("lab__right")["first_divergence"] is None

    cases = junit_cases(project.path / "junit.xml")
    wrong = next(case for name, case in cases.items() if "lab__wrong" in name)
    assert wrong["outcome"] == "failure"
    failure = (project.path / "junit.xml").read_text("utf-8")
    assert DIVERGENCE in failure

    modes = json.loads((run.results_dir / "failure_modes.json").read_text("utf-8"))
    assert modes == {
        "failed_trials": 1,
        "groups": [
            {
                "key": "wrong_arguments:set_value(value)",
                "label": "wrong arguments: set_value (value)",
                "count": 1,
                "scenarios": ["lab__wrong"],
            }
        ],
    }
    summary = (run.results_dir / "all_summary.txt").read_text("utf-8")
    assert "Failure modes (1 failed trials, 1 groups; failure_modes.json has them all):" in summary
    assert "     1  wrong arguments: set_value (value): lab__wrong" in summary
    page = (run.results_dir / "report.html").read_text("utf-8")
    assert 'id="failure-modes"' in page and 'data-mode="wrong_arguments:set_value(value)"' in page
    assert "First divergence from gold" in page  # the scenario panel's block (report.js)

    fixed = project.lab(RIGHT_AND_WRONG.replace("agent_script = WRONG_VALUE", "agent_script = RIGHT_VALUE")).run()
    assert fixed.items() == {"lab__right": "PASSED", "lab__wrong": "PASSED"}
    assert not (fixed.results_dir / "failure_modes.json").exists()  # nothing failed on the agent
    compared = subprocess.run(
        [sys.executable, "-m", "pytest_tau2.cli", "compare", str(run.results_dir), str(fixed.results_dir)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert compared.returncode == 0, compared.stderr
    assert "Failure modes (A -> B), largest change first:" in compared.stdout
    assert "  shrank 1 -> 0: wrong arguments: set_value (value)" in compared.stdout
