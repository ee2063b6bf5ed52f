"""``--tau2-trials K``: K items per scenario with stable ids, a seed per trial, results per trial,
pass^k and tau2's reward in the summary; ``--tau2-verdict tau2-reward``; one-trial runs unchanged."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from pytest_tau2.scenario.trial_ids import trial_seed
from tests.plugin.conftest import Project, Run, junit_cases
from tests.support.tau2_data import has_data, skip_reason

if not has_data():
    pytest.skip(skip_reason(), allow_module_level=True)

CONFTEST = "import pytest_tau2.domains.tau2_sources  # noqa: F401  (registers the tau2 sources)\n"
TEST_MODULE = "from pytest_tau2 import test_scenario  # noqa: F401\n"
PAIR = "tau2_retail__5,tau2_airline__7"


@pytest.fixture
def tau2_project(project: Project) -> Project:
    project.write("conftest.py", CONFTEST)
    project.write("test_tau2_items.py", TEST_MODULE)
    return project


def collected(run: Run) -> list[str]:
    return re.findall(r"::test_scenario\[([^\]]+)\]", run.stdout)


def test_k_items_per_scenario_with_stable_ids(tau2_project: Project) -> None:
    run = tau2_project.run("--collect-only", "-q", f"--tau2-scenarios={PAIR}", "--tau2-trials=3", verbose=False)
    assert collected(run) == [f"tau2_airline__7-t{k}" for k in (1, 2, 3)] + [f"tau2_retail__5-t{k}" for k in (1, 2, 3)]
    again = tau2_project.run("--collect-only", "-q", f"--tau2-scenarios={PAIR}", "--tau2-trials=3", verbose=False)
    assert collected(again) == collected(run)
    one = tau2_project.run("--collect-only", "-q", f"--tau2-scenarios={PAIR}", verbose=False)
    assert collected(one) == ["tau2_airline__7", "tau2_retail__5"]  # one trial: today's ids


def test_selecting_all_trials_or_one(tau2_project: Project) -> None:
    def ids(*args: str) -> list[str]:
        return collected(tau2_project.run("--collect-only", "-q", "--tau2-trials=3", *args, verbose=False))

    assert ids("-k", "tau2_airline__7") == ["tau2_airline__7-t1", "tau2_airline__7-t2", "tau2_airline__7-t3"]
    assert ids("-k", "tau2_airline__7-t2") == ["tau2_airline__7-t2"]
    assert ids("--tau2-scenarios=tau2_airline__7-t2,tau2_retail__5") == [
        "tau2_airline__7-t2", "tau2_retail__5-t1", "tau2_retail__5-t2", "tau2_retail__5-t3",
    ]  # fmt: skip
    node = "test_tau2_items.py::test_scenario[tau2_airline__7-t3]"
    assert collected(tau2_project.run("--collect-only", "-q", "--tau2-trials=3", node, verbose=False)) == [
        "tau2_airline__7-t3"
    ]
    refused = tau2_project.run("--collect-only", "--tau2-trials=3", "--tau2-scenarios=tau2_airline__7-t4")
    assert refused.result.ret == pytest.ExitCode.USAGE_ERROR
    assert "'tau2_airline__7-t4' names trial 4, but --tau2-trials is 3" in refused.stderr


@pytest.fixture
def two_trials(tau2_project: Project) -> Run:
    return tau2_project.run(f"--tau2-scenarios={PAIR}", "--tau2-trials=2", "--junitxml=junit.xml")


def test_each_trial_has_its_results_seed_and_reward(two_trials: Run, tau2_project: Project) -> None:
    assert two_trials.items() == {
        f"{name}-t{k}": "PASSED" for name in ("tau2_airline__7", "tau2_retail__5") for k in (1, 2)
    }
    for k in (1, 2):
        metrics = two_trials.metrics(f"tau2_airline__7-t{k}")
        assert (metrics["scenario"], metrics["trial"], metrics["trials"]) == ("tau2_airline__7", k, 2)
        assert metrics["seed"] == trial_seed(300, k)
        assert metrics["tau2_reward"] == 1.0
        assert metrics["tau2_reward_breakdown"] == {"DB": 1.0, "COMMUNICATE": 1.0}
    assert not (two_trials.results_dir / "tau2_airline__7").exists()
    cases = junit_cases(tau2_project.path / "junit.xml")
    assert cases["test_scenario[tau2_retail__5-t2]"]["properties"]["tau2_reward"] == "1.0"


def test_the_summary_has_tau2_reward_and_pass_k(two_trials: Run) -> None:
    summary = two_trials.summary()
    assert "tau2 reward: 1.000 average over 4 trials of 2 tasks; pass^1 1.000, pass^2 1.000" in summary
    assert "Six-signal verdict over 2 trials per scenario: pass^1 1.000, pass^2 1.000" in summary
    assert "    tau2 reward: 1.000 average over 2 trials of 1 tasks; pass^1 1.000, pass^2 1.000" in summary
    assert "tau2 reward: 1.000 average over 4 trials of 2 tasks" in two_trials.stdout  # the terminal summary
    document: dict[str, Any] = json.loads((two_trials.results_dir / "all_metrics.json").read_text("utf-8"))
    block = document["pass_hat_k"]
    assert block["trials_per_task"] == 2
    assert block["tau2_reward"]["run"]["pass_hat_k"] == {"1": 1.0, "2": 1.0}
    assert block["six_signal"]["domains"]["tau2_retail"]["valid_trials"] == 2


def test_the_header_says_which_verdict_decides(tau2_project: Project) -> None:
    default = tau2_project.run("--collect-only", "-q", "--tau2-scenarios=tau2_retail__5")
    assert "tau2: verdict: six-signal decides; tau2 reward saved beside it; trials=1 per scenario, seed=300" in (
        default.stdout
    )
    run = tau2_project.run("--tau2-scenarios=tau2_retail__5", "--tau2-verdict=tau2-reward", "--tau2-seed=7")
    assert "tau2: verdict: tau2 reward (--tau2-verdict tau2-reward) decides tau2 items" in run.stdout
    assert "seed=7" in run.stdout
    assert run.items() == {"tau2_retail__5": "PASSED"}
    metrics = run.metrics("tau2_retail__5")
    assert metrics["success_signals"] == ["tau2_reward"]
    assert metrics["success_breakdown"]["passed"] == ["tau2_reward"]
    assert metrics["seed"] == trial_seed(7, 1)
    assert "Verdict: tau2 reward (--tau2-verdict tau2-reward) decides the tau2 items" in run.summary()


def test_trials_under_xdist(tau2_project: Project) -> None:
    run = tau2_project.run(f"--tau2-scenarios={PAIR}", "--tau2-trials=2", "-n", "2", xdist=True)
    assert run.result.parseoutcomes()["passed"] == 4
    folders = sorted(p.parent.name for p in run.results_dir.glob("*/metrics.json"))
    assert folders == sorted(f"{n}-t{k}" for n in ("tau2_airline__7", "tau2_retail__5") for k in (1, 2))
    assert "tau2 reward: 1.000 average over 4 trials of 2 tasks" in run.summary()


def test_trials_with_concurrency(tau2_project: Project) -> None:
    """The prefetcher keys runs by item id, so each trial runs once, with its own seed."""
    run = tau2_project.run(f"--tau2-scenarios={PAIR}", "--tau2-trials=2", "--tau2-concurrency=3")
    assert set(run.items().values()) == {"PASSED"} and len(run.items()) == 4
    for k in (1, 2):
        assert run.metrics(f"tau2_retail__5-t{k}")["seed"] == trial_seed(300, k)


def test_resume_runs_only_the_missing_trials(tau2_project: Project) -> None:
    results = tau2_project.path / "campaign"
    tau2_project.monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    common = ("-p", "tau2", "-p", "no:cacheprovider", "-v", "--tau2-scenarios=tau2_retail__5", "--tau2-trials=2")
    first = tau2_project.pytester.runpytest_subprocess(*common, f"--tau2-results-dir={results}")
    assert first.ret == pytest.ExitCode.OK
    for path in (results / "tau2_retail__5-t2").iterdir():  # as if the run had stopped before trial 2
        path.unlink() if path.is_file() else None
    again = tau2_project.pytester.runpytest_subprocess(*common, f"--tau2-resume={results}")
    assert again.ret == pytest.ExitCode.OK
    first_trial = json.loads((results / "tau2_retail__5-t1" / "metrics.json").read_text("utf-8"))
    second_trial = json.loads((results / "tau2_retail__5-t2" / "metrics.json").read_text("utf-8"))
    assert first_trial.get("resumed") is True and second_trial.get("resumed") is not True
    assert second_trial["trial"] == 2 and second_trial["seed"] == trial_seed(300, 2)
    assert "tau2 reward: 1.000 average over 2 trials of 1 tasks" in (results / "all_summary.txt").read_text("utf-8")
