"""``--tau2-agent replay:FILE``: recorded tool calls re-run through the real tools and scored.

The file is JSON Lines, ``{"scenario": NAME, "actions": [{"name", "arguments"}, ...]}`` per line.
Gold actions must pass; gold minus its last write must fail DB_STATE_MATCH with a readable diff.
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

pytest_plugins = ["pytester"]  # also in tests/conftest.py; repeated so this module stands alone

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
if not (DATA_DIR / "tau2" / "domains").is_dir():
    pytest.skip(f"no tau2 data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)

CONFTEST = "import pytest_tau2.domains.tau2_sources  # noqa: F401  (registers the tau2 sources)\n"
TEST_MODULE = "from pytest_tau2 import test_scenario  # noqa: F401\n"
WRITE_TOOLS = {
    "cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
    "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
    "return_delivered_order_items",
}  # fmt: skip
# tasks 0, 5 and 50..59: a full scenario name in -k is exact, "retail__5" (no name) a substring
SELECTION = "tau2_retail__0 or retail__5"
SELECTED = 12


def _gold(task_id: str) -> list[dict[str, Any]]:
    tasks = json.loads((DATA_DIR / "tau2" / "domains" / "retail" / "tasks.json").read_text("utf-8"))
    task = next(t for t in tasks if t["id"] == task_id)
    return [{"name": a["name"], "arguments": a["arguments"]} for a in task["evaluation_criteria"]["actions"]]


def _without_last_write(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    last = max(i for i, a in enumerate(actions) if a["name"] in WRITE_TOOLS)
    return actions[:last] + actions[last + 1 :]


def _project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAU2_DATA_DIR", str(DATA_DIR))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    for name in ("TAU2_AGENT_MODEL", "TAU2_USER_MODEL", "TAU2_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_tau2_items=TEST_MODULE)


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "tau2", "-p", "no:cacheprovider", f"--tau2-results-dir={pytester.path / 'out'}", *args, timeout=180
    )


def _write_replay(folder: Path) -> Path:
    records = [
        {"scenario": "tau2_retail__0", "actions": _without_last_write(_gold("0"))},
        {"scenario": "tau2_retail__5", "actions": _gold("5")},
        {"scenario": "tau2_retail__51", "actions": _gold("51")},
    ]
    path = folder / "recorded.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


class Replayed:
    """The finished replay run (shared by the module: a failing DB check costs seconds of diffing)."""

    def __init__(self, result: pytest.RunResult, results_dir: Path) -> None:
        self.result = result
        self.results_dir = results_dir
        self.out = result.stdout.str()


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Replayed:
    """``-k SELECTION --tau2-agent replay:recorded.jsonl`` in a fresh project (a plain subprocess,
    as ``pytester`` is function-scoped)."""
    assert _gold("0")[-1]["name"] == "exchange_delivered_order_items"
    folder = tmp_path_factory.mktemp("replay")
    (folder / "conftest.py").write_text(CONFTEST, "utf-8")
    (folder / "test_tau2_items.py").write_text(TEST_MODULE, "utf-8")
    replay = _write_replay(folder)
    results = folder / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU2_", "PYTEST_"))}
    env.update(TAU2_DATA_DIR=str(DATA_DIR), LITELLM_LOCAL_MODEL_COST_MAP="True", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    command = [sys.executable, "-m", "pytest", "-p", "tau2", "-p", "no:cacheprovider", "-v", "-rs",
               f"--tau2-results-dir={results}", "--tau2-agent", f"replay:{replay.name}", "-k", SELECTION]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False)
    result = pytest.RunResult(
        done.returncode, done.stdout.splitlines(), done.stderr.splitlines(), time.perf_counter() - start
    )
    return Replayed(result, results)


def test_replay_scores_the_recorded_calls(replayed: Replayed) -> None:
    assert replayed.result.ret == pytest.ExitCode.TESTS_FAILED
    out = replayed.out
    assert "test_scenario[tau2_retail__5] PASSED" in out
    assert "test_scenario[tau2_retail__51] PASSED" in out
    assert "test_scenario[tau2_retail__0] FAILED" in out
    replayed.result.stdout.fnmatch_lines(["*test_scenario?tau2_retail__0? SUBFAILED?db_state_match?*"])
    outcomes = replayed.result.parseoutcomes()
    assert outcomes["passed"] == 2
    assert outcomes["skipped"] == SELECTED - 3


def test_scenarios_missing_from_the_file_are_skipped_with_a_reason(replayed: Replayed) -> None:
    out = replayed.out
    for task_id in (50, 52, 53, 54, 55, 56, 57, 58, 59):
        assert f"tau2_retail__{task_id} is not in the replay file recorded.jsonl" in out


def test_gold_minus_last_write_fails_with_a_diff_of_the_unchanged_fields(replayed: Replayed) -> None:
    out = replayed.out
    assert "DB hash" in out and "!= expected a109be174767fde0ebb50fe3be37cdb2f1ce017fefd7bd29ea3e4d38bd3ac25a" in out
    assert "root['orders']['#W2378156']['status']: expected 'exchange requested' but found 'delivered'" in out
    assert "root['orders']['#W2378156']['exchange_items']" in out


def test_replay_metrics_name_the_agent(replayed: Replayed) -> None:
    metrics = json.loads((replayed.results_dir / "tau2_retail__0" / "metrics.json").read_text("utf-8"))
    assert metrics["agent"].startswith("replay:")
    assert metrics["is_successful"] is False
    assert metrics["db_state_match"] is False
    assert metrics["success_breakdown"]["failed"] == ["db_state_match"]
    assert metrics["success_breakdown"]["excluded"]["is_action_match"] is False


def test_gold_minus_last_write_has_tau2_reward_zero_naming_the_db(replayed: Replayed) -> None:
    dropped = json.loads((replayed.results_dir / "tau2_retail__0" / "metrics.json").read_text("utf-8"))
    assert dropped["tau2_reward"] == 0.0
    assert dropped["tau2_reward_breakdown"] == {"DB": 0.0, "NL_ASSERTION": 1.0}  # task 0 has no NL assertions
    assert dropped["tau2_reward_info"]["reasons"] == {"DB": "the final DB differs from the gold replay's"}
    assert dropped["success_breakdown"]["excluded"]["tau2_reward"] == 0.0
    gold = json.loads((replayed.results_dir / "tau2_retail__5" / "metrics.json").read_text("utf-8"))
    assert gold["tau2_reward"] == 1.0 and gold["tau2_reward_info"]["not_evaluated"] == []


def test_skipped_scenarios_do_not_count_in_the_summary(replayed: Replayed) -> None:
    summary = (replayed.results_dir / "all_summary.txt").read_text("utf-8")
    assert summary.splitlines()[0].startswith("Success rate: 2/3 ")
    assert "errors without a result" not in summary


@pytest.mark.parametrize(
    ("content", "line", "what"),
    [
        ('{"scenario": "tau2_retail__0", "actions": []}\nnot json\n', 2, "not valid JSON"),
        ('{"scenario": "tau2_retail__0", "actions": [{"arguments": {}}]}\n', 1, "'actions' must be a list"),
        ('{"actions": []}\n', 1, "'scenario' string"),
    ],
    ids=["not-json", "action-without-name", "no-scenario"],
)
def test_malformed_replay_file_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, content: str, line: int, what: str
) -> None:
    _project(pytester, monkeypatch)
    path = pytester.path / "broken.jsonl"
    path.write_text(content, "utf-8")
    result = _run(pytester, "--tau2-agent", f"replay:{path}", "-k", "tau2_retail__0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {path}:{line}: *{what}*"])


def test_missing_replay_file_is_a_usage_error(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(pytester, monkeypatch)
    result = _run(pytester, "--tau2-agent", "replay:nowhere.jsonl", "-k", "tau2_retail__0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: replay file nowhere.jsonl does not exist*"])
