"""``--tau2-shard I/N``: a deterministic, balanced split of a run's scenarios (trials kept together),
recorded in run.json outside the settings fingerprint."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_tau2.report.merge import MergeError, merge
from pytest_tau2.run.run_folder import LOCK_FILE
from pytest_tau2.scenario.trial_ids import split_trial_id
from pytest_tau2.settings import resolve
from pytest_tau2.settings.shards import Shard, parse_shard, select
from tests.plugin.conftest import Project
from tests.plugin.test_run import RESTAURANT, WRONG_TOTAL

# ---- the selection, as a plain function -----------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [("1/1", Shard(1, 1)), ("2/3", Shard(2, 3)), (" 3 / 3 ", Shard(3, 3))])
def test_parse_shard_reads_i_of_n(text: str, expected: Shard) -> None:
    assert parse_shard(text) == expected
    assert str(parse_shard(text)) == f"{expected.index}/{expected.count}"


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "3", "1/2/3", "a/b", "-1/2", ""])
def test_a_malformed_shard_is_a_usage_error_naming_the_option(text: str) -> None:
    with pytest.raises(ValueError, match=r"^--tau2-shard \(ini tau2_shard\) expects I/N") as info:
        resolve({"shard": text or " "}, {}, {})
    assert repr(text or " ") in str(info.value)


def _ids(names: list[str], trials: int) -> list[str]:
    return [f"{n}-t{k}" for n in names for k in range(1, trials + 1)] if trials > 1 else list(names)


def scenario_of(item_id: str, trials: int) -> str:
    return split_trial_id(item_id)[0] if trials > 1 else item_id


def _key(trials: int) -> object:
    return lambda item_id: ("scenario", scenario_of(item_id, trials))


@pytest.mark.parametrize("count", [1, 2, 3, 5, 11])
@pytest.mark.parametrize("trials", [1, 3])
def test_shards_partition_the_items_balanced_with_trials_together(count: int, trials: int) -> None:
    names = [f"domain__{i}" for i in (7, 1, 10, 3, 0, 9, 2, 8, 4, 6, 5)]  # not in sorted order
    items = _ids(names, trials)
    shards = [select(items, _key(trials), Shard(i, count))[0] for i in range(1, count + 1)]
    # Each item in exactly one shard, each shard in collection order.
    assert sorted(i for shard in shards for i in shard) == sorted(items)
    for shard in shards:
        assert shard == [i for i in items if i in shard]
    # Balanced: scenario counts differ by at most one; trials of a scenario share a shard.
    per_shard = [{scenario_of(i, trials) for i in shard} for shard in shards]
    assert max(map(len, per_shard)) - min(map(len, per_shard)) <= 1
    for shard, scenarios in zip(shards, per_shard, strict=True):
        assert len(shard) == len(scenarios) * trials
    # Deterministic: the same names in another order give the same shards.
    again = [select(list(reversed(items)), _key(trials), Shard(i, count))[0] for i in range(1, count + 1)]
    assert [sorted(s) for s in again] == [sorted(s) for s in shards]


def test_other_tests_are_dealt_separately_so_each_runs_once() -> None:
    items = ["a__1", "a__2", "test_x.py::test_one", "test_x.py::test_two", "a__3"]

    def key(item: str) -> tuple[str, str]:
        return ("other", item) if "::" in item else ("scenario", item)

    first, dropped = select(items, key, Shard(1, 2))
    second, _ = select(items, key, Shard(2, 2))
    assert first == ["a__1", "test_x.py::test_one", "a__3"]
    assert second == dropped == ["a__2", "test_x.py::test_two"]


# ---- in a pytest run ------------------------------------------------------------------------------


def test_three_shards_run_every_scenario_once_and_record_the_shard(project: Project) -> None:
    project.restaurant(WRONG_TOTAL)
    everything = sorted([*RESTAURANT, "restaurant__wrong_total"])
    full = project.run("-k", "restaurant")
    runs = [project.run("-k", "restaurant", f"--tau2-shard={i}/3") for i in (1, 2, 3)]

    ran = [sorted(run.items()) for run in runs]
    assert sorted(name for names in ran for name in names) == everything
    assert sorted(map(len, ran)) == [2, 2, 3]
    assert ran[0] == everything[0::3] and ran[1] == everything[1::3] and ran[2] == everything[2::3]
    for i, run in enumerate(runs, 1):
        run.result.stdout.fnmatch_lines([f"*{7 - len(ran[i - 1])} deselected*"])
        for name in ran[i - 1]:
            assert run.items()[name] == full.items()[name]
        saved = json.loads((run.results_dir / "run.json").read_text("utf-8"))
        assert saved["shard"] == f"{i}/3"
        # The shard is not a verdict setting: every shard has the unsharded run's fingerprint.
        assert saved["fingerprint"] == json.loads((full.results_dir / "run.json").read_text("utf-8"))["fingerprint"]
    assert json.loads((full.results_dir / "run.json").read_text("utf-8"))["shard"] is None
    # Re-running a shard selects the same scenarios.
    assert sorted(project.run("-k", "restaurant", "--tau2-shard=2/3").items()) == ran[1]


def test_the_shard_applies_after_k_and_tau2_scenarios(project: Project) -> None:
    project.restaurant()
    picked = "restaurant__menu_question,restaurant__party_order,restaurant__pizza_pepperoni"
    first = project.run(f"--tau2-scenarios={picked}", "--tau2-shard=1/2")
    second = project.run(f"--tau2-scenarios={picked}", "--tau2-shard=2/2")
    assert sorted(first.items()) == ["restaurant__menu_question", "restaurant__pizza_pepperoni"]
    assert sorted(second.items()) == ["restaurant__party_order"]


def test_a_bad_shard_stops_the_run_with_a_usage_error(project: Project) -> None:
    project.restaurant()
    run = project.run("--tau2-shard=4/3")
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--tau2-shard (ini tau2_shard) expects I/N with 1 <= I <= N, got '4/3'" in run.stderr
    assert not run.results_dir.exists()


def test_resuming_a_shard_needs_the_same_shard(project: Project) -> None:
    project.restaurant()
    first = project.run("--tau2-shard=1/2")
    assert first.result.ret == pytest.ExitCode.OK
    again = project.pytester.runpytest_subprocess(
        "-p", "tau2", f"--tau2-resume={first.results_dir}", "--tau2-shard=2/2"
    )
    assert again.ret == pytest.ExitCode.USAGE_ERROR
    assert "that run was --tau2-shard 1/2, this one is --tau2-shard 2/2" in again.stderr.str()


def test_trials_of_a_scenario_run_in_the_same_shard(project: Project) -> None:
    project.restaurant()
    runs = [project.run("--tau2-trials=2", f"--tau2-shard={i}/2") for i in (1, 2)]
    ran = [sorted(run.items()) for run in runs]
    assert sorted(ran[0] + ran[1]) == sorted(f"{name}-t{k}" for name in RESTAURANT for k in (1, 2))
    scenarios = [{item.rsplit("-t", 1)[0] for item in items} for items in ran]
    assert scenarios[0].isdisjoint(scenarios[1])
    assert sorted(map(len, scenarios)) == [3, 3]
    for items, names in zip(ran, scenarios, strict=True):
        assert len(items) == 2 * len(names)


# ---- merge: what it refuses and what it accepts ----------------------------------------------------


def _shards(project: Project, count: int, *, junit: tuple[int, ...] = ()) -> list[Path]:
    """The restaurant's menu question and party order in ``count`` shards; shards named in
    ``junit`` leave their JUnit file as ``<results dir>/junit.xml``."""
    folders = []
    for i in range(1, count + 1):
        xml = project.path / f"junit-{i}.xml"
        run = project.run(
            "--tau2-scenarios=restaurant__menu_question,restaurant__party_order",
            f"--tau2-shard={i}/{count}",
            *([f"--junitxml={xml}"] if i in junit else []),
        )
        assert run.result.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED), run.stdout[-2000:]
        if i in junit:
            shutil.copy(xml, run.results_dir / "junit.xml")
        folders.append(run.results_dir)
    return folders


def test_merge_accepts_an_empty_shard_and_refuses_an_unfinished_one(project: Project, tmp_path: Path) -> None:
    project.restaurant()
    folders = _shards(project, 3)  # two scenarios in three shards: shard 3 selects nothing
    assert not (folders[2] / "all_metrics.json").exists()
    merged = merge(folders, tmp_path / "merged")
    assert (merged.scenarios, merged.errors, merged.junit_cases) == (2, 0, None)
    assert sorted(p.name for p in (tmp_path / "merged").iterdir() if p.is_dir()) == [
        "restaurant__menu_question",
        "restaurant__party_order",
    ]
    (folders[1] / LOCK_FILE).write_text("pid 1 on elsewhere", "utf-8")
    with pytest.raises(MergeError, match=rf"{folders[1]}: holds \.tau2\.lock, so its run is still going or was killed"):
        merge(folders, tmp_path / "again")
    (folders[1] / LOCK_FILE).unlink()
    (folders[1] / "all_metrics.json").unlink()
    with pytest.raises(MergeError, match=r"no all_metrics\.json next to results of restaurant__party_order"):
        merge(folders, tmp_path / "again")


def test_merge_needs_a_junit_file_from_every_shard_or_none(project: Project, tmp_path: Path) -> None:
    project.restaurant()
    folders = _shards(project, 2, junit=(1,))
    with pytest.raises(MergeError, match=rf"junit\.xml is in 1 of 2 folders \(not in {folders[1]}\)"):
        merge(folders, tmp_path / "merged")
    with pytest.raises(MergeError, match="--junit names 1 files for 2 folders"):
        merge(folders, tmp_path / "merged", junit=[folders[0] / "junit.xml"])
    assert not (tmp_path / "merged").exists()


def test_merge_writes_into_a_new_folder_only(project: Project, tmp_path: Path) -> None:
    project.restaurant()
    folders = _shards(project, 2)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine", "utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest_tau2.cli", "merge", *map(str, folders), "--into", str(tmp_path / "taken")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert f"--into {tmp_path / 'taken'}: exists and is not an empty folder" in done.stderr
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["notes.txt"]
