"""Fault matrix, merges: ``pytest-tau2 merge`` refuses a shard whose own files disagree (docs/faults.md).

Two real shards of the restaurant's menu question and party order, each with its junit.xml;
then, on copies: a metrics.json whose verdict was flipped, an all_metrics.json entry edited, a
junit.xml with a test case removed. Each merge is refused naming the scenario and both files;
the untouched shards merge.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_tau2.report.merge import MergeError, merge
from tests.plugin.conftest import Project
from tests.plugin.test_shards import _shards

SCENARIO = "restaurant__party_order"


def _shard_of(folders: list[Path]) -> Path:
    return next(f for f in folders if (f / SCENARIO).is_dir())


def _flip_verdict(folder: Path) -> None:
    path = folder / SCENARIO / "metrics.json"
    data = json.loads(path.read_text("utf-8"))
    data["is_successful"] = not data["is_successful"]
    path.write_text(json.dumps(data, indent=2), "utf-8")


def _edit_entry(folder: Path) -> None:
    path = folder / "all_metrics.json"
    data = json.loads(path.read_text("utf-8"))
    entry = next(e for e in data["scenarios"] if e["scenario"] == SCENARIO)
    entry["stop_reason"] = "max_turns"
    path.write_text(json.dumps(data, indent=2), "utf-8")


def _drop_case(folder: Path) -> None:
    path = folder / "junit.xml"
    tree = ET.parse(path)
    for suite in tree.getroot().iter("testsuite"):
        for case in list(suite):
            if case.get("name") == f"test_scenario[{SCENARIO}]":
                suite.remove(case)
    tree.write(path, encoding="utf-8", xml_declaration=True)


@pytest.fixture
def shards(project: Project) -> list[Path]:
    project.restaurant()
    return _shards(project, 2, junit=(1, 2))


@pytest.mark.parametrize(
    ("tamper", "needle"),
    [
        (_flip_verdict, r"metrics\.json and .*all_metrics\.json differ \(is_successful: "),
        (_edit_entry, r"metrics\.json and .*all_metrics\.json differ \(stop_reason: 'max_turns' in all_metrics\.json"),
        (_drop_case, r"in .*all_metrics\.json but no test case in .*junit\.xml"),
    ],
    ids=["metrics-verdict-flipped", "all-metrics-entry-edited", "junit-case-missing"],
)
def test_merge_refuses_a_shard_whose_files_disagree_naming_the_scenario(
    shards: list[Path], tmp_path: Path, tamper: Callable[[Path], None], needle: str
) -> None:
    copies = [shutil.copytree(folder, tmp_path / f"shard{i}") for i, folder in enumerate(shards, start=1)]
    tamper(_shard_of(copies))
    with pytest.raises(MergeError, match=r"files of a folder disagree") as refused:
        merge(copies, tmp_path / "merged")
    message = str(refused.value)
    assert f"{SCENARIO}: " in message and re.search(needle, message), message
    assert "restaurant__menu_question" not in message  # only the edited scenario is named
    assert not (tmp_path / "merged").exists()
    merged = merge(shards, tmp_path / "untouched")  # the originals are consistent and merge
    assert (merged.scenarios, merged.junit_cases) == (2, 2)
