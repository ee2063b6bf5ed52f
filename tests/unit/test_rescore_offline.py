"""``pytest-tau2 rescore`` offline (no model at all): an oracle run of two restaurant scenarios and a
retail task is re-scored in process; refusals, a vanished scenario, edited assertions, changed
tool results. The model path (judges, cassettes, both transports) is tests/e2e/test_rescore_jury.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.errors import SettingsError
from pytest_tau2.report.merge import merge
from pytest_tau2.run.rescore import RescoreError, main, rescore
from tests.support.tau2_data import DATA_DIR, has_data, skip_reason

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = ["restaurant__pizza_pepperoni", "restaurant__menu_question", "tau2_retail__36"]

if not has_data("retail"):
    pytest.skip(skip_reason("retail"), allow_module_level=True)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("saved") / "run"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU2_", "PYTEST_"))}
    env.update(TAU2_DATA_DIR=str(DATA_DIR), LITELLM_LOCAL_MODEL_COST_MAP="True")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--tau2-results-dir={results}",
               "--tau2-scenarios", ",".join(SCENARIOS)]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:]
    return results


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.chdir(REPO)  # the scenarios' modules import from the project's folder
    return {"TAU2_DATA_DIR": str(DATA_DIR)}


def _json(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


def _copy(saved: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(saved, copy)
    return copy


def test_a_new_verdict_rescores_without_any_model_and_the_folder_is_a_normal_one(
    saved: Path, tmp_path: Path, environ: dict[str, str]
) -> None:
    done = rescore(saved, tmp_path / "new", {"verdict": "tau2-reward"}, environ)
    assert [r.folder for r in done.records] == sorted(SCENARIOS) and done.errors == []
    for name in SCENARIOS:
        assert _json(tmp_path / "new" / name / "transcript.json") == _json(saved / name / "transcript.json")
        before, after = _json(saved / name / "metrics.json"), _json(tmp_path / "new" / name / "metrics.json")
        assert after["is_successful"] == before["is_successful"] and after["agent"] == before["agent"] == "oracle"
    info = _json(tmp_path / "new" / "run.json")
    assert info["rescored"]["changed"] == ["verdict: 'six-signal' then, 'tau2-reward' now"]
    assert info["rescored"]["judge"] == "the saved verdicts (no judge call)"
    assert info["fingerprint"]["rescored_from"] == str(saved) and info["fingerprint"]["verdict"] == "tau2-reward"
    assert "Verdict: tau2 reward" in (tmp_path / "new" / "all_summary.txt").read_text("utf-8")
    merged = merge([tmp_path / "new"], tmp_path / "merged")  # its files and junit.xml agree with each other
    assert (merged.scenarios, merged.junit_cases) == (3, 3)


def test_refusals_name_what_is_wrong(saved: Path, tmp_path: Path, environ: dict[str, str]) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x", "utf-8")
    with pytest.raises(RescoreError, match="exists and is not an empty folder"):
        rescore(saved, tmp_path / "full", {}, environ)
    with pytest.raises(RescoreError, match="not a pytest-tau2 results folder"):
        rescore(tmp_path / "full", tmp_path / "new", {}, environ)
    with pytest.raises(SettingsError, match="--tau2-verdict"):
        rescore(saved, tmp_path / "new2", {"verdict": "vibes"}, environ)
    assert main([str(saved), "--into", str(tmp_path / "full")]) == 2


def test_a_scenario_that_is_gone_is_an_error_naming_it_and_the_others_are_rescored(
    saved: Path, tmp_path: Path, environ: dict[str, str]
) -> None:
    copy = _copy(saved, tmp_path)
    old, new = "restaurant__menu_question", "restaurant__menu_question_gone"
    (copy / old).rename(copy / new)
    for path in (copy / new / "metrics.json", copy / "all_metrics.json"):
        path.write_text(path.read_text("utf-8").replace(f'"{old}"', f'"{new}"'), "utf-8")
    done = rescore(copy, tmp_path / "new", {}, environ)
    assert [e.scenario for e in done.errors] == [new] and "is not a scenario now" in done.errors[0].reason
    assert len(done.records) == 2
    assert new in (tmp_path / "new" / "all_summary.txt").read_text("utf-8")


def test_saved_verdicts_are_used_again_only_for_the_assertions_they_graded(
    saved: Path, tmp_path: Path, environ: dict[str, str]
) -> None:
    copy = _copy(saved, tmp_path)
    metrics_path = copy / "tau2_retail__36" / "metrics.json"
    metrics = _json(metrics_path)
    assertions = [
        "Agent should tell the user the most expensive item in the order is the camera.",
        "Agent should tell the user the camera costs $481.50.",
    ]
    metrics["nl_assertion_verdicts"] = [
        {"index": i, "assertion": text, "passed": i == 0, "reason": "saved"} for i, text in enumerate(assertions)
    ]
    metrics_path.write_text(json.dumps(metrics), "utf-8")
    all_path = copy / "all_metrics.json"
    document = _json(all_path)
    document["scenarios"] = [metrics if s["scenario"] == "tau2_retail__36" else s for s in document["scenarios"]]
    all_path.write_text(json.dumps(document), "utf-8")
    done = rescore(copy, tmp_path / "same", {}, environ)
    record = next(r for r in done.records if r.scenario == "tau2_retail__36")
    assert record.signal("nl_assertion_pass_rate") == 0.5 and record.is_successful is False  # no judge was called

    metrics["nl_assertion_verdicts"][1]["assertion"] = "An assertion the task no longer has."
    metrics_path.write_text(json.dumps(metrics), "utf-8")
    document["scenarios"] = [metrics if s["scenario"] == "tau2_retail__36" else s for s in document["scenarios"]]
    all_path.write_text(json.dumps(document), "utf-8")
    done = rescore(copy, tmp_path / "edited", {}, environ)
    record = next(r for r in done.records if r.scenario == "tau2_retail__36")
    assert "re-judge them with --tau2-judge-model" in (record.infrastructure_error or "")


def test_changed_tool_results_are_reported(saved: Path, tmp_path: Path, environ: dict[str, str]) -> None:
    copy = _copy(saved, tmp_path)
    path = copy / "tau2_retail__36" / "transcript.json"
    transcript = _json(path)
    tool = next(m for m in transcript["messages"] if m["role"] == "tool")
    tool["content"] = "a result the tool gave when the data was different"
    path.write_text(json.dumps(transcript), "utf-8")
    done = rescore(copy, tmp_path / "new", {}, environ)
    assert done.info["rescored"]["tool_results_differ"] == {"tau2_retail__36": 1}
    assert any("tool results differ" in w and "tau2_retail__36 (1)" in w for w in done.warnings)
