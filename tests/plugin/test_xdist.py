"""Under pytest-xdist a run gives the same verdicts, JUnit testcases and one correct summary."""

from __future__ import annotations

import json

import pytest

from tests.plugin.conftest import Project, junit_cases
from tests.plugin.test_run import RESTAURANT, WRONG_TOTAL


def test_xdist_run_matches_a_serial_run(project: Project) -> None:
    workers = "2"
    project.restaurant(WRONG_TOTAL)
    serial = project.run("-k", "restaurant", "--junitxml=serial.xml")
    parallel = project.run("-n", workers, "-k", "restaurant", "--junitxml=parallel.xml", xdist=True)

    assert serial.result.ret == parallel.result.ret == pytest.ExitCode.TESTS_FAILED
    parallel.result.stdout.fnmatch_lines([f"created: {workers}/{workers} workers", f"{workers} workers [[]7 items[]]"])

    expected = {**dict.fromkeys(RESTAURANT, "passed"), "restaurant__wrong_total": "failure"}
    for xml in ("serial.xml", "parallel.xml"):
        cases = junit_cases(project.path / xml)
        assert {
            name.removeprefix("test_scenario[").removesuffix("]"): case["outcome"] for name, case in cases.items()
        } == expected
    serial_cases, parallel_cases = junit_cases(project.path / "serial.xml"), junit_cases(project.path / "parallel.xml")
    for name, case in serial_cases.items():
        assert parallel_cases[name]["properties"] == case["properties"], name
    assert parallel_cases["test_scenario[restaurant__wrong_total]"]["properties"]["is_action_match"] == "false"

    # One summary, written by the controller from every worker's results.
    assert parallel.stdout.count("tau2 summary") == 1
    assert parallel.summary() == serial.summary()
    assert parallel.summary().splitlines()[0] == "Success rate: 6/7 (85.7%) of 7 scenarios"
    all_metrics = json.loads((parallel.results_dir / "all_metrics.json").read_text())
    assert [m["scenario"] for m in all_metrics["scenarios"]] == sorted([*RESTAURANT, "restaurant__wrong_total"])
    assert not [p.name for p in parallel.results_dir.iterdir() if p.name.startswith(".")]  # no temp files left
    for name in expected:
        assert parallel.metrics(name)["is_successful"] == serial.metrics(name)["is_successful"]
