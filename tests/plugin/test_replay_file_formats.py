"""Replay files (``--tau2-agent replay:FILE``): both shapes of tool arguments, and load-time refusals.

A model's tool calls store their arguments as the JSON string the model sent, so a replay file
made from a run's transcripts holds strings; one written by hand holds objects. Both must
replay the same calls. Anything else is refused when pytest starts, naming file and line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.conversation.replay import ReplayFileError, load_replay_file
from tests.plugin.conftest import Project
from tests.support.tau2_data import DATA_DIR, requires_data

ORDER = {
    "items": [
        {"name": "Pepperoni Pizza", "unit_price": "9.99", "quantity": "1"},
        {"name": "Extra Cheese", "unit_price": "1.50", "quantity": "1"},
    ],
    "customer_name": "Charlie",
    "customer_phone": "314-527-8960",
    "total_price": "11.49",
}


def _write(tmp_path: Path, *records: Any) -> str:
    path = tmp_path / "recorded.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), "utf-8")
    load_replay_file.cache_clear()  # the loader caches by path; each test writes a new file
    return str(path)


def _refusal(tmp_path: Path, *records: Any) -> str:
    with pytest.raises(ReplayFileError) as raised:
        load_replay_file(_write(tmp_path, *records))
    return str(raised.value)


# ---- accepted shapes ------------------------------------------------------------------------------


def test_arguments_as_object_and_as_json_string_load_the_same(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {"scenario": "a__1", "actions": [{"name": "PlaceOrderTool", "arguments": ORDER}]},
        {"scenario": "a__2", "actions": [{"name": "PlaceOrderTool", "arguments": json.dumps(ORDER)}]},
    )
    loaded = load_replay_file(path)
    assert (
        loaded["a__1"] == loaded["a__2"] == [{"name": "PlaceOrderTool", "arguments": ORDER, "requestor": "assistant"}]
    )


def test_absent_null_and_empty_string_arguments_are_an_empty_object(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "scenario": "a__1",
            "actions": [
                {"name": "EndConversationTool"},
                {"name": "EndConversationTool", "arguments": None},
                {"name": "EndConversationTool", "arguments": ""},
                {"name": "EndConversationTool", "arguments": "{}", "requestor": "user", "id": "call_7"},
            ],
        },
    )
    actions = load_replay_file(path)["a__1"]
    assert [a["arguments"] for a in actions] == [{}, {}, {}, {}]
    assert [a["requestor"] for a in actions] == ["assistant", "assistant", "assistant", "user"]


def test_blank_lines_are_ignored_and_the_last_line_of_a_scenario_wins(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {"scenario": "a__1", "actions": [{"name": "first"}]},
        "   ",
        {"scenario": "a__1", "actions": [{"name": "second"}]},
    )
    assert [a["name"] for a in load_replay_file(path)["a__1"]] == ["second"]


# ---- refused at load time, with the line ------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"order_id": "#W1"', "'arguments' is a string but not valid JSON (Expecting ',' delimiter)"),
        ("[1, 2]", "'arguments' string must hold a JSON object, got '[1, 2]'"),
        (42, "'arguments' must be an object or a JSON string of one, got 42"),
        (["#W1"], "'arguments' must be an object or a JSON string of one, got ['#W1']"),
    ],
    ids=["string-not-json", "string-not-object", "number", "list"],
)
def test_malformed_arguments_name_line_action_and_tool(tmp_path: Path, arguments: Any, expected: str) -> None:
    message = _refusal(
        tmp_path,
        {"scenario": "a__1", "actions": []},
        {
            "scenario": "a__2",
            "actions": [{"name": "ok", "arguments": {}}, {"name": "get_order", "arguments": arguments}],
        },
    )
    assert message.startswith(f"{tmp_path / 'recorded.jsonl'}:2: actions[1] (get_order): {expected}")


def test_unknown_keys_are_refused_with_the_allowed_ones(tmp_path: Path) -> None:
    typo = _refusal(tmp_path, {"scenario": "a__1", "actions": [{"name": "t", "argument": {"x": 1}}]})
    assert typo.endswith(":1: actions[0] (t): unknown key 'argument' (allowed: arguments, id, name, requestor)")
    top = _refusal(tmp_path, {"scenario": "a__1", "actions": [], "note": "x", "agent": "y"})
    assert top.endswith(":1: unknown keys 'agent', 'note' (allowed: actions, scenario)")


def test_requestor_must_be_assistant_or_user(tmp_path: Path) -> None:
    message = _refusal(tmp_path, {"scenario": "a__1", "actions": [{"name": "t", "requestor": "agent"}]})
    assert message.endswith(":1: actions[0] (t): 'requestor' must be 'assistant' or 'user', got 'agent'")


def test_actions_that_are_not_objects_name_their_index(tmp_path: Path) -> None:
    message = _refusal(tmp_path, {"scenario": "a__1", "actions": [{"name": "t"}, "get_order"]})
    assert message.endswith(":1: 'actions' must be a list of {name, arguments} objects; actions[1] is 'get_order'")


# ---- through pytest ----------------------------------------------------------------------------------


def test_string_arguments_replay_like_objects(project: Project) -> None:
    """A model-shaped record (arguments as a JSON string) next to a hand-written one: both pass."""
    project.restaurant()
    records = [
        {
            "scenario": "restaurant__pizza_pepperoni",
            "actions": [{"name": "PlaceOrderTool", "arguments": json.dumps(ORDER)}],
        },
        {"scenario": "restaurant__menu_question", "actions": [{"name": "GetMenuTool", "arguments": {}}]},
    ]
    project.write("recorded.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    run = project.run("--tau2-agent", "replay:recorded.jsonl", "-k", "pizza_pepperoni or menu_question")
    assert run.items() == {"restaurant__menu_question": "PASSED", "restaurant__pizza_pepperoni": "PASSED"}, run.stdout
    assert run.metrics("restaurant__pizza_pepperoni")["is_action_match"] is True


def test_a_malformed_string_is_a_usage_error_before_any_scenario_runs(project: Project) -> None:
    project.restaurant()
    project.write(
        "recorded.jsonl",
        json.dumps({"scenario": "restaurant__menu_question", "actions": []})
        + "\n"
        + json.dumps(
            {"scenario": "restaurant__pizza_pepperoni", "actions": [{"name": "PlaceOrderTool", "arguments": "{"}]}
        )
        + "\n",
    )
    run = project.run("--tau2-agent", "replay:recorded.jsonl", "-k", "pizza_pepperoni")
    assert run.result.ret == pytest.ExitCode.USAGE_ERROR
    run.result.stderr.fnmatch_lines(["ERROR: recorded.jsonl:2: actions?0? (PlaceOrderTool): 'arguments' is a string*"])
    # raised once collection meets the scenarios (the plugin reads no option before: docs/ci.md)
    assert "PASSED" not in run.stdout and " passed" not in run.stdout


TELECOM_TASK = "[service_issue]overdue_bill_suspension|unseat_sim_card[PERSONA:Easy]"
TELECOM_SCENARIO = "tau2_telecom__service_issue_overdue_bill_suspension_unseat_sim_card_persona_easy"


@requires_data("telecom")
def test_user_side_calls_are_made_by_the_customer_in_file_order(pytester: pytest.Pytester) -> None:
    """docs/replay.md: a telecom trajectory (carrier and phone calls interleaved) replays as recorded."""
    tasks = json.loads((DATA_DIR / "tau2" / "domains" / "telecom" / "tasks.json").read_text("utf-8"))
    gold = next(t for t in tasks if t["id"] == TELECOM_TASK)["evaluation_criteria"]["actions"]
    actions = [{"name": a["name"], "arguments": a.get("arguments") or {}, "requestor": a["requestor"]} for a in gold]
    assert {a["requestor"] for a in actions} == {"assistant", "user"}
    pytester.makeconftest("import pytest_tau2.domains.tau2_sources  # noqa: F401\n")
    pytester.makepyfile(test_items="from pytest_tau2 import test_scenario  # noqa: F401\n")
    replay = pytester.path / "recorded.jsonl"
    replay.write_text(json.dumps({"scenario": TELECOM_SCENARIO, "actions": actions}) + "\n", "utf-8")
    results = pytester.path / "out"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--tau2-results-dir={results}", f"--tau2-scenarios={TELECOM_SCENARIO}",
        "--tau2-agent", f"replay:{replay}", "-v",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    transcript = json.loads((results / TELECOM_SCENARIO / "transcript.json").read_text("utf-8"))["messages"]
    made = [(m["role"], c["name"]) for m in transcript for c in m.get("tool_calls") or []]
    expected = [("assistant" if a["requestor"] == "assistant" else "user", a["name"]) for a in actions]
    assert made[: len(expected)] == expected
