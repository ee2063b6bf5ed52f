"""xdist with real models, and litellm staying out of runs that use no model.

- ``pytest -n 2`` with litellm agent and user: every scenario passes, both workers take part,
  the controller aggregates one summary for the whole run.
- A plain offline ``pytest --collect-only -q`` and an offline (oracle) scenario run never
  import litellm (a ``-p`` probe plugin records ``"litellm" in sys.modules``; the positive
  control is in test_llm_faults.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.llm_scripts import (
    REPO_ROOT,
    SECRET,
    PytestRun,
    Recorded,
    ScriptedModels,
    Tasks,
    for_model,
    import_probe,
    model_options,
    node,
    probe_records,
    run_pytest,
    shared_once,
    subprocess_env,
)
from tests.support.fake_openai import FakeOpenAIServer

PARALLEL = ("1", "5", "69", "83")


def name(task_id: str) -> str:
    return f"tau2_retail__{task_id}"


agent_requests = ScriptedModels.agent_requests


def _debug(run: PytestRun) -> str:
    return f"exit {run.returncode}\n--- stdout (tail)\n{run.stdout[-5000:]}\n--- stderr (tail)\n{run.stderr[-3000:]}"


# ---- 8a. -n 2 with real models ----------------------------------------------------------------------------


def _produce(tmp: Path) -> Recorded:
    models = ScriptedModels(Tasks.load("retail"))
    probe_args, probe_env, probe_out = import_probe(tmp)
    with FakeOpenAIServer() as server:
        models.install(server)
        run = run_pytest(
            ["-n", "2", *(node(name(t)) for t in PARALLEL), *model_options(server), *probe_args],
            tmp,
            # Through litellm: these runs show litellm is loaded where models are called (the default
            # OpenAI wire path never loads it for these unpriced models: test_wire_parity_sweep.py).
            env=subprocess_env(TAU2_LLM_TRANSPORT="litellm", **probe_env),
        )
        return Recorded.of(run, server, probe_records(probe_out))


@pytest.fixture(scope="module")
def xdist_run(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return shared_once(tmp_path_factory, "llm_xdist", _produce)


def test_xdist_two_workers_every_scenario_passes(xdist_run: Recorded) -> None:
    run = xdist_run.run
    assert run.returncode == 0, _debug(run)
    for task_id in PARALLEL:
        assert run.outcome_line(name(task_id)) == "PASSED", _debug(run)
        metrics = run.metrics(name(task_id))
        assert metrics["is_successful"] is True and metrics["stop_reason"] == "exit"
        assert metrics["token_usage"]["agent"]["calls"] == len(agent_requests(xdist_run.requests, task_id))
    workers = {r["worker"] for r in xdist_run.probe if r["worker"]}
    assert workers == {"gw0", "gw1"}
    assert "[gw0]" in run.stdout and "[gw1]" in run.stdout


def test_xdist_controller_aggregates_one_summary(xdist_run: Recorded) -> None:
    run = xdist_run.run
    headline = f"Success rate: {len(PARALLEL)}/{len(PARALLEL)} (100.0%) of {len(PARALLEL)} scenarios"
    assert run.summary().splitlines()[0] == headline
    assert headline in run.stdout and run.stdout.count("tau2 summary") == 1
    agent_calls = len(for_model(xdist_run.requests, "agent"))
    assert f"agent: {agent_calls} calls" in run.summary()
    # Signal properties travel from the workers into the controller's JUnit report.
    for task_id in PARALLEL:
        assert run.properties(name(task_id))["is_successful"] == "true"
    assert SECRET not in run.stdout + run.stderr + run.files_text()


def test_xdist_controller_does_not_import_litellm(xdist_run: Recorded) -> None:
    """Only workers call models; the controller (worker None) never needs litellm."""
    by_process: dict[Any, set[bool]] = {}
    for record in xdist_run.probe:
        by_process.setdefault(record["worker"], set()).add(record["litellm"])
    assert by_process.get("gw0") == {True} and by_process.get("gw1") == {True}
    assert by_process.get(None) == {False}


# ---- 8b. no litellm without a model ------------------------------------------------------------------------


def test_plain_collect_only_does_not_import_litellm(tmp_path: Path) -> None:
    probe_args, probe_env, probe_out = import_probe(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *probe_args],
        cwd=REPO_ROOT,
        env=subprocess_env(**probe_env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    collected = [line for line in done.stdout.splitlines() if "::test_scenario[" in line]
    assert len(collected) > 250  # the whole suite: restaurant and every tau2 domain
    assert {r["stage"]: r["litellm"] for r in probe_records(probe_out)} == {
        "collection_finish": False,
        "unconfigure": False,
    }


def test_offline_oracle_run_does_not_import_litellm(tmp_path: Path) -> None:
    probe_args, probe_env, probe_out = import_probe(tmp_path)
    run = run_pytest([node(name("5")), *probe_args], tmp_path, env=subprocess_env(**probe_env))
    assert run.returncode == 0, _debug(run)
    assert run.metrics(name("5"))["agent"] == "oracle"
    assert {r["stage"]: r["litellm"] for r in probe_records(probe_out)} == {
        "collection_finish": False,
        "unconfigure": False,
    }
