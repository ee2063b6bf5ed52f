"""Fault matrix, data and definitions: broken data whatever the selection, unparseable unpinned files,
success signals that resolve to a bad value. Each fault is a pytest run in a subprocess.

See docs/faults.md ("Faults in the model and bot layers": data and definitions).
"""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest

from pytest_tau2.data.manifest import DOMAIN_FILES
from tests.e2e.fault_matrix import assert_counts_agree, junit_outcome, junit_scenarios
from tests.e2e.llm_scripts import DATA_DIR, PytestRun, node, run_pytest, subprocess_env

UNAVAILABLE = "tau2_retail__unavailable"
BROKEN_JSON = '{\n  "users": {\n    "u1": {"name": "Ann",}\n  }\n}\n'  # line 3, column 26


def _debug(run: PytestRun) -> str:
    return f"exit {run.returncode}\n--- stdout (tail)\n{run.stdout[-4000:]}\n--- stderr\n{run.stderr[-2000:]}"


def _no_data(tmp: Path, *args: str) -> PytestRun:
    return run_pytest(list(args), tmp, env=subprocess_env(TAU2_DATA_DIR=str(tmp / "no-such-folder")))


# ---- no data: one scenario selected, whatever the way -------------------------------------------------------


@pytest.mark.parametrize(
    "selection",
    [["-k", "tau2_retail__1"], ["-k", "retail__1 or retail__2"], ["--tau2-scenarios", "tau2_retail__1"]],
    ids=["-k", "-k-two", "--tau2-scenarios"],
)
def test_a_selection_of_a_broken_domain_shows_its_error(tmp_path: Path, selection: list[str]) -> None:
    run = _no_data(tmp_path, *selection)
    assert run.returncode == 1, _debug(run)  # not 5 ("no tests ran"), not a usage error
    assert run.outcome_line(UNAVAILABLE) == "ERROR", _debug(run)
    assert "does not exist or is not a folder (needed for domain 'retail')" in run.stdout
    assert "did you mean" not in run.output and "tau2_airline" not in run.stdout.split("short test summary")[-1]
    assert junit_outcome(run, UNAVAILABLE) == "error"
    assert_counts_agree(run, [UNAVAILABLE])


def test_a_node_id_of_a_broken_domain_names_the_problem(tmp_path: Path) -> None:
    run = _no_data(tmp_path, node("tau2_retail__1"))
    assert run.returncode == 4, _debug(run)  # pytest's usage error for an argument it cannot find
    assert "ERROR: tau2_retail__1: not collected because tau2_retail is unavailable: " in run.stderr, _debug(run)
    assert "does not exist or is not a folder" in run.stderr


def test_a_selection_of_other_domains_is_not_disturbed(tmp_path: Path) -> None:
    run = _no_data(tmp_path, "-k", "restaurant__menu_question")
    assert run.returncode == 0, _debug(run)
    assert run.outcome_line("restaurant__menu_question") == "PASSED"
    assert UNAVAILABLE not in junit_scenarios(run)


# ---- unpinned data that does not parse -------------------------------------------------------------------------


def _copy_retail(root: Path) -> Path:
    for relative in DOMAIN_FILES["retail"]:
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DATA_DIR / relative, target)
    return root / "tau2" / "domains" / "retail"


@pytest.fixture(scope="module")
def broken_db_run(tmp_path_factory: pytest.TempPathFactory) -> PytestRun:
    tmp = tmp_path_factory.mktemp("broken_db")
    folder = _copy_retail(tmp / "data")
    (folder / "db.json").write_text(BROKEN_JSON, "utf-8")
    env = subprocess_env(TAU2_DATA_DIR=str(tmp / "data"))
    return run_pytest(["-k", "tau2_retail", "--tau2-allow-unpinned-data"], tmp, env=env)


