"""Tool calls as real models send them, through both transports (OpenAI wire path and litellm):
arguments as JSON strings, two calls of one message under one id, calls without an id (missing,
``null``), an id reused in every message, arguments cut off mid-way.

Each call keeps its own result in the transcript, a call without an id or with a used one gets an
id of its own, and those ids are what the model is sent back; the transcript holds arguments as
JSON objects (a string that is not one kept as sent, flagged)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.llm_scripts import (
    BAD_ARGUMENTS,
    UNKNOWN_ORDER,
    PytestRun,
    ScriptedModels,
    for_model,
    model_options,
    node,
    realistic_agent_script,
    run_pytest,
)
from tests.support.fake_openai import FakeOpenAIServer

TASK = "5"
SCENARIO = f"tau2_retail__{TASK}"


def produce(tmp: Path, transport: str) -> tuple[PytestRun, list[dict[str, Any]]]:
    models = ScriptedModels()
    models.agent[TASK] = realistic_agent_script(models, TASK)
    with FakeOpenAIServer() as server:
        models.install(server)
        run = run_pytest([node(SCENARIO), *model_options(server), "--tau2-llm-transport", transport], tmp)
        return run, server.requests


@pytest.fixture(scope="module", params=["auto", "litellm"])
def realistic(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[PytestRun, Any]:
    return produce(tmp_path_factory.mktemp(f"ids-{request.param}"), request.param)


def test_the_run_passes_and_every_gold_call_matches(realistic: tuple[PytestRun, Any]) -> None:
    run, _ = realistic
    assert run.returncode == 0, run.stdout[-3000:]
    metrics = run.metrics(SCENARIO)
    assert metrics["is_action_match"] is True and metrics["db_state_match"] is True
    assert metrics["tool_errors"] == 2  # the unknown order and the cut-off arguments


def test_each_call_has_its_own_id_and_its_own_result(realistic: tuple[PytestRun, Any]) -> None:
    run, _ = realistic
    messages = run.transcript(SCENARIO)
    calls = [(i, k, c) for i, m in enumerate(messages) for k, c in enumerate(m.get("tool_calls") or [])]
    ids = [c["id"] for _, _, c in calls]
    assert len(ids) == len(set(ids)), ids
    assert all(ids) and "None" not in ids
    for i, k, call in calls:  # the result in the call's place carries the call's id and name
        result = messages[i + 1 + k]
        assert result["role"] == "tool" and result["tool_call_id"] == call["id"] and result["name"] == call["name"]
    first = next(m for m in messages if m.get("tool_calls"))
    assert first["content"] == "Let me look you up."
    kept, renamed = first["tool_calls"]
    assert kept["id"] == "call_0" and "sent_id" not in kept
    assert renamed["sent_id"] == "call_0" and renamed["id"].startswith("tau2_call_")
    failed = messages[first["turn_idx"] + 2]
    assert failed["error"] is True and "Order not found" in failed["content"]  # the error is the failed call's
    assert messages[first["turn_idx"] + 1]["error"] is False
    second = [m for m in messages if m.get("tool_calls")][1]
    assert all(c.get("id_generated") is True and c["id"].startswith("tau2_call_") for c in second["tool_calls"])
    repeated = [c for _, _, c in calls if c.get("sent_id") == "call_0"]
    assert len(repeated) == 1 + 3  # the second of the first message, then every later message's call


def test_the_model_is_sent_back_the_ids_the_transcript_holds(realistic: tuple[PytestRun, Any]) -> None:
    run, requests = realistic
    messages = run.transcript(SCENARIO)
    agent = [r for r in for_model(requests, "agent") if "[case 5]" in json.dumps(r["messages"])]
    last = max(agent, key=lambda r: len(r["messages"]))["messages"]
    sent_calls = [c for m in last if m.get("role") == "assistant" for c in m.get("tool_calls") or []]
    sent_results = [m["tool_call_id"] for m in last if m.get("role") == "tool"]
    recorded = [c["id"] for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []]
    assert [c["id"] for c in sent_calls] == recorded[: len(sent_calls)]
    assert sent_results == [c["id"] for c in sent_calls]
    assert len(set(sent_results)) == len(sent_results)
    # what the model sent stays as it sent it in its own view: the arguments' text
    assert any(c["function"]["arguments"] == BAD_ARGUMENTS for c in sent_calls)


def test_arguments_are_stored_parsed_and_a_cut_off_string_is_kept_and_flagged(
    realistic: tuple[PytestRun, Any],
) -> None:
    run, _ = realistic
    calls = [c for m in run.transcript(SCENARIO) for c in m.get("tool_calls") or []]
    parsed = [c for c in calls if isinstance(c["arguments"], dict)]
    assert {"name": "get_order_details", "arguments": {"order_id": UNKNOWN_ORDER}}.items() <= {
        k: v for c in parsed if c["arguments"] == {"order_id": UNKNOWN_ORDER} for k, v in c.items()
    }.items()
    bad = [c for c in calls if not isinstance(c["arguments"], dict)]
    assert [c["arguments"] for c in bad] == [BAD_ARGUMENTS]
    assert "not valid JSON" in bad[0]["invalid_arguments"] or "Expecting" in bad[0]["invalid_arguments"]
    assert all("invalid_arguments" not in c for c in parsed)


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_a_recording_of_such_calls_replays_with_no_model(tmp_path: Path, transport: str) -> None:
    """The ids given to calls without one or with a used one are the same on every run, so the
    requests that carry them match their recording, and the replay's transcript is the recording's."""
    models = ScriptedModels()
    models.agent[TASK] = realistic_agent_script(models, TASK)
    cassettes = f"--tau2-cassette-dir={tmp_path / 'cassettes'}"
    with FakeOpenAIServer() as server:
        models.install(server)
        options = [node(SCENARIO), *model_options(server), "--tau2-llm-transport", transport]
        recorded = run_pytest([*options, "--tau2-record-mode", "all", cassettes], tmp_path / "record")
    assert recorded.returncode == 0, recorded.stdout[-3000:]
    replayed = run_pytest([*options, "--tau2-record-mode", "none", cassettes], tmp_path / "replay")  # server gone
    assert replayed.returncode == 0, replayed.stdout[-3000:]
    metrics = replayed.metrics(SCENARIO)
    assert metrics["recording"]["recorded_calls"] == 0 and metrics["recording"]["replayed_calls"] > 0
    assert replayed.transcript(SCENARIO) == recorded.transcript(SCENARIO)
