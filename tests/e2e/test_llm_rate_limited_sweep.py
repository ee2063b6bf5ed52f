"""Provider rate limits in a real sweep (docs/campaigns.md): a pytest run in a subprocess
against the loopback server set to admit R requests a second and answer 429 with Retry-After beyond.

- Through both transports, a sweep whose calls the provider keeps refusing in part finishes with
  every scenario scored, no infrastructure error and no retry spent (``--tau2-llm-retries 0``),
  never more than ``--tau2-max-connections`` calls in flight at the server (agent and user share
  the endpoint).
- A provider that refuses every call for longer than ``--tau2-rate-limit-timeout`` stops the run:
  one item is the error, the scenarios that were in flight are one line of the summary.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.llm_scripts import PytestRun, Recorded, ScriptedModels, Tasks, model_options, node, run_pytest
from tests.support.fake_openai import FakeOpenAIServer, Reply, error

TASKS = ("0", "1", "2", "3", "4", "5")
RATE = 25.0
MAX_CONNECTIONS = 3


def retail(task_id: str) -> str:
    return f"tau2_retail__{task_id}"


def _debug(run: PytestRun) -> str:
    return f"exit {run.returncode}\n--- stdout (tail)\n{run.stdout[-5000:]}\n--- stderr\n{run.stderr[-2000:]}"


def _produce_limited(tmp: Path, transport: str) -> tuple[Recorded, int, int]:
    models = ScriptedModels(Tasks.load("retail"))
    lock = threading.Lock()
    busy = [0, 0]  # calls at the server now, most at once

    def counted(handler: Any) -> Any:
        def serve(request: dict[str, Any]) -> Reply:
            with lock:
                busy[0] += 1
                busy[1] = max(busy[1], busy[0])
            try:
                time.sleep(0.02)
                return handler(request)  # type: ignore[no-any-return]
            finally:
                with lock:
                    busy[0] -= 1

        return serve

    with FakeOpenAIServer() as server:
        server.add_handler("agent", counted(models.agent_handler))
        server.add_handler("user", counted(models.user_handler))
        server.rate_limit(RATE)
        args = [
            *(node(retail(t)) for t in TASKS),
            *model_options(server),
            "--tau2-concurrency",
            "6",
            "--tau2-llm-retries",
            "0",
            "--tau2-max-connections",
            str(MAX_CONNECTIONS),
            "--tau2-llm-transport",
            transport,
        ]
        run = run_pytest(args, tmp)
        return Recorded.of(run, server), server.refused, busy[1]


@pytest.mark.parametrize("transport", ["auto", "litellm"], ids=["wire", "litellm"])
def test_a_rate_limited_sweep_finishes_without_errors(tmp_path: Path, transport: str) -> None:
    recorded, refused, most_at_once = _produce_limited(tmp_path, transport)
    run = recorded.run
    assert run.returncode == 0, _debug(run)
    assert [run.outcome_line(retail(t)) for t in TASKS] == ["PASSED"] * len(TASKS), _debug(run)
    assert refused > 0  # the provider refused calls, and each came back without an error
    assert most_at_once <= MAX_CONNECTIONS
    assert f"{len(TASKS)} passed" in run.stdout.splitlines()[-1]


def test_a_provider_that_refuses_for_too_long_stops_the_run(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.add_handler("agent", error(429, "You exceeded your current quota", headers=[("Retry-After", "0.2")]))
        server.add_handler("user", error(429, "You exceeded your current quota", headers=[("Retry-After", "0.2")]))
        args = [
            *(node(retail(t)) for t in TASKS),
            *model_options(server),
            "--tau2-concurrency",
            "3",
            "--tau2-rate-limit-timeout",
            "1",
        ]
        run = run_pytest(args, tmp_path)
    assert run.returncode == 2, _debug(run)  # interrupted
    outcomes = [run.outcome_line(retail(t)) for t in TASKS]
    assert outcomes.count("ERROR") == 1, _debug(run)
    assert "refused every call with HTTP 429 (rate limited) for 1 s (--tau2-rate-limit-timeout)" in run.stdout
    assert "Interrupted: stopping the run: " in run.stdout, _debug(run)
    summary = run.summary()
    assert "scenarios ran in the background and ended in an infrastructure error, all with the error that stopped" in (
        summary
    ), summary
    assert run.stdout.count("LLM call to model") == 0  # no per-call, per-model messages: the endpoint's one
