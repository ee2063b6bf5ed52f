"""The first divergence from gold (scoring/divergence.py): pure cases, then perturbed gold
trajectories of the pinned retail tasks run through the pipeline, where the answer is known."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.conversation.offline import GoldPlan, OracleAgent, ScriptedUser
from pytest_tau2.report.metrics import build_record
from pytest_tau2.run import participants
from pytest_tau2.run.pipeline import run_scenario
from pytest_tau2.scenario.outcome import ScenarioOutcome
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.scoring.divergence import first_divergence, tool_steps
from pytest_tau2.settings import Settings

WRITES = {"cancel", "update_address"}


def writes(side: str, name: str) -> bool:
    return name in WRITES


def call(turn: int, name: str, arguments: dict[str, Any], *, side: str = "agent", **extra: Any) -> dict[str, Any]:
    role = "assistant" if side == "agent" else "user"
    return {"role": role, "content": None, "tool_calls": [{"id": f"c{turn}", "name": name, "arguments": arguments}],
            "turn_idx": turn, **extra}  # fmt: skip


def result(turn: int, content: str, *, error: bool = False, side: str = "agent") -> dict[str, Any]:
    return {"role": "tool", "requestor": side, "tool_call_id": f"c{turn - 1}", "content": content, "error": error,
            "turn_idx": turn}  # fmt: skip


GOLD = [
    {"name": "get_order", "arguments": {"order_id": "#A1"}},
    {"name": "cancel", "arguments": {"order_id": "#A1", "reason": "no longer needed"}},
    {"name": "update_address", "arguments": {"city": "Austin"}},
]


def test_a_transcript_that_follows_the_gold_has_no_divergence() -> None:
    transcript = [
        call(1, "get_order", {"order_id": "#A1"}), result(2, '{"order_id": "#A1"}'),
        call(3, "cancel", {"order_id": "#A1", "reason": "no longer needed"}), result(4, "ok"),
        call(5, "update_address", '{"city": "Austin"}'), result(6, "ok"),  # JSON text arguments are parsed
    ]  # fmt: skip
    assert first_divergence(GOLD, transcript, writes) is None


def test_a_write_with_other_arguments_names_the_gold_action_and_the_argument() -> None:
    transcript = [
        call(1, "get_order", {"order_id": "#A1"}), result(2, "{}"),
        call(3, "cancel", {"order_id": "#A1", "reason": "ordered by mistake"}), result(4, "ok"),
    ]  # fmt: skip
    found = first_divergence(GOLD, transcript, writes)
    assert found is not None
    assert (found.kind, found.tool, found.turn_idx) == ("wrong_arguments", "cancel", 3)
    assert found.gold == {"index": 1, "name": "cancel", "arguments": GOLD[1]["arguments"]}
    assert found.argument_diff == {"reason": {"expected": "no longer needed", "found": "ordered by mistake"}}
    assert found.group == "wrong_arguments:cancel(reason)"
    assert "turn 3: cancel called with other arguments than gold action #1 cancel" in found.summary()


def test_a_wrong_read_that_fed_the_write_is_the_divergence() -> None:
    transcript = [
        call(1, "get_order", {"order_id": "#B7"}), result(2, '{"order_id": "#B7", "status": "pending"}'),
        call(3, "cancel", {"order_id": "#B7", "reason": "no longer needed"}), result(4, "ok"),
    ]  # fmt: skip
    found = first_divergence(GOLD, transcript, writes)
    assert found is not None
    assert (found.kind, found.tool, found.turn_idx) == ("wrong_read", "get_order", 1)
    assert found.argument_diff == {"order_id": {"expected": "#A1", "found": "#B7"}}
    assert found.fed == {
        "turn_idx": 3,
        "name": "cancel",
        "arguments": {"order_id": "#B7", "reason": "no longer needed"},
    }


def test_a_write_the_gold_does_not_have() -> None:
    transcript = [call(1, "refund", {"order_id": "#A1"}), result(2, "ok")]
    found = first_divergence(GOLD, transcript, lambda side, name: name in {*WRITES, "refund"})
    assert found is not None and (found.kind, found.tool, found.gold) == ("extra_write", "refund", None)
    twice = [
        call(1, "cancel", GOLD[1]["arguments"]), result(2, "ok"),
        call(3, "cancel", GOLD[1]["arguments"]), result(4, "ok"),
    ]  # fmt: skip
    repeated = first_divergence(GOLD, twice, writes)
    assert repeated is not None and (repeated.kind, repeated.turn_idx) == ("extra_write", 3)


def test_a_missing_write_is_named_at_the_end_of_the_conversation() -> None:
    transcript = [
        call(1, "cancel", GOLD[1]["arguments"]), result(2, "ok"),
        {"role": "user", "content": "Thanks. ###STOP###", "turn_idx": 3},
    ]  # fmt: skip
    found = first_divergence(GOLD, transcript, writes)
    assert found is not None
    assert (found.kind, found.tool, found.turn_idx, found.call) == ("missing_write", "update_address", 3, None)
    assert found.gold == {"index": 2, "name": "update_address", "arguments": {"city": "Austin"}}


def test_a_refused_write_counts_only_when_nothing_made_it_right() -> None:
    corrected = [
        call(1, "cancel", {"order_id": "#A1", "reason": "because"}), result(2, "Error: bad reason", error=True),
        call(3, "cancel", GOLD[1]["arguments"]), result(4, "ok"),
        call(5, "update_address", {"city": "Austin"}), result(6, "ok"),
    ]  # fmt: skip
    assert first_divergence(GOLD, corrected, writes) is None
    uncorrected = corrected[:2]
    found = first_divergence(GOLD, uncorrected, writes)
    assert found is not None and (found.kind, found.turn_idx, found.refused) == (
        "wrong_arguments",
        1,
        "Error: bad reason",
    )


def test_the_users_own_tools_and_the_history() -> None:
    gold = [{"name": "toggle_data", "arguments": {}, "requestor": "user"}]
    user_writes = {"toggle_data", "toggle_wifi"}
    transcript = [call(1, "toggle_wifi", {}, side="user"), result(2, "ok", side="user")]
    found = first_divergence(gold, transcript, lambda side, name: side == "user" and name in user_writes)
    assert found is not None and (found.kind, found.side, found.tool) == ("extra_write", "user", "toggle_wifi")
    assert "(the user's tool)" in found.summary()
    history = [call(0, "toggle_wifi", {}, side="user", history=True), result(1, "ok", side="user"),
               call(2, "toggle_data", {}, side="user"), result(3, "ok", side="user")]  # fmt: skip
    assert first_divergence(gold, history, lambda side, name: name in user_writes) is None


def test_tool_steps_pairs_each_call_with_its_result() -> None:
    steps = tool_steps([call(1, "get_order", {"order_id": "#A1"}), result(2, "found", error=False)])
    assert [(s.turn_idx, s.name, s.result, s.error) for s in steps] == [(1, "get_order", "found", False)]


# ---- perturbed gold trajectories through the pipeline ----------------------------------------------

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
needs_data = pytest.mark.skipif(not (DATA_DIR / "tau2" / "domains").is_dir(), reason=f"no tau2 data under {DATA_DIR}")
RETAIL_WRITES = {
    "cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
    "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
    "return_delivered_order_items",
}  # fmt: skip


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(data_dir=str(DATA_DIR), results_dir=str(tmp_path_factory.mktemp("results")))


@pytest.fixture(scope="module")
def scenarios(settings: Settings) -> dict[str, type]:
    return all_scenarios(settings) if (DATA_DIR / "tau2" / "domains").is_dir() else {}


def run(scenario: Any, settings: Settings, actions: list[dict[str, Any]]) -> ScenarioOutcome:
    ctx = participants.Context.for_scenario(scenario, settings)
    plan = GoldPlan([dict(a) for a in actions], ending_tools=ctx.plan.ending_tools, communicate=ctx.plan.communicate)
    user = ScriptedUser(scenario.user_opening(), plan, patience=5, agent_follows_plan=True)
    return asyncio.run(run_scenario(scenario, agent=OracleAgent(plan), user=user, settings=settings))


@needs_data
def test_every_retail_task_with_its_last_write_dropped_names_exactly_that_write(
    scenarios: dict[str, type], settings: Settings
) -> None:
    checked = 0
    for name in sorted(n for n in scenarios if n.startswith("tau2_retail__")):
        scenario = scenarios[name]().bind(settings)
        gold = scenario.gold_actions()
        indexes = [i for i, a in enumerate(gold) if a["name"] in RETAIL_WRITES]
        if not indexes:
            continue
        last = indexes[-1]
        outcome = run(scenario, settings, gold[:last] + gold[last + 1 :])
        if outcome.is_successful is True:  # the dropped write fails by design in the gold (task 105): no change
            assert outcome.gold is not None and outcome.gold.failures, name
            continue
        found = outcome.first_divergence
        assert found is not None, name
        assert (found.kind, found.tool) == ("missing_write", gold[last]["name"]), (name, found.summary())
        assert found.gold is not None and found.gold["index"] == last, (name, found.summary())
        checked += 1
    assert checked > 90  # most retail tasks write


@needs_data
@pytest.mark.parametrize(
    ("task", "tool", "argument", "value"),
    [
        ("38", "cancel_pending_order", "reason", "ordered by mistake"),
        ("33", "modify_user_address", "city", "Portland"),
        ("17", "modify_pending_order_address", "zip", "78701"),
    ],
)
def test_an_altered_argument_names_exactly_that_call_and_argument(
    scenarios: dict[str, type], settings: Settings, task: str, tool: str, argument: str, value: str
) -> None:
    scenario = scenarios[f"tau2_retail__{task}"]().bind(settings)
    gold = [dict(a) for a in scenario.gold_actions()]
    index = next(i for i, a in enumerate(gold) if a["name"] == tool)
    expected = gold[index]["arguments"][argument]
    gold[index] = {**gold[index], "arguments": {**gold[index]["arguments"], argument: value}}
    outcome = run(scenario, settings, gold)
    found = outcome.first_divergence
    assert outcome.is_successful is False and found is not None
    assert (found.kind, found.tool, found.argument_diff) == (
        "wrong_arguments", tool, {argument: {"expected": expected, "found": value}}
    )  # fmt: skip
    assert found.gold is not None and found.gold["index"] == index
    step = next(m for m in outcome.conversation.transcript if any(c["name"] == tool for c in m.get("tool_calls") or []))
    assert found.turn_idx == step["turn_idx"]
    record = build_record(outcome, models={}, data_pin=None, token_usage={}, agent_kind="oracle", user_kind="scripted")
    assert record.document()["first_divergence"]["group"] == f"wrong_arguments:{tool}({argument})"


@needs_data
def test_a_passing_scenario_has_none(scenarios: dict[str, type], settings: Settings) -> None:
    scenario = scenarios["tau2_retail__5"]().bind(settings)
    outcome = run(scenario, settings, scenario.gold_actions())
    assert outcome.is_successful is True and outcome.first_divergence is None
