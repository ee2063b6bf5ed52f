"""``--tau2-concurrency``: the same per-scenario verdicts at 1, 8 and unbounded concurrency in one
process, and under ``-n 2 --tau2-concurrency 4``, where each worker keeps several conversations
in flight (the model server sees more than two conversations overlap).

Ten retail tasks against the scripted loopback model; three of them get an agent that skips
its last gold call (a write), so the verdicts mix passes and failures.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.llm_scripts import (
    REPO_ROOT,
    AgentScript,
    PytestRun,
    ScriptedModels,
    Tasks,
    model_options,
    node,
    run_pytest,
    subprocess_env,
    task_of_agent_request,
)
from tests.support.fake_openai import FakeOpenAIServer, Reply

TASKS = [str(i) for i in range(10)]
BROKEN = ("1", "5", "9")
CONFIGS: dict[str, list[str]] = {
    "c1": [],
    "c8": ["--tau2-concurrency", "8"],
    "unbounded": ["--tau2-concurrency", "1000"],
    "n2c4": ["-p", "xdist", "-n", "2", "--tau2-concurrency", "4"],
}


def _verdicts(run: PytestRun) -> dict[str, Any]:
    out = {}
    for task in TASKS:
        metrics = run.metrics(f"tau2_retail__{task}")
        checks = sorted((c["id"], c["passed"]) for c in metrics["checks"])
        out[task] = (metrics["is_successful"], metrics["stop_reason"], metrics["agent_turns"], checks)
    return out


def _max_overlap(spans: dict[str, tuple[float, float]]) -> int:
    """The most conversations in flight at once: [first, last] agent request per task."""
    events = sorted([(start, 1) for start, _ in spans.values()] + [(end, -1) for _, end in spans.values()])
    depth = best = 0
    for _, step in events:
        depth += step
        best = max(best, depth)
    return best


def _produce(tmp: Path) -> dict[str, Any]:
    tasks = Tasks.load("retail")
    models = ScriptedModels(tasks)
    for task in BROKEN:
        steps = models.gold_steps(task)  # the gold calls, then the wrap-up text
        models.agent[task] = AgentScript(steps[:-2] + steps[-1:], closing=models.gold_closing(task))
    out: dict[str, Any] = {}
    for name, extra in CONFIGS.items():
        spans: dict[str, tuple[float, float]] = {}
        lock = threading.Lock()

        def agent(
            request: dict[str, Any], spans: dict[str, tuple[float, float]] = spans, lock: threading.Lock = lock
        ) -> Reply:
            task = task_of_agent_request(request)
            if task is not None:
                now = time.monotonic()
                with lock:
                    first = spans.get(task, (now, now))[0]
                    spans[task] = (first, now)
            return models.agent_handler(request)

        # The latency makes conversations overlap where several may be in flight; one at a time
        # (c1, ~180 calls) it would only add ~9 s of waiting.
        with FakeOpenAIServer(latency_s=0.0 if name == "c1" else 0.05) as server:
            models.install(server)
            server.add_handler("agent", agent)
            run = run_pytest([*extra, *(node(f"tau2_retail__{t}") for t in TASKS), *model_options(server)], tmp / name)
        assert run.returncode in (0, 1), f"{name}: exit {run.returncode}\n{run.stdout[-4000:]}\n{run.stderr[-2000:]}"
        out[name] = {
            "verdicts": _verdicts(run),
            "overlap": _max_overlap(spans),
            "stdout": run.stdout,
            "wall": run.wall_s,
        }
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _produce(tmp_path_factory.mktemp("concurrency"))


def test_verdicts_identical_at_1_8_and_unbounded_concurrency(runs: dict[str, Any]) -> None:
    base = runs["c1"]["verdicts"]
    assert {t for t, v in base.items() if v[0] is not True} == set(BROKEN)  # a mix of passes and failures
    for name in ("c8", "unbounded"):
        assert runs[name]["verdicts"] == base, name
    assert runs["c1"]["overlap"] == 1
    assert runs["c8"]["overlap"] > 4
    assert runs["unbounded"]["overlap"] > 6


def test_xdist_workers_keep_several_conversations_in_flight(runs: dict[str, Any]) -> None:
    assert runs["n2c4"]["verdicts"] == runs["c1"]["verdicts"]
    # Two workers running one scenario at a time would never overlap more than two conversations.
    assert runs["n2c4"]["overlap"] > 2
    assert "ignored under xdist" not in runs["n2c4"]["stdout"]


def _resume(results: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    """pytest ``--tau2-resume=<results>`` (not run_pytest: the resume names the results folder)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, f"--tau2-resume={results}"],
        cwd=REPO_ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "2"]], ids=["one-process", "n2"])
