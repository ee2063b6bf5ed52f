"""Fault matrix, results folders: a folder is data, never code, and a bad file is its item's error.

An offline oracle run (no model) of three restaurant scenarios is saved once; each test edits a
copy the way a hostile or careless hand would and runs the ``pytest-tau2`` command line on it in a
subprocess, from this project's folder. See docs/faults.md ("Nothing runs away").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.llm_scripts import NESTED_PLUGINS
from tests.support.tau2_data import has_data, skip_reason

if not has_data("retail"):
    pytest.skip(skip_reason("retail"), allow_module_level=True)

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = ["restaurant__pizza_pepperoni", "restaurant__menu_question", "restaurant__party_order", "tau2_retail__36"]
DEEP = "[" * 100_000 + "]" * 100_000


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU2_", "PYTEST_"))}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONDONTWRITEBYTECODE="1", **NESTED_PLUGINS)
    if os.environ.get("TAU2_DATA_DIR"):
        env["TAU2_DATA_DIR"] = os.environ["TAU2_DATA_DIR"]
    env.update(extra)
    return env


def cli(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # -P: the current folder is not put first on sys.path, as for the installed ``pytest-tau2`` script.
    command = [sys.executable, "-P", "-m", "pytest_tau2.cli", *args]
    return subprocess.run(command, cwd=cwd, env=env or _env(), capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("saved") / "run"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--tau2-results-dir={results}",
               "--tau2-scenarios", ",".join(SCENARIOS)]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:]
    return results


def _copy(saved: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(saved, copy)
    return copy


def _json(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


def _debug(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"


# ---- rescore never imports what a folder names ----------------------------------------------------------------


def test_rescore_never_imports_a_module_a_folder_names(saved: Path, tmp_path: Path) -> None:
    copy = _copy(saved, tmp_path)
    # A module beside the folder and one in the standard library whose import runs a command line.
    bait = tmp_path / "work"
    bait.mkdir()
    (bait / "evilmod.py").write_text(f"open({str(tmp_path / 'imported')!r}, 'w').close()\n", "utf-8")
    (bait / "json.py").write_text(f"open({str(tmp_path / 'shadowed')!r}, 'w').close()\n", "utf-8")
    old, new = "restaurant__menu_question", "restaurant__menu_question_evil"
    (copy / old).rename(copy / new)
    for path in (copy / new / "metrics.json", copy / "all_metrics.json"):
        path.write_text(path.read_text("utf-8").replace(f'"{old}"', f'"{new}"'), "utf-8")
    for name, module in ((new, "evilmod.Evil"), (SCENARIOS[0], "unittest.__main__.Evil")):
        metadata = copy / name / "scenario_config" / "metadata.json"
        document = _json(metadata)
        document["class"] = module
        metadata.write_text(json.dumps(document), "utf-8")
    # (an empty PYTHONPATH entry would be the current folder: none is added)
    env = _env(PYTHONPATH=os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p))
    done = cli("rescore", str(copy), "--into", str(tmp_path / "new"), cwd=REPO, env=env)
    assert done.returncode == 0, _debug(done)
    assert not (tmp_path / "imported").exists() and not (tmp_path / "shadowed").exists()
    assert "usage:" not in done.stderr  # unittest's command line never ran
    n = len(SCENARIOS) - 1
    assert f"re-scored {n} results: {n} scored, 0 infrastructure errors" in done.stdout, _debug(done)
    assert "; 1 without a result" in done.stdout, _debug(done)
    errors = _json(tmp_path / "new" / "all_metrics.json")["errors_without_result"]
    assert [e["scenario"] for e in errors] == [new]
    assert "is not a scenario now" in errors[0]["reason"] and "'evilmod.Evil'" in errors[0]["reason"]
    # From a folder of bait as the current folder: nothing of it is imported either.
    done = cli("rescore", str(copy), "--into", str(tmp_path / "new2"), cwd=bait, env=env)
    assert not (tmp_path / "imported").exists() and not (tmp_path / "shadowed").exists(), _debug(done)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"messages": ["hello"]}', "'messages[0]' is a str, not an object"),
        ('{"messages": {"role": "user"}}', "'messages' is a dict, not a list"),
        ("[1, 2]", "the file is a list, not a JSON object"),
        ('{"messages": [{"role": "assistant", "tool_calls": [7]}]}', "'messages[0].tool_calls[0]' is not a tool call"),
        ('{"messages": ' + DEEP + "}", "transcript.json is not readable: "),
    ],
    ids=["message-a-string", "messages-an-object", "a-list", "tool-call-a-number", "100k-deep"],
)
def test_a_malformed_transcript_is_its_scenarios_error_and_the_rest_are_rescored(
    saved: Path, tmp_path: Path, body: str, field: str
) -> None:
    copy = _copy(saved, tmp_path)
    (copy / SCENARIOS[1] / "transcript.json").write_text(body, "utf-8")
    done = cli("rescore", str(copy), "--into", str(tmp_path / "new"))
    assert done.returncode == 0, _debug(done)
    assert "Traceback" not in done.stderr, _debug(done)
    errors = _json(tmp_path / "new" / "all_metrics.json")["errors_without_result"]
    assert [e["scenario"] for e in errors] == [SCENARIOS[1]], errors
    assert f"{SCENARIOS[1]}/transcript.json" in errors[0]["reason"] and field in errors[0]["reason"], errors
    assert len(_json(tmp_path / "new" / "all_metrics.json")["scenarios"]) == len(SCENARIOS) - 1


# ---- shape errors in saved files: one line naming the file, never a traceback ----------------------------------


def _one_line(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode != 0, _debug(done)
    assert "Traceback" not in done.stderr + done.stdout, _debug(done)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines and all(n in lines[0] for n in needles), _debug(done)


def test_export_into_an_existing_file_is_a_one_line_error(saved: Path, tmp_path: Path) -> None:
    target = tmp_path / "taken.json"
    target.write_text("{}", "utf-8")
    _one_line(cli("export", str(saved), "--into", str(target), "--partial"), "--into", str(target), "not a folder")
    assert target.read_text("utf-8") == "{}"


def test_export_refuses_a_folder_whose_files_disagree_as_merge_does(saved: Path, tmp_path: Path) -> None:
    done = cli("export", str(saved), "--into", str(tmp_path / "good"), "--partial")
    assert done.returncode == 0 and (tmp_path / "good" / "retail.json").is_file(), _debug(done)
    copy = _copy(saved, tmp_path)
    metrics = copy / SCENARIOS[3] / "metrics.json"
    document = _json(metrics)
    document["tau2_reward"] = "lots"
    metrics.write_text(json.dumps(document), "utf-8")
    done = cli("export", str(copy), "--into", str(tmp_path / "bad"), "--partial")
    assert done.returncode == 1, _debug(done)
    assert "files of the folder disagree" in done.stderr and str(metrics) in done.stderr, _debug(done)
    assert not (tmp_path / "bad").exists()
    merged = cli("merge", str(copy), "--into", str(tmp_path / "merged"))
    assert merged.returncode != 0 and str(metrics) in merged.stderr, _debug(merged)


@pytest.mark.parametrize("command", ["export", "merge", "rescore"])
def test_an_all_metrics_nested_100000_deep_is_a_one_line_error(saved: Path, tmp_path: Path, command: str) -> None:
    copy = _copy(saved, tmp_path)
    (copy / "all_metrics.json").write_text(DEEP, "utf-8")
    extra = ["--partial"] if command == "export" else []
    _one_line(cli(command, str(copy), "--into", str(tmp_path / "out"), *extra), "all_metrics.json")


def test_an_upstream_results_file_nested_100000_deep_is_a_one_line_usage_error(tmp_path: Path) -> None:
    results = tmp_path / "deep.json"
    results.write_text('{"info": {}, "simulations": ' + DEEP + "}", "utf-8")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--tau2-results-dir={tmp_path / 'r'}",
               "--tau2-scenarios", SCENARIOS[3], f"--tau2-agent=replay:{results}"]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode != 0 and "Traceback" not in done.stdout + done.stderr, _debug(done)
    assert f"{results}: not an upstream Results file: Invalid JSON: recursion limit exceeded" in done.stderr, _debug(
        done
    )


def test_report_of_a_folder_with_a_transcript_nested_100000_deep_is_written(saved: Path, tmp_path: Path) -> None:
    """The page shows that scenario without its conversation (nested past showing); the raw file stays linked."""
    copy = _copy(saved, tmp_path)
    (copy / SCENARIOS[1] / "transcript.json").write_text('{"messages": ' + DEEP + "}", "utf-8")
    done = cli("report", str(copy), "-o", str(tmp_path / "report.html"))
    assert done.returncode == 0 and "Traceback" not in done.stderr, _debug(done)
    assert SCENARIOS[1] in (tmp_path / "report.html").read_text("utf-8")
    (copy / SCENARIOS[1] / "metrics.json").write_text(DEEP, "utf-8")
    _one_line(cli("report", str(copy), "-o", str(tmp_path / "again.html")), "metrics.json")
