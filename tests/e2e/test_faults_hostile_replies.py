"""Fault matrix, hostile model replies: what a model says is never an infrastructure error.

Tool-call arguments nested 1,000 levels deep, ``content`` that is not a string (a number, a list
of strings, an object, OpenAI content parts) and a lone UTF-16 surrogate in the model's text,
each in its own retail scenario of one run, through the OpenAI wire path and through litellm
(the two must agree). For each: the conversation goes on and is scored, the transcript keeps
what happened, the run-level files (report.html included) are written, and the invariant items
run == JUnit testcases == all_metrics.json entries holds. See docs/faults.md.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fault_matrix import assert_counts_agree
from tests.e2e.llm_scripts import (
    AgentScript,
    Recorded,
    ScriptedModels,
    Tasks,
    agent_step,
    model_options,
    node,
    run_pytest,
    shared_once,
    subprocess_env,
)
from tests.support.fake_openai import FakeOpenAIServer, Reply, raw, tool_calls

DEEP = "0"  # arguments nested 1,000 levels deep at the agent's first step
NUMBER = "1"  # content: 42
STRINGS = "5"  # content: ["Let me", "check."]
OBJECT = "6"  # content: {"note": "checking"}
PARTS = "7"  # content: [{"type": "text", "text": "Let me "}, {"type": "text", "text": "check."}]
SURROGATE = "8"  # content with one lone surrogate
TASKS = (DEEP, NUMBER, STRINGS, OBJECT, PARTS, SURROGATE)
# litellm refuses to convert a reply whose content is not a string or whose arguments nest
# ~1,000 deep ("Invalid response object"); the litellm transport then reads the body it received
# as the wire path does (transport_litellm.py), so both transports see the same replies.
LONE = "Caf\ud800 is open"
CONTENTS: dict[str, Any] = {
    NUMBER: 42,
    STRINGS: ["Let me", "check."],
    OBJECT: {"note": "checking"},
    PARTS: [{"type": "text", "text": "Let me "}, {"type": "text", "text": "check."}],
    SURROGATE: LONE,
}


def retail(task_id: str) -> str:
    return f"tau2_retail__{task_id}"


def _body(request: dict[str, Any], content: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": content}
    return {
        "id": "chatcmpl-hostile",
        "object": "chat.completion",
        "created": 1,
        "model": str(request.get("model", "")),
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
    }


def _deep_arguments(depth: int = 1000) -> str:
    return '{"user": ' + "[" * depth + "]" * depth + "}"


def _script(models: ScriptedModels, task_id: str) -> None:
    gold = models.gold_steps(task_id)
    if task_id == DEEP:
        first: Reply = tool_calls([("find_user_id_by_name_zip", _deep_arguments())], content="Looking you up.")
        models.agent[task_id] = AgentScript([first, *gold], closing=models.gold_closing(task_id))
        return
    content = CONTENTS[task_id]
    script = AgentScript(gold, closing=models.gold_closing(task_id))

    def agent(request: dict[str, Any]) -> Reply:
        step = agent_step(request)
        if step == 0:
            return raw(_body(request, content))
        if request["messages"][-1].get("role") == "user" and "###STOP###" in str(request["messages"][-1]["content"]):
            return script.closing
        return gold[step - 1] if step - 1 < len(gold) else script.idle

    script.override = agent
    models.agent[task_id] = script


def _produce(transport: str, tmp: Path) -> Recorded:
    models = ScriptedModels(Tasks.load("retail"))
    tasks = TASKS
    for task_id in tasks:
        _script(models, task_id)
    with FakeOpenAIServer() as server:
        models.install(server)
        args = [
            *(node(retail(t)) for t in tasks),
            *model_options(server),
            "--tau2-llm-transport",
            transport,
            "--tau2-llm-retries",
            "1",
        ]
        return Recorded.of(run_pytest(args, tmp, env=subprocess_env()), server)


def _recorded(tmp_path_factory: pytest.TempPathFactory, transport: str) -> Recorded:
    return shared_once(tmp_path_factory, f"faults_hostile_{transport}", lambda tmp: _produce(transport, tmp))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The OpenAI wire path (the default for an OpenAI-compatible endpoint)."""
    return _recorded(tmp_path_factory, "auto")


