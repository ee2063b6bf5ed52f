"""Issue 11, the run-level faults: results travel in the reports, one run per folder, crashes and
interrupts counted, resume. Each test runs real pytest processes; for each fault it checks the
item outcomes, the message, and that items run == entries in all_metrics.json == JUnit testcases.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from pytest_tau2.run.run_folder import RunFolder
from pytest_tau2.settings import Settings
from tests.plugin.conftest import Project, junit_cases, validate_results

LAB = """
class Base(LabBase):
    description = "Set x to 7."


@register_eval_scenario
class A(Base):
    name = "lab__a"


@register_eval_scenario
class B(Base):
    name = "lab__b"


@register_eval_scenario
class C(Base):
    name = "lab__c_fragile"


@register_eval_scenario
class D(Base):
    name = "lab__d"


@register_eval_scenario
class E(Base):
    name = "lab__e_wrong"
    agent_script = WRONG_VALUE
"""

FRAGILE = """

import os
import signal

import pytest as _pytest


@_pytest.fixture(autouse=True)
def _fragile(request):
    \"\"\"lab__c_fragile dies (TAU2_TEST_FAULT=kill: SIGKILL of its process; =interrupt: Ctrl-C).\"\"\"
    if "lab__c_fragile" in request.node.nodeid:
        fault = os.environ.get("TAU2_TEST_FAULT")
        if fault == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if fault == "interrupt":
            raise KeyboardInterrupt
