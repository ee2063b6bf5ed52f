"""Many machines: CI shards merged into one result, and a sweep on xdist's remote socket workers.

Every run is a real ``python -m pytest`` process in a throw-away project (the repository's
restaurant scenarios, one of them failing, plus a slice of the tau2 airline and retail ports),
offline: the oracle agent and the scripted user. Module-scoped fixtures share the expensive
runs: the unsharded sweep and its three shards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.report.merge import MergeError, merge
from tests.plugin.conftest import RESTAURANT_SCENARIOS, junit_cases
from tests.plugin.test_run import WRONG_TOTAL
from tests.support.tau2_data import DATA_DIR, requires_data

pytestmark = requires_data("airline", "retail")

SELECTION = "--tau2-scenarios=restaurant__*,tau2_airline__1*,tau2_retail__2*"
CONFTEST = "import restaurant_scenarios  # noqa: F401\nimport pytest_tau2.domains.tau2_sources  # noqa: F401\n"
TEST_MODULE = "from pytest_tau2 import test_scenario  # noqa: F401\n"
TIMINGS = frozenset({"duration_s", "conversation_duration_s"})
"""metrics.json fields that measure time: the only ones two runs of the same sweep may differ in."""


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    results: Path

    def all_metrics(self) -> dict[str, Any]:
        return json.loads((self.results / "all_metrics.json").read_text("utf-8"))  # type: ignore[no-any-return]


def make_project(folder: Path) -> Path:
    """The restaurant example (plus a scenario the oracle fails) and the tau2 ports."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data" / "restaurant").mkdir(parents=True, exist_ok=True)
    (folder / "data" / "restaurant" / "orders.json").write_text('{"orders": []}', "utf-8")
    (folder / "restaurant_scenarios.py").write_text(RESTAURANT_SCENARIOS + WRONG_TOTAL, "utf-8")
    (folder / "conftest.py").write_text(CONFTEST, "utf-8")
    (folder / "test_scenarios.py").write_text(TEST_MODULE, "utf-8")
    return folder