@pytest.fixture(scope="module")
def via_litellm(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return _recorded(tmp_path_factory, "litellm")


@pytest.fixture(scope="module", params=["auto", "litellm"], ids=["wire", "litellm"])
def either(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return _recorded(tmp_path_factory, str(request.param))


def _first_reply(transcript: list[dict[str, Any]]) -> dict[str, Any]:
    """The agent's first generated message (the greeting is not the model's)."""
    return next(m for m in transcript if m.get("role") == "assistant" and m.get("generated") is not False)


def _debug(recorded: Recorded) -> str:
    run = recorded.run
    return f"exit {run.returncode}\n--- stdout (tail)\n{run.stdout[-6000:]}\n--- stderr\n{run.stderr[-3000:]}"


def test_every_hostile_reply_is_part_of_a_scored_conversation(either: Recorded) -> None:
    hostile = either
    run = hostile.run
    assert "Traceback" not in run.output and "INTERNALERROR" not in run.output, _debug(hostile)
    for task_id in TASKS:
        assert run.outcome_line(retail(task_id)) == "PASSED", f"{task_id}\n{_debug(hostile)}"
        metrics = run.metrics(retail(task_id))
        assert metrics["infrastructure_error"] is None and metrics["db_state_match"] is True
    assert run.returncode == 0, _debug(hostile)
    assert_counts_agree(run, [retail(t) for t in TASKS])
    assert not hostile.handler_errors


def test_arguments_nested_too_deeply_are_a_tool_error_for_that_call(either: Recorded) -> None:
    hostile = either
    transcript = hostile.run.transcript(retail(DEEP))
    results = [m for m in transcript if m.get("role") == "tool"]
    assert results[0]["error"] is True
    assert "arguments nested too deeply" in results[0]["content"], results[0]
    assert results[0]["name"] == "find_user_id_by_name_zip"
    assert not any(r["error"] for r in results[1:])  # the conversation went on: the gold calls ran
    # The model was attempted once per step (no retries of a reply that was delivered).
    agent_zero = ScriptedModels.agent_requests(hostile.requests, DEEP, 0)
    assert len(agent_zero) == 1


@pytest.mark.parametrize(
    ("task_id", "expected", "note"),
    [
        (NUMBER, "42", "rendered as JSON text"),
        (STRINGS, '["Let me", "check."]', "rendered as JSON text"),
        (OBJECT, '{"note": "checking"}', "rendered as JSON text"),
        (PARTS, "Let me check.", None),
    ],
    ids=["number", "list-of-strings", "object", "content-parts"],
)
def test_content_that_is_not_a_string_is_normalised_the_same_way(
    either: Recorded, task_id: str, expected: str, note: str | None
) -> None:
    hostile = either
    transcript = hostile.run.transcript(retail(task_id))
    said = _first_reply(transcript)
    assert said["content"] == expected
    if note is None:
        assert "content_note" not in said
    else:
        assert note in said["content_note"], said
    # The next request carries the normalised text (a string) back to the model.
    later = ScriptedModels.agent_requests(hostile.requests, task_id, 1)[0]
    assert any(m.get("role") == "assistant" and m.get("content") == expected for m in later["messages"])


def test_a_lone_surrogate_is_kept_escaped_in_every_file(either: Recorded) -> None:
    hostile = either
    run = hostile.run
    assert run.outcome_line(retail(SURROGATE)) == "PASSED", _debug(hostile)
    escaped = "Caf\\ud800 is open"
    said = _first_reply(run.transcript(retail(SURROGATE)))
    assert said["content"] == escaped
    for path in [run.junit_path, *run.results_dir.rglob("*")]:
        if path.is_file():
            path.read_text("utf-8")  # every file is valid UTF-8
    report = (run.results_dir / "report.html").read_text("utf-8")
    assert "Caf\\\\ud800" in report or "Caf\\ud800" in report
    later = ScriptedModels.agent_requests(hostile.requests, SURROGATE, 1)[0]
    assert any(m.get("content") == escaped for m in later["messages"])  # sent safely
    again = subprocess.run(
        [sys.executable, "-m", "pytest_tau2.cli", "report", str(run.results_dir)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        check=False,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr[-2000:]


@pytest.mark.parametrize("task_id", TASKS)
def test_both_transports_keep_the_same_transcript(hostile: Recorded, via_litellm: Recorded, task_id: str) -> None:
    def said(recorded: Recorded) -> list[Any]:
        keep = ("role", "content", "content_note", "error", "name", "arguments", "invalid_arguments")
        return [{k: m.get(k) for k in keep} for m in recorded.run.transcript(retail(task_id))]

    assert said(hostile) == said(via_litellm)
    assert json.loads((via_litellm.run.results_dir / "all_metrics.json").read_text())["scenarios"]


def test_the_report_renders_an_older_folder_holding_a_raw_surrogate(hostile: Recorded, tmp_path: Path) -> None:
    """A folder written before replies were escaped holds the surrogate itself (a JSON escape)."""
    folder = Path(shutil.copytree(hostile.run.results_dir, tmp_path / "older"))
    (folder / "report.html").unlink()
    path = folder / retail(SURROGATE) / "transcript.json"
    data = json.loads(path.read_text("utf-8"))
    for message in data["messages"]:
        if isinstance(message.get("content"), str):
            message["content"] = message["content"].replace("Caf\\ud800", LONE)
    path.write_text(json.dumps(data), "utf-8")  # ensure_ascii: the file holds the escape \ud800
    again = subprocess.run(
        [sys.executable, "-m", "pytest_tau2.cli", "report", str(folder)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        check=False,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert "Caf\\ud800" in (folder / "report.html").read_text("utf-8")