"""


@pytest.fixture
def lab(project: Project) -> Project:
    project.lab(LAB)
    conftest = project.path / "conftest.py"
    conftest.write_text(conftest.read_text("utf-8") + FRAGILE, "utf-8")
    return project


def _run(project: Project, *args: str, xdist: bool = False) -> pytest.RunResult:
    project.monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins = ["-p", "tau2", *(["-p", "xdist"] if xdist else [])]
    return project.pytester.runpytest_subprocess(*plugins, "-v", *args)


def _all(results: Path) -> dict[str, object]:
    return json.loads((results / "all_metrics.json").read_text("utf-8"))  # type: ignore[no-any-return]


def _entries(results: Path) -> int:
    data = _all(results)
    return len(data["scenarios"]) + len(data["errors_without_result"])  # type: ignore[arg-type]


def test_a_folder_with_results_is_refused_before_anything_runs(lab: Project, tmp_path: Path) -> None:
    results = lab.path / "out"
    assert _run(lab, f"--tau2-results-dir={results}", "-k", "lab__a").ret == 0
    again = _run(lab, f"--tau2-results-dir={results}", "-k", "lab__b")
    assert again.ret == pytest.ExitCode.USAGE_ERROR
    assert "already holds results of another run" in again.stderr.str()
    hint = f"--tau2-resume={results} in place of --tau2-results-dir"
    assert hint in again.stderr.str()
    assert not (results / "lab__b").exists()
    followed = _run(lab, f"--tau2-resume={results}", "-k", "lab__b")  # the hint, as written, is accepted
    assert followed.ret == 0, followed.stdout.str() + followed.stderr.str()
    assert (results / "lab__b" / "metrics.json").is_file()


def test_a_folder_in_use_by_another_run_is_refused(lab: Project) -> None:
    results = lab.path / "busy"
    holder = RunFolder(results, Settings(results_dir=str(results)))
    holder.open()
    try:
        run = _run(lab, f"--tau2-results-dir={results}")
        assert run.ret == pytest.ExitCode.USAGE_ERROR
        assert "is in use by another run (pid" in run.stderr.str()
    finally:
        holder.close()
    assert not (results / ".tau2.lock").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_refused_before_anything_runs(lab: Project) -> None:
    results = lab.path / "ro"
    results.mkdir()
    results.chmod(stat.S_IRUSR | stat.S_IXUSR)
    run = _run(lab, f"--tau2-results-dir={results}")
    assert run.ret == pytest.ExitCode.USAGE_ERROR and "is not writable" in run.stderr.str()


def test_a_file_as_results_folder_is_refused_in_one_line(lab: Project) -> None:
    target = lab.path / "a-file"
    target.write_text("x")
    run = _run(lab, f"--tau2-results-dir={target}")
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    assert "is a file, not a folder" in run.stderr.str() and "Traceback" not in run.stderr.str()


def test_a_killed_worker_leaves_its_scenario_counted_as_an_error(lab: Project) -> None:
    results = lab.path / "killed"
    lab.monkeypatch.setenv("TAU2_TEST_FAULT", "kill")
    run = _run(lab, "-n", "2", f"--tau2-results-dir={results}", f"--junitxml={lab.path / 'j.xml'}", xdist=True)
    assert run.ret == pytest.ExitCode.TESTS_FAILED
    data = _all(results)
    errors = {e["scenario"]: e["reason"] for e in data["errors_without_result"]}  # type: ignore[union-attr,index]
    assert list(errors) == ["lab__c_fragile"] and "crashed" in errors["lab__c_fragile"]
    assert sorted(m["scenario"] for m in data["scenarios"]) == ["lab__a", "lab__b", "lab__d", "lab__e_wrong"]  # type: ignore[union-attr,index]
    assert _entries(results) == 5 == len(junit_cases(lab.path / "j.xml"))
    summary = (results / "all_summary.txt").read_text("utf-8")
    assert summary.startswith("Success rate: 3/5 (60.0%) of 5 scenarios")
    assert "lab__c_fragile: " in summary and "100.0%" not in summary.splitlines()[0]


def test_an_interrupt_says_so_and_counts_the_scenario_in_flight(lab: Project) -> None:
    results = lab.path / "interrupted"
    lab.monkeypatch.setenv("TAU2_TEST_FAULT", "interrupt")
    run = _run(lab, f"--tau2-results-dir={results}", "-p", "no:randomly")
    assert run.ret == pytest.ExitCode.INTERRUPTED
    summary = (results / "all_summary.txt").read_text("utf-8")
    assert summary.startswith("Interrupted after 3 of 5 scenarios")
    errors = _all(results)["errors_without_result"]
    assert [e["scenario"] for e in errors] == ["lab__c_fragile"]  # type: ignore[union-attr,index]


def test_resume_reports_finished_scenarios_from_disk_and_runs_the_rest(lab: Project) -> None:
    results = lab.path / "campaign"
    lab.monkeypatch.setenv("TAU2_TEST_FAULT", "kill")
    first = _run(lab, f"--tau2-results-dir={results}", "-p", "no:randomly")
    assert first.ret != 0 and not (results / "all_metrics.json").exists()  # the whole process died
    done = sorted(p.parent.name for p in results.glob("*/metrics.json"))
    assert done == ["lab__a", "lab__b"]
    before = {name: (results / name / "metrics.json").read_text() for name in done}
    lab.monkeypatch.delenv("TAU2_TEST_FAULT")
    resumed = _run(lab, f"--tau2-resume={results}", f"--junitxml={lab.path / 'r.xml'}", "-p", "no:randomly")
    assert resumed.ret == pytest.ExitCode.TESTS_FAILED  # lab__e_wrong fails, as it would have
    for name, text in before.items():  # not run again: the saved result (timings included) stands
        old, new = json.loads(text), json.loads((results / name / "metrics.json").read_text())
        assert new == {**old, "resumed": True}
    outcomes = {c: v["outcome"] for c, v in junit_cases(lab.path / "r.xml").items()}
    assert outcomes["test_scenario[lab__a]"] == "passed" and outcomes["test_scenario[lab__e_wrong]"] == "failure"
    data = _all(results)
    assert [m["scenario"] for m in data["scenarios"] if m["resumed"]] == ["lab__a", "lab__b"]  # type: ignore[union-attr,index]
    assert _entries(results) == 5 == len(outcomes)
    summary = (results / "all_summary.txt").read_text("utf-8")
    assert summary.startswith("Success rate: 4/5 (80.0%) of 5 scenarios")
    assert "2 of 5 results resumed from the saved run" in summary
    validate_results(results)


def test_resume_refuses_changed_settings_naming_the_fields(lab: Project) -> None:
    results = lab.path / "fp"
    assert _run(lab, f"--tau2-results-dir={results}", "-k", "lab__a").ret == 0
    run = _run(lab, f"--tau2-resume={results}", "--tau2-min-agent-turns=1", "--tau2-max-turns=5")
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    err = run.stderr.str()
    assert "min_agent_turns: 3 then, 1 now" in err and "max_turns: None then, 5 now" in err


def test_resume_moves_leftovers_of_unfinished_scenarios_aside(lab: Project) -> None:
    results = lab.path / "left"
    assert _run(lab, f"--tau2-results-dir={results}", "-k", "lab__a").ret == 0
    leftover = results / "lab__b"
    leftover.mkdir()
    (leftover / "transcript.json").write_text("{}")  # an in-flight scenario: no metrics.json
    run = _run(lab, f"--tau2-resume={results}", "-k", "lab__a or lab__b")
    assert run.ret == 0
    assert [p.name.split(".")[1] for p in results.glob("lab__b.killed.*")] == ["killed"]
    assert (results / "lab__b" / "metrics.json").exists()


def test_last_failed_reruns_only_the_failures(lab: Project) -> None:
    lab.monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    first = lab.pytester.runpytest_subprocess("-p", "tau2", "-p", "cacheprovider", "-q")
    assert first.ret == pytest.ExitCode.TESTS_FAILED
    again = lab.pytester.runpytest_subprocess("-p", "tau2", "-p", "cacheprovider", "-v", "--lf")
    assert "1 passed" not in again.stdout.str()
    assert [line for line in again.outlines if " FAILED" in line and "::test_scenario[" in line] == [
        line for line in again.outlines if "test_scenario[lab__e_wrong] FAILED" in line
    ]
    assert "4 deselected" in again.stdout.str() or "run-last-failure: rerun previous 1 failure" in again.stdout.str()