def test_resumed_results_start_no_conversation(tmp_path: Path, workers: list[str]) -> None:
    """``--tau2-resume --tau2-concurrency``: the prefetcher starts only the scenarios left to run;
    a saved result is never talked through again (it would spend model calls on a discarded run)."""
    tasks = ["0", "1", "2", "3"]
    models = ScriptedModels(Tasks.load("retail"))
    with FakeOpenAIServer(latency_s=0.01) as server:
        models.install(server)
        nodes = [node(f"tau2_retail__{t}") for t in tasks]
        first = run_pytest([*nodes, *model_options(server), "--tau2-concurrency", "8"], tmp_path / "first")
        assert first.returncode == 0, first.stdout[-3000:]
        results = tmp_path / "first" / "results"
        (results / "tau2_retail__2" / "metrics.json").unlink()  # as if the run had died during it
        before = len(server.requests)
        again = _resume(results, [*nodes, *model_options(server), *workers, "--tau2-concurrency", "8"])
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-2000:]
        talked = {models.tasks.task_of_user_request(r) or task_of_agent_request(r) for r in server.requests[before:]}
    assert talked == {"2"}
    assert "3 of 4 results resumed" in again.stdout


@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "2"]], ids=["one-process", "n2"])
def test_conversations_that_finish_after_the_run_stopped_are_saved_for_resume(
    tmp_path: Path, workers: list[str]
) -> None:
    """``-x`` stops the session at the first failing item while the prefetched conversations of the
    items after it have already finished: their results are saved (not counted in this run) and a
    resume reports them without a single model call. Under ``-n`` the worker hands them to the
    controller, which owns the results folder."""
    tasks = ["1", "2", "3", "4", "5", "6", "7", "8"]  # 1 fails (its agent skips a gold write), slowly
    models = ScriptedModels(Tasks.load("retail"))
    steps = models.gold_steps("1")
    slow = [dataclasses.replace(step, delay_s=0.4) for step in steps[:-2] + steps[-1:]]
    models.agent["1"] = AgentScript(slow, closing=dataclasses.replace(models.gold_closing("1"), delay_s=0.4))
    with FakeOpenAIServer(latency_s=0.01) as server:
        models.install(server)
        nodes = [node(f"tau2_retail__{t}") for t in tasks]
        args = [*nodes, *model_options(server), *workers, "-x", "--tau2-concurrency", "8"]
        stopped = run_pytest(args, tmp_path / "x")
        assert stopped.returncode in (1, 2), stopped.stdout[-3000:]
        document = json.loads((stopped.results_dir / "all_metrics.json").read_text("utf-8"))
        reported = {m["scenario"] for m in document["scenarios"]}
        assert "tau2_retail__1" in reported and len(reported) < len(tasks)
        assert f"Interrupted after {len(reported)} of {len(tasks)} scenarios: stopping after" in stopped.stdout
        background = len(tasks) - len(reported)
        assert f"{background} more scenarios finished in the background after the run stopped" in stopped.stdout
        for task in tasks:
            assert (stopped.results_dir / f"tau2_retail__{task}" / "metrics.json").is_file()
        before = len(server.requests)
        again = _resume(stopped.results_dir, [*nodes, *model_options(server)])
        assert "8 of 8 results resumed" in again.stdout, again.stdout[-3000:] + again.stderr[-2000:]
        assert len(server.requests) == before
