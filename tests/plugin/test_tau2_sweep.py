"""Offline sweeps of the tau2 ports in a user's project: every retail task passes with the oracle.

Two runs are shared by the whole module (module-scoped fixtures, plain subprocesses because
``pytester`` is function-scoped): the full retail sweep plus one telecom task, and a small
``--tau2-save-db`` run whose saved DBs are hashed against upstream's gold hashes. Saving every
retail DB would write ~260 MB and triple the sweep's time, so that run picks a few tasks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.domains.tau2_sources import slug
from pytest_tau2.environment.db import db_hash

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
if not (DATA_DIR / "tau2" / "domains").is_dir():
    pytest.skip(f"no tau2 data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)

PIN_COMMIT = "a2c024725189473d2d7cea3a5cfdbcc67478e41f"
RETAIL_NL_TASKS = set(
    "2 3 4 16 19 21 24 28 29 36 37 38 39 40 43 44 45 46 47 54 59 60 62 63 67 68 70 76 89 95 103 104 105 106 "
    "107 108 109 110 111 113".split()
)
RETAIL_GOLD = {
    "tau2_retail__0": "a109be174767fde0ebb50fe3be37cdb2f1ce017fefd7bd29ea3e4d38bd3ac25a",
    "tau2_retail__64": "2e9d92ee0d0cdd9e1eb41bd72d3390e1bc442a9f8c1c878c7b542668ebf7da96",
    "tau2_retail__113": "4337c9b2595520e27dba1d78005bfae6735706c7f819d183ee530326f7ad61a3",
}
TELECOM = "tau2_telecom__" + slug(
    "[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]"
)
CONFTEST = "import pytest_tau2.domains.tau2_sources  # noqa: F401  (registers the tau2 sources)\n"
TEST_MODULE = "from pytest_tau2 import test_scenario  # noqa: F401\n"


class Sweep:
    """One finished pytest run: its result and its results folder."""

    def __init__(self, result: pytest.RunResult, results_dir: Path) -> None:
        self.result = result
        self.results_dir = results_dir

    def metrics(self, name: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.results_dir / name / "metrics.json").read_text("utf-8"))
        return data

    def scenario_names(self) -> list[str]:
        return sorted(p.parent.name for p in self.results_dir.glob("*/metrics.json"))


def _run_project(folder: Path, *args: str) -> Sweep:
    """``python -m pytest`` in a fresh project folder, as a user's repository would run it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "conftest.py").write_text(CONFTEST, "utf-8")
    (folder / "test_tau2_items.py").write_text(TEST_MODULE, "utf-8")
    results = folder / "results"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU2_", "PYTEST_"))}
    env.update(TAU2_DATA_DIR=str(DATA_DIR), LITELLM_LOCAL_MODEL_COST_MAP="True", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    command = [sys.executable, "-m", "pytest", "-p", "tau2", "-p", "no:cacheprovider", "-rs",
               f"--tau2-results-dir={results}", *args]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600, check=False)
    result = pytest.RunResult(
        done.returncode, done.stdout.splitlines(), done.stderr.splitlines(), time.perf_counter() - start
    )
    return Sweep(result, results)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Sweep:
    """All 114 retail tasks and one telecom task, offline (oracle agent, scripted user)."""
    return _run_project(tmp_path_factory.mktemp("sweep"), "-q", "-k", f"tau2_retail or {TELECOM}")


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Sweep:
    """A few tasks with ``--tau2-save-db``."""
    selection = " or ".join([*RETAIL_GOLD, TELECOM])
    return _run_project(tmp_path_factory.mktemp("saved"), "-q", "--tau2-save-db", "-k", selection)


