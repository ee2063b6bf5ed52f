"""Replies shaped like real models': several tool calls in one message, their arguments as JSON
strings, text beside them, through both transports (the OpenAI wire path and litellm) and
through ``--tau2-concurrency`` (the prefetcher builds and runs the trial)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.llm_scripts import AgentScript, ScriptedModels, model_options, node, run_pytest
from tests.support.fake_openai import FakeOpenAIServer, text, tool_calls

TASK = "5"  # find the user, read their details, the order and the product, return one item
SCENARIO = f"tau2_retail__{TASK}"


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_several_calls_in_one_message_are_each_run_recorded_and_scored(tmp_path: Path, transport: str) -> None:
    models = ScriptedModels()
    gold = [a for a in models.tasks.gold(TASK) if a["name"] != "transfer_to_human_agents"]
    one_message = tool_calls([(a["name"], a["arguments"]) for a in gold], content="Let me take care of all of it.")
    models.agent[TASK] = AgentScript(
        [one_message, text("All done: your return is processed.")], closing=models.gold_closing(TASK)
    )
    with FakeOpenAIServer() as server:
        models.install(server)
        run = run_pytest(
            [
                node(SCENARIO),
                *model_options(server),
                "--tau2-concurrency",
                "2",
                "--tau2-llm-transport",
                transport,
            ],
            tmp_path,
        )
    assert run.returncode == 0, run.stdout[-3000:]
    metrics = run.metrics(SCENARIO)
    assert metrics["is_successful"] is True
    assert metrics["db_state_match"] is True and metrics["is_action_match"] is True
    assert metrics["agent"] == "litellm:openai/agent"
    messages = run.transcript(SCENARIO)
    calling = next(m for m in messages if m.get("tool_calls"))
    assert calling["content"] == "Let me take care of all of it."
    ids = [c["id"] for c in calling["tool_calls"]]
    assert [c["name"] for c in calling["tool_calls"]] == [a["name"] for a in gold]
    assert len(set(ids)) == len(gold)
    results = [m for m in messages if m.get("role") == "tool" and m.get("tool_call_id") in ids]
    assert sorted(m["tool_call_id"] for m in results) == sorted(ids)  # each call has its own result
