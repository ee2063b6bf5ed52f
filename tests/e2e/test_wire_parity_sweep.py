"""The OpenAI wire path over a real sweep: the same requests and the same results as litellm.

Eight retail scenarios run twice against the scripted loopback models (agent, user simulator
and NL-assertion judge), once with ``--tau2-llm-transport litellm`` and once with the default
``auto``; one agent skips its last write, so verdicts mix. Every request the server received
(bodies, in order, per model), the credentials sent, and each scenario's metrics (checks,
verdict, tau2 reward, token usage and cost) must be identical; the auto run never imports
litellm (its models are unpriced).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.llm_scripts import AgentScript, ScriptedModels, Tasks, model_options, node, run_pytest, subprocess_env
from tests.support.fake_openai import FakeOpenAIServer

TASKS = [str(i) for i in range(8)]
BROKEN = "3"
HOW_IT_RAN = {"agent", "duration_s", "conversation_duration_s", "models"}
PROBE = """
import sys
def pytest_unconfigure(config):
    print("LITELLM_IMPORTED=" + str("litellm" in sys.modules))
"""


def _sweep(tmp: Path, transport: str) -> dict[str, Any]:
    tasks = Tasks.load("retail")
    models = ScriptedModels(tasks)
    steps = models.gold_steps(BROKEN)
    models.agent[BROKEN] = AgentScript(steps[:-2] + steps[-1:], closing=models.gold_closing(BROKEN))
    (tmp / "probe").mkdir(parents=True)
    (tmp / "probe" / "wire_probe.py").write_text(PROBE, "utf-8")
    with FakeOpenAIServer() as server:
        models.install(server)
        run = run_pytest(
            [
                "-p",
                "wire_probe",
                "--tau2-llm-transport",
                transport,
                *(node(f"tau2_retail__{t}") for t in TASKS),
                *model_options(server, sides=("agent", "user", "judge")),
            ],
            tmp,
            env=subprocess_env(PYTHONPATH=str(tmp / "probe")),
        )
        requests, headers = server.requests, server.request_headers
    assert run.returncode in (0, 1), run.output[-4000:]
    metrics = {}
    for task in TASKS:
        saved = run.metrics(f"tau2_retail__{task}")
        metrics[task] = {key: value for key, value in saved.items() if key not in HOW_IT_RAN}
    return {
        "requests": requests,
        "auth": sorted({h.get("authorization", "") for h in headers}),
        "metrics": metrics,
        "litellm_imported": "LITELLM_IMPORTED=True" in run.stdout,
    }


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    root = tmp_path_factory.mktemp("wire-sweep")
    return {transport: _sweep(root / transport, transport) for transport in ("litellm", "auto")}


def test_the_same_requests_reach_the_models(sweeps: dict[str, dict[str, Any]]) -> None:
    litellm, wire = sweeps["litellm"], sweeps["auto"]
    assert len(wire["requests"]) == len(litellm["requests"]) > 8 * 3
    for model in ("agent", "user", "judge"):
        by_litellm = [r for r in litellm["requests"] if r.get("model") == model]
        by_wire = [r for r in wire["requests"] if r.get("model") == model]
        assert by_litellm, model
        assert by_wire == by_litellm, model
    assert wire["auth"] == litellm["auth"] and len(wire["auth"]) == 1 and wire["auth"][0].startswith("Bearer ")


def test_the_same_results(sweeps: dict[str, dict[str, Any]]) -> None:
    litellm, wire = sweeps["litellm"]["metrics"], sweeps["auto"]["metrics"]
    assert wire == litellm
    assert litellm[BROKEN]["is_successful"] is False
    assert sum(m["is_successful"] is True for m in litellm.values()) == len(TASKS) - 1
    assert all(m["token_usage"]["agent"]["calls"] > 0 for m in litellm.values())


def test_the_wire_path_leaves_litellm_unimported(sweeps: dict[str, dict[str, Any]]) -> None:
    assert sweeps["litellm"]["litellm_imported"] is True
    assert sweeps["auto"]["litellm_imported"] is False