def test_retail_sweep_passes_offline(sweep: Sweep) -> None:
    assert sweep.result.ret == pytest.ExitCode.OK, sweep.result.stdout.str()
    outcomes = sweep.result.parseoutcomes()
    assert outcomes["passed"] == 114 + 1
    # Skipped sub-results are counted as sub-results, not as skipped tests (JUnit's count too).
    assert "skipped" not in outcomes
    last = sweep.result.stdout.lines[-1]
    assert "61 subtests skipped" in last, "one N/A sub-result per NL assertion (61 in 40 tasks): " + last
    assert "failed" not in outcomes and "error" not in outcomes and "errors" not in outcomes
    # -q shows no sub-result lines (-v does, each N/A one with its reason); the summary says why.
    sweep.result.stdout.fnmatch_lines(["*NL_ASSERTION not evaluated in 40 trials (no judge)*"])


def test_every_retail_scenario_left_a_successful_metrics_file(sweep: Sweep) -> None:
    names = [n for n in sweep.scenario_names() if n.startswith("tau2_retail__")]
    assert len(names) == 114
    for name in names:
        metrics = sweep.metrics(name)
        assert metrics["is_successful"] is True, name
        assert metrics["tau2_id"] == name.split("__")[1]
        assert metrics["db_state_match"] is True and metrics["clean_exit"] is True
        assert "is_action_match" in metrics["success_breakdown"]["excluded"]
        if metrics["tau2_id"] in RETAIL_NL_TASKS:
            assert metrics["success_breakdown"]["not_applicable"] == ["nl_assertion_pass_rate"], name
            skipped = [c for c in metrics["checks"] if c["signal"] == "nl_assertion"]
            assert skipped and all(c["passed"] is None and "no judge" in c["message"] for c in skipped)
        else:
            assert metrics["success_signals"] == ["db_state_match", "clean_exit"], name


def test_metrics_record_the_data_pin(sweep: Sweep) -> None:
    for name in ("tau2_retail__0", TELECOM):
        pin = sweep.metrics(name)["data_pin"]
        assert pin["commit"] == PIN_COMMIT
        assert pin["pinned"] is True
        assert Path(pin["data_dir"]).resolve() == DATA_DIR.resolve()


def test_run_summary_counts_the_sweep(sweep: Sweep) -> None:
    summary = (sweep.results_dir / "all_summary.txt").read_text("utf-8")
    assert "115/115" in summary.splitlines()[0]
    all_metrics = json.loads((sweep.results_dir / "all_metrics.json").read_text("utf-8"))
    assert len(all_metrics["scenarios"]) == 115


def test_telecom_scenario_is_scored_on_predicates(sweep: Sweep) -> None:
    metrics = sweep.metrics(TELECOM)
    assert metrics["is_successful"] is True
    assert metrics["success_signals"] == ["db_state_assertion", "clean_exit"]
    assert metrics["db_state_assertion_pass_rate"] == 1.0
    assert {"db_state_match", "is_action_match"} <= set(metrics["success_breakdown"]["excluded"])
    assert len(metrics["db_state_assertion_verdicts"]) == 3


def test_saved_final_dbs_hash_to_the_gold_hashes(saved: Sweep) -> None:
    assert saved.result.ret == pytest.ExitCode.OK, saved.result.stdout.str()
    assert saved.result.parseoutcomes()["passed"] == len(RETAIL_GOLD) + 1
    for name, expected in RETAIL_GOLD.items():
        final = json.loads((saved.results_dir / name / "final_db.json").read_text("utf-8"))
        assert db_hash(final) == expected, name
        assert not (saved.results_dir / name / "final_user_db.json").exists(), "retail has no user DB"


def test_telecom_saves_both_dbs(saved: Sweep) -> None:
    folder = saved.results_dir / TELECOM
    agent_db = json.loads((folder / "final_db.json").read_text("utf-8"))
    user_db = json.loads((folder / "final_user_db.json").read_text("utf-8"))
    line = next(line for line in agent_db["lines"] if line["line_id"] == "L1002")
    assert line["data_refueling_gb"] == 2.0
    assert user_db["device"]["roaming_enabled"] is True
    assert user_db["surroundings"]["phone_number"] == "555-123-2002"


def test_without_save_db_no_db_is_written(sweep: Sweep) -> None:
    assert not list(sweep.results_dir.glob("*/final_db.json"))
