"""Fault matrix, waits: a provider's ``Retry-After`` never holds a run past what the user set.

One pytest run in a subprocess per transport, its models served by the loopback fake OpenAI
server. Each scenario's first agent call is refused once with HTTP 429 and a ``Retry-After`` no
run could wait out: ``inf``, ``99999999999``, ``100000`` (seconds) and an HTTP date six hours
ahead (a gateway's quota reset). The wait is capped and bounded by ``--tau2-rate-limit-timeout``,
so every scenario is retried and scored. See docs/faults.md ("Waits").
"""

from __future__ import annotations

import email.utils
import time
from pathlib import Path

import pytest

from tests.e2e.llm_scripts import PytestRun, ScriptedModels, Tasks, model_options, node, run_pytest
from tests.support.fake_openai import FakeOpenAIServer, error

TIMEOUT_S = "3"  # --tau2-rate-limit-timeout: the most any refused call waits in all


def retail(task_id: str) -> str:
    return f"tau2_retail__{task_id}"


def _debug(run: PytestRun) -> str:
    return f"exit {run.returncode}\n--- stdout (tail)\n{run.stdout[-5000:]}\n--- stderr\n{run.stderr[-2000:]}"


def _retry_afters() -> dict[str, str]:
    """Task id -> the Retry-After its first agent call is refused with."""
    six_hours = email.utils.formatdate(time.time() + 6 * 3600, usegmt=True)
    return {"0": "inf", "1": "99999999999", "2": "100000", "3": six_hours}


@pytest.mark.parametrize("transport", ["auto", "litellm"], ids=["wire", "litellm"])
def test_a_retry_after_nobody_could_wait_out_is_capped(tmp_path: Path, transport: str) -> None:
    models = ScriptedModels(Tasks.load("retail"))
    waits = _retry_afters()
    for task_id, value in waits.items():
        refusal = error(429, "Rate limit reached, retry later", headers=[("Retry-After", value)])
        models.agent_script(task_id).faults[0] = [refusal]
    with FakeOpenAIServer() as server:
        models.install(server)
        args = [
            *(node(retail(t)) for t in waits),
            *model_options(server),
            "--tau2-concurrency",
            "4",
            "--tau2-rate-limit-timeout",
            TIMEOUT_S,
            "--tau2-llm-transport",
            transport,
        ]
        run = run_pytest(args, tmp_path, timeout=180)
        agent_calls = len(server.requests_for("agent"))
    assert run.returncode == 0, _debug(run)
    assert [run.outcome_line(retail(t)) for t in waits] == ["PASSED"] * len(waits), _debug(run)
    for task_id in waits:  # results written, and no scenario is an error
        assert run.metrics(retail(task_id)).get("infrastructure_error") in (None, ""), _debug(run)
    assert all(not models.agent_script(t).faults[0] for t in waits)  # every refusal was served
    assert agent_calls > 2 * len(waits)  # each refused call was sent again, and the talks went on
