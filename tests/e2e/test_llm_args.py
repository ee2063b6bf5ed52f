"""Model arguments people commonly pass: ``max_tokens`` / ``temperature`` / ``seed``, and custom prices.

- A run with ``--tau2-agent-args '{"max_tokens": 1024, ...}'`` sends the arguments to the model
  and must still produce valid result files.
- ``input_cost_per_token`` / ``output_cost_per_token`` (litellm's custom pricing) must give a
  cost for an otherwise unpriced model.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pytest_tau2.llm.client import Completion, aclose, acomplete
from pytest_tau2.llm.config import ModelConfig, RetryPolicy
from tests.e2e.llm_scripts import (
    SECRET,
    Recorded,
    ScriptedModels,
    Tasks,
    for_model,
    model_options,
    node,
    run_pytest,
    shared_once,
)
from tests.support.fake_openai import FakeOpenAIServer, text

SCENARIO = "tau2_retail__5"
AGENT_ARGS = {"max_tokens": 1024, "temperature": 0, "seed": 7}


def _produce(tmp: Path) -> Recorded:
    models = ScriptedModels(Tasks.load("retail"))
    with FakeOpenAIServer() as server:
        models.install(server)
        args = json.dumps({"api_base": server.base_url, "api_key": SECRET, **AGENT_ARGS})
        run = run_pytest(
            [
                node(SCENARIO),
                "--tau2-agent-model",
                "openai/agent",
                f"--tau2-agent-args={args}",
                *model_options(server, sides=("user",)),
            ],
            tmp,
        )
        return Recorded.of(run, server)


@pytest.fixture(scope="module")
def args_run(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return shared_once(tmp_path_factory, "llm_args", _produce)


def test_agent_args_reach_the_model(args_run: Recorded) -> None:
    requests = for_model(args_run.requests, "agent")
    assert requests, args_run.run.stdout[-3000:]
    for request in requests:
        assert request.get("max_tokens", request.get("max_completion_tokens")) == 1024
        assert request["temperature"] == 0 and request["seed"] == 7
    assert all("max_tokens" not in r for r in for_model(args_run.requests, "user"))


def test_max_tokens_in_args_keeps_the_results_valid(args_run: Recorded) -> None:
    run = args_run.run
    assert run.outcome_line(SCENARIO) == "PASSED", run.stdout[-3000:]
    metrics = run.metrics(SCENARIO)
    assert metrics["models"]["agent"]["args"]["max_tokens"] == 1024
    assert metrics["models"]["agent"]["args"]["api_key"] == "***"


def test_secret_stays_masked_with_extra_args(args_run: Recorded) -> None:
    run = args_run.run
    assert SECRET not in run.stdout + run.stderr + run.files_text()


# ---- custom per-token prices ---------------------------------------------------------------------------------


def _complete(server: FakeOpenAIServer, **args: object) -> Completion:
    config = ModelConfig("openai/agent", {"api_base": server.base_url, "api_key": SECRET, **args})

    async def call() -> Completion:
        try:
            return await acomplete(config, [{"role": "user", "content": "hello " * 50}], retry=RetryPolicy(0))
        finally:
            await aclose()

    return asyncio.run(call())


def test_unpriced_model_has_no_cost() -> None:
    with FakeOpenAIServer() as server:
        server.add_handler("agent", text("Hi there, how can I help?"))
        completion = _complete(server)
    assert completion.prompt_tokens > 0 and completion.cost is None


def test_custom_prices_in_args_give_a_cost() -> None:
    with FakeOpenAIServer() as server:
        server.add_handler("agent", text("Hi there, how can I help?"))
        completion = _complete(server, input_cost_per_token=1e-6, output_cost_per_token=2e-6)
    expected = completion.prompt_tokens * 1e-6 + completion.completion_tokens * 2e-6
    assert completion.cost == pytest.approx(expected)