def environment(data_dir: Path = DATA_DIR) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU2_", "PYTEST_"))}
    env.update(TAU2_DATA_DIR=str(data_dir), LITELLM_LOCAL_MODEL_COST_MAP="True", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return env


def run_pytest(project: Path, results: Path, *args: str, xdist: bool = False, timeout: float = 300) -> Run:
    plugins = ["-p", "tau2", *(["-p", "xdist"] if xdist else []), "-p", "no:cacheprovider"]
    command = [sys.executable, "-m", "pytest", *plugins, "-v", f"--tau2-results-dir={results}", *args]
    done = subprocess.run(
        command, cwd=project, env=environment(), capture_output=True, text=True, timeout=timeout, check=False
    )
    return Run(done.returncode, done.stdout, done.stderr, results)


def merge_command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_tau2.cli", "merge", *args],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def scenario_files(results: Path) -> dict[str, Any]:
    """Every file under each scenario folder: JSON parsed (timings dropped from metrics.json), text as is."""
    found: dict[str, Any] = {}
    for path in sorted(results.glob("*/**/*")):
        if not path.is_file():
            continue
        relative = str(path.relative_to(results))
        text = _renumbered_call_ids(path.read_text("utf-8"))
        if path.suffix == ".json":
            data = json.loads(text)
            found[relative] = _without_timings(data) if path.name == "metrics.json" else data
        else:
            found[relative] = text
    return found


def _without_timings(metrics: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metrics.items() if k not in TIMINGS}


CALL_ID = re.compile(r"\bcall_[0-9]+\b")


def _renumbered_call_ids(text: str) -> str:
    """Tool-call ids numbered in order of appearance within one file.

    The offline participants number tool calls with one counter per process
    (conversation/protocol.py), so a scenario's ids depend on what ran before it in the same
    process: a shard, an xdist worker or a serial run give other numbers for the same calls.
    """
    seen: dict[str, str] = {}
    return CALL_ID.sub(lambda m: seen.setdefault(m[0], f"call_#{len(seen) + 1}"), text)


# ---- CI shards, merged ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, list[Run]]:
    """The unsharded sweep and its three shards (each with a JUnit file in its results folder)."""
    project = make_project(tmp_path_factory.mktemp("shards") / "project")
    full = run_pytest(project, project / "full", SELECTION, f"--junitxml={project / 'full' / 'junit.xml'}")
    shards = [
        run_pytest(
            project,
            project / f"shard{i}",
            SELECTION,
            f"--tau2-shard={i}/3",
            f"--junitxml={project / f'shard{i}' / 'junit.xml'}",
        )
        for i in (1, 2, 3)
    ]
    return full, shards


def test_three_shards_merged_equal_the_unsharded_run_field_by_field(
    sharded: tuple[Run, list[Run]], tmp_path: Path
) -> None:
    full, shards = sharded
    assert full.returncode == pytest.ExitCode.TESTS_FAILED, full.stdout[-3000:]  # restaurant__wrong_total fails
    assert [r.returncode for r in shards].count(pytest.ExitCode.TESTS_FAILED) == 1
    sizes = [len(r.all_metrics()["scenarios"]) for r in shards]
    assert sum(sizes) == len(full.all_metrics()["scenarios"]) and max(sizes) - min(sizes) <= 1

    into = tmp_path / "merged"
    done = merge_command(*(str(r.results) for r in shards), "--into", str(into))
    assert done.returncode == 0, done.stderr
    assert f"results: {into}" in done.stdout

    # all_metrics.json: the same entries in the same order; only timings differ.
    merged_all, full_all = json.loads((into / "all_metrics.json").read_text("utf-8")), full.all_metrics()
    assert set(merged_all) == set(full_all)
    assert [_without_timings(m) for m in merged_all["scenarios"]] == [
        _without_timings(m) for m in full_all["scenarios"]
    ]
    assert merged_all["errors_without_result"] == full_all["errors_without_result"] == []
    for key in set(full_all) - {"scenarios", "errors_without_result"}:
        assert merged_all[key] == full_all[key], key
    # Every scenario folder, file by file.
    assert scenario_files(into) == scenario_files(full.results)
    # The summary (no timings in it) is the same text.
    assert (into / "all_summary.txt").read_text("utf-8") == (full.results / "all_summary.txt").read_text("utf-8")
    # run.json: the same fingerprint, no shard; where it came from.
    merged_run = json.loads((into / "run.json").read_text("utf-8"))
    assert merged_run["fingerprint"] == json.loads((full.results / "run.json").read_text("utf-8"))["fingerprint"]
    assert merged_run["shard"] is None
    assert [s["shard"] for s in merged_run["merged"]["from"]] == ["1/3", "2/3", "3/3"]
    # JUnit: the same test cases with the same outcomes and properties (times aside).
    assert junit_cases(into / "junit.xml") == junit_cases(full.results / "junit.xml")
    assert (into / "report.html").stat().st_size > 10_000


def test_merge_refuses_missing_repeated_and_overlapping_shards(sharded: tuple[Run, list[Run]], tmp_path: Path) -> None:
    full, shards = sharded
    first, second, third = (str(r.results) for r in shards)

    missing = merge_command(first, third, "--into", str(tmp_path / "a"))
    assert missing.returncode == 2
    assert "missing shard 2/3 (of 3)" in missing.stderr

    repeated = merge_command(first, second, third, first, "--into", str(tmp_path / "b"))
    assert f"{first} is given twice" in repeated.stderr
    assert f"shard 1/3 is given more than once: {first}, {first}" in repeated.stderr

    mixed = merge_command(first, second, third, str(full.results), "--into", str(tmp_path / "c"))
    assert mixed.returncode == 2
    assert f"not from a sharded run (no --tau2-shard in run.json): {full.results}" in mixed.stderr
    one = full.all_metrics()["scenarios"][0]["scenario"]
    owners = [str(r.results) for r in shards if one in {m["scenario"] for m in r.all_metrics()["scenarios"]}]
    assert f"{one} is in more than one folder: {owners[0]}, {full.results}" in mixed.stderr
    assert not any((tmp_path / name).exists() for name in "abc")  # nothing written when refused


def test_merge_refuses_shards_of_different_settings(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    picked = "--tau2-scenarios=restaurant__*"
    one = run_pytest(project, project / "s1", picked, "--tau2-shard=1/2")
    two = run_pytest(project, project / "s2", picked, "--tau2-shard=2/2", "--tau2-max-turns=7")
    assert {one.returncode, two.returncode} == {pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED}  # wrong_total in one
    with pytest.raises(MergeError) as info:
        merge([one.results, two.results], tmp_path / "merged")
    assert f"max_turns: None in {one.results}, 7 in {two.results}" in str(info.value)
    assert "different settings or data pin (run.json fingerprint)" in str(info.value)
    assert not (tmp_path / "merged").exists()


def test_merge_refuses_a_shard_that_read_other_tau2_data(sharded: tuple[Run, list[Run]], tmp_path: Path) -> None:
    _, shards = sharded
    copies = []
    for run in shards:
        copy = tmp_path / run.results.name
        shutil.copytree(run.results, copy)
        copies.append(copy)
    # As if shard 3 had run on a machine with other (unpinned) airline data.
    path = copies[2] / "all_metrics.json"
    data = json.loads(path.read_text("utf-8"))
    airline = [m for m in data["scenarios"] if m["domain"] == "tau2_airline"]
    assert airline
    for m in airline:
        m["data_pin"] = {**m["data_pin"], "pinned": False}
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(MergeError, match=r"domain tau2_airline read different tau2 data: .*in .*shard3"):
        merge(copies, tmp_path / "merged")
