"""``usage`` blocks as models really send them: negative counts, strings, a fraction, ``null``, no
block at all. Through both transports (the OpenAI wire path and litellm): the reply is kept, the
count recorded as unknown in ``token_usage`` with a warning naming the field, the call unpriced."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.llm_scripts import AgentScript, ScriptedModels, model_options, node, run_pytest
from tests.support.fake_openai import NO_USAGE, FakeOpenAIServer, with_usage

TASK = "5"
SCENARIO = f"tau2_retail__{TASK}"


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_unusable_usage_counts_keep_the_reply_and_are_recorded_as_unknown(tmp_path: Path, transport: str) -> None:
    models = ScriptedModels()
    steps = models.gold_steps(TASK)
    shapes = [
        {"prompt_tokens": -3, "completion_tokens": 7, "total_tokens": 4},
        {"prompt_tokens": 11, "completion_tokens": "many", "total_tokens": 11},
        {"prompt_tokens": 2.5, "completion_tokens": 1, "total_tokens": 3.5},
        None,
        NO_USAGE,
    ]
    shaped = [with_usage(step, shapes[i]) if i < len(shapes) else step for i, step in enumerate(steps)]
    models.agent[TASK] = AgentScript(shaped, closing=models.gold_closing(TASK))
    with FakeOpenAIServer() as server:
        models.install(server)
        run = run_pytest(
            [node(SCENARIO), *model_options(server), "--tau2-llm-transport", transport, "-W", "always"], tmp_path
        )
    assert run.returncode == 0, run.stdout[-4000:]
    metrics = run.metrics(SCENARIO)
    assert metrics["is_successful"] is True  # every reply was used
    agent = metrics["token_usage"]["agent"]
    assert agent["unknown_usage"] == {"completion_tokens": 1, "prompt_tokens": 2}, agent
    assert agent["calls"] >= len(steps) + 1  # the steps, then the closing
    assert agent["prompt_tokens"] >= 0 and agent["completion_tokens"] >= 7
    assert "unknown_usage" not in metrics["token_usage"]["user"]  # a well-formed side says nothing
    assert "UnknownUsageWarning" in run.stdout
    for field, value in (("usage.prompt_tokens", "-3"), ("usage.completion_tokens", "'many'")):
        assert f"model 'openai/agent' (agent) reported {field} = {value}, not a token count" in run.stdout
    assert "usage.prompt_tokens = 2.5" in run.stdout
