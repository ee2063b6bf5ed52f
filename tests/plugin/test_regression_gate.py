"""Intervals in JUnit and all_metrics.json, the baseline comparison and the CI gates, through pytest
(docs/statistics.md)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from tests.plugin.conftest import RIGHT_AND_WRONG, Project


def _suite_properties(path: object) -> dict[str, str]:
    root = ET.parse(str(path)).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    props = suite.find("properties")
    return {} if props is None else {str(p.get("name")): str(p.get("value")) for p in props.iter("property")}


def test_intervals_reach_the_summary_all_metrics_and_junit(project: Project) -> None:
    junit = project.path / "junit.xml"
    run = project.restaurant().run(f"--junitxml={junit}", "--tau2-ci-level", "0.9")
    assert run.result.ret == 0
    assert "Intervals (90%; docs/statistics.md):" in run.summary()
    assert "  success rate: 100.0% [" in run.summary()
    assert "Intervals (90%" in run.stdout  # the terminal summary prints the same text
    block = json.loads((run.results_dir / "all_metrics.json").read_text("utf-8"))["intervals"]
    assert block["level"] == 0.9
    success = block["run"]["success_rate"]
    assert success["method"] == "Wilson" and success["estimate"] == 1.0 and 0.6 < success["low"] < 1.0
    props = _suite_properties(junit)
    assert props["tau2_ci_level"] == "0.9"
    assert props["tau2_success_rate"] == "1" and props["tau2_success_rate_method"] == "Wilson"
    assert (
        float(props["tau2_success_rate_low"]) == round(success["low"], 6)
        or abs(float(props["tau2_success_rate_low"]) - success["low"]) < 1e-5
    )


def test_a_bad_ci_level_is_a_usage_error(project: Project) -> None:
    run = project.restaurant().run("--tau2-ci-level", "95")
    assert run.result.ret == 4
    assert "--tau2-ci-level (ini tau2_ci_level) must be strictly between 0 and 1" in run.stderr


def test_baseline_without_a_difference_passes_the_gate_despite_a_failing_scenario(project: Project) -> None:
    """lab__wrong fails in both runs: no regression, so the gate makes the run exit 0."""
    project.lab(RIGHT_AND_WRONG)
    baseline = project.run()
    assert baseline.result.ret == 1  # without a gate a failing scenario fails the run
    junit = project.path / "junit.xml"
    run = project.run(f"--tau2-baseline={baseline.results_dir}", "--tau2-fail-on-regression", f"--junitxml={junit}")
    assert run.result.ret == 0, run.stdout
    assert (
        f"Baseline {baseline.results_dir} (A) vs this run (B): no detectable difference: +0.0 points" in run.summary()
    )
    comparison = json.loads((run.results_dir / "baseline_comparison.json").read_text("utf-8"))
    assert comparison["verdict"] == "no detectable difference" and comparison["run"]["metrics"][0]["tasks"] == 2
    props = _suite_properties(junit)
    assert props["tau2_baseline_verdict"] == "no detectable difference" and props["tau2_gate"] == "passed"


SEVEN_TASKS = "".join(
    f"""
@register_eval_scenario
class Task{i}(LabBase):
    name = "lab__task{i}"
"""
    for i in range(7)
)


def test_a_significant_regression_fails_the_run(project: Project) -> None:
    """The oracle passes the seven lab tasks, the do-nothing agent none (it never sets the value):
    McNemar's exact p = 2 / 2^7 = 0.016 < 0.05."""
    project.lab(SEVEN_TASKS)
    baseline = project.run()
    assert baseline.result.ret == 0
    run = project.run("--tau2-agent", "null", f"--tau2-baseline={baseline.results_dir}", "--tau2-fail-on-regression")
    assert run.result.ret == 1
    assert "this run is worse: -100.0 points [-100.0, -100.0], p = 0.0156, 7 paired tasks" in run.summary()
    assert "regression: this run is worse than the baseline beyond the noise" in run.stdout
    without_gate = project.run("--tau2-agent", "null", f"--tau2-baseline={baseline.results_dir}")
    assert "this run is worse" in without_gate.summary()  # reported; the exit status is pytest's own
    assert without_gate.result.ret == 1


def test_a_baseline_of_other_scenarios_is_not_compared(project: Project) -> None:
    project.restaurant()
    baseline = project.run("-k", "pepperoni")
    run = project.run(f"--tau2-baseline={baseline.results_dir}", "--tau2-fail-on-regression")
    assert run.result.ret == 1
    assert "not compared: cannot pair the runs: the scenario sets differ: 4 only in B" in run.summary()


def test_fail_under_on_the_estimate_and_on_the_lower_bound(project: Project) -> None:
    project.restaurant()
    on_estimate = project.run("--tau2-fail-under", "1.0")
    assert on_estimate.result.ret == 0
    assert "Gate --tau2-fail-under 1: the success rate 100.0% is at or above 100.0%: passed" in on_estimate.summary()
    on_bound = project.run("--tau2-fail-under", "0.7", "--tau2-fail-under-bound", "lower")
    assert on_bound.result.ret == 1  # 6 of 6: Wilson's lower end is 61.0%, below 70%
    assert "the lower end of the success rate's 95% interval 61.0% is below 70.0%: failed" in on_bound.summary()


def test_the_gate_and_suite_properties_under_xdist(project: Project) -> None:
    """Under -n the controller owns the results: it computes the intervals, writes them to JUnit
    and sets the exit status."""
    junit = project.path / "junit.xml"
    run = project.restaurant().run(
        "-n", "2", "--tau2-fail-under", "0.7", "--tau2-fail-under-bound", "lower", f"--junitxml={junit}", xdist=True
    )
    assert run.result.ret == 1
    props = _suite_properties(junit)
    assert props["tau2_success_rate"] == "1"
    assert props["tau2_gate"].startswith("failed: --tau2-fail-under: the lower end")