def test_an_unparseable_unpinned_db_is_one_error_naming_file_and_line(broken_db_run: PytestRun) -> None:
    run = broken_db_run
    assert run.returncode == 1, _debug(run)
    assert run.outcome_line(UNAVAILABLE) == "ERROR", _debug(run)
    assert "tau2/domains/retail/db.json:3:26: not valid JSON: Expecting property name" in run.stdout
    assert "--tau2-allow-unpinned-data accepts changed data files, not unparseable ones" in run.stdout
    assert "JSONDecodeError" not in run.output and "Traceback" not in run.output
    assert_counts_agree(run, [UNAVAILABLE])  # once, not once per scenario


# ---- success signals declared through a property ---------------------------------------------------------------

PROJECT_SCENARIOS = """
from __future__ import annotations

from functools import cached_property

from pytest_tau2 import Scenario, SuccessSignal, register_eval_scenario


class FaultLab(Scenario):
    description = "Say hello."

    @cached_property
    def success_signals(self):
        return self.signals()

    def signals(self):
        return (SuccessSignal.CLEAN_EXIT,)


@register_eval_scenario
class EmptySignals(FaultLab):
    name = "faultlab__empty"

    def signals(self):
        return ()


@register_eval_scenario
class StringSignals(FaultLab):
    name = "faultlab__string"

    def signals(self):
        return "CLEAN_EXIT"


@register_eval_scenario
class GoodSignals(FaultLab):
    name = "faultlab__good"
"""


def _signals_project(project: Path) -> Path:
    (project / "pytest.ini").write_text("[pytest]\n", "utf-8")
    (project / "faultlab_scenarios.py").write_text(textwrap.dedent(PROJECT_SCENARIOS), "utf-8")
    (project / "test_faultlab.py").write_text(
        "import faultlab_scenarios  # noqa: F401\nfrom pytest_tau2 import test_scenario  # noqa: F401\n", "utf-8"
    )
    return project


@pytest.fixture(scope="module")
def signals_run(tmp_path_factory: pytest.TempPathFactory) -> PytestRun:
    project = _signals_project(tmp_path_factory.mktemp("signals"))
    return run_pytest(["-k", "faultlab", "-p", "no:xdist"], project, cwd=project)


def test_bad_success_signals_are_collection_errors_naming_the_class(signals_run: PytestRun) -> None:
    run = signals_run
    assert run.returncode == 2, _debug(run)  # interrupted: errors during collection
    assert "Interrupted: 2 errors during collection" in run.stdout, _debug(run)
    for cls, value in (("EmptySignals", "()"), ("StringSignals", "'CLEAN_EXIT'")):
        assert (
            f"scenario class faultlab_scenarios.{cls} (name 'faultlab__{cls[:-7].lower()}'): "
            f"its success_signals property returned success_signals={value}"
        ) in run.stdout, _debug(run)
    assert sorted(junit_scenarios(run)) == ["faultlab__empty", "faultlab__string"]
    assert junit_outcome(run, "faultlab__empty") == "error"
    assert not any(run.results_dir.glob("faultlab__*/metrics.json"))  # no conversation ran


def test_bad_success_signals_under_xdist_are_collection_errors_too(tmp_path: Path) -> None:
    """xdist reports a worker's collection errors and runs the rest; the bad scenarios never run."""
    (tmp_path / "project").mkdir()
    project = _signals_project(tmp_path / "project")
    run = run_pytest(["-k", "faultlab", "-p", "xdist", "-n", "2"], tmp_path, cwd=project)
    assert run.returncode == 1, _debug(run)
    assert len(re.findall(r"ERROR collecting \S*test_faultlab\.py", run.stdout)) == 2, _debug(run)
    assert "its success_signals property returned success_signals=()" in run.stdout
    assert sorted(junit_scenarios(run)) == ["faultlab__empty", "faultlab__good", "faultlab__string"]
    assert junit_outcome(run, "faultlab__good") == "passed"
    assert not any(run.results_dir.glob("faultlab__[es]*/metrics.json"))
