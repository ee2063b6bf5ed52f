"""tau2's mock domain as the conformance test of the task loader and the evaluator.

The numbers are upstream's, computed once with upstream's own code at the pin (a2c0247) in a
throwaway virtualenv (its ``EnvironmentEvaluator`` on trajectories built from the listed tool
calls): the gold replay's final hashes of both DBs, the DB verdict of every trajectory that
drops one gold action, a few hand-made trajectories, and the reward of each gold trajectory.
``test_every_schema_feature_is_exercised`` checks that every task-schema feature the mock tasks
hold is both present at the pin and exercised by the port.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pytest_tau2.domains.tau2_sources as tau2_sources  # noqa: F401  (registers the sources)
from pytest_tau2.conversation.loop import Conversation
from pytest_tau2.conversation.offline import GoldPlan, OracleAgent, ScriptedUser
from pytest_tau2.environment.db import db_hash
from pytest_tau2.run import participants, seeding
from pytest_tau2.run.pipeline import run_scenario
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.scoring.predicates import evaluate_db_state_assertion
from pytest_tau2.settings import Settings

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
MOCK = DATA_DIR / "tau2" / "domains" / "mock"
if not (MOCK / "tasks.json").is_file():
    pytest.skip(f"no tau2 mock data under {DATA_DIR} (set TAU2_DATA_DIR)", allow_module_level=True)

TASKS = {task["id"]: task for task in json.loads((MOCK / "tasks.json").read_text(encoding="utf-8"))}

INITIAL = "107f83a70b7bf4f616e283b0b0b8451346fe7681173398d4498a1ec15c5fdfc6"
USER_INITIAL = "4cf3d22eed6962ba202c8738421d8a2286d2b5a0cad1372922c928be09ccbfac"
CREATED = "3b82583d5c026d816c5a32430fb3ab8d42b72ec2b91cd5cafaab817e0e05b00c"
TASK_1_DONE = "b1f6b69753e521e81879e1da10df1e641e6d749b9eb2b69669f643d179e2e548"
TASK_2_DONE = "4d5107245dad773859cda42b0ebf480572ab67dfbc6c91850b9d0e4f982ded17"
UPSTREAM_GOLD = {  # task -> (agent DB hash, user DB hash) after upstream's gold replay
    "create_task_1": (CREATED, USER_INITIAL),
    "create_task_1_nl_eval": (INITIAL, USER_INITIAL),
    "create_task_1_with_env_assertions": (CREATED, USER_INITIAL),
    "impossible_task_1": (INITIAL, USER_INITIAL),
    "update_task_1": (TASK_1_DONE, USER_INITIAL),
    "update_task_with_history_and_env_assertions": (
        "7229fa1c72600a794b787e13dee3b9b9d517fef8a4f9d8c63be7c5f561b890f1",
        USER_INITIAL,
    ),
    "update_task_with_initialization_actions": (TASK_2_DONE, USER_INITIAL),
    # Upstream points the user toolkit at the agent DB it rebuilt from initialization_data.
    "update_task_with_initialization_data": (TASK_2_DONE, TASK_2_DONE),
    "update_task_with_message_history": (TASK_2_DONE, USER_INITIAL),
    "update_task_with_user_tools": (TASK_1_DONE, USER_INITIAL),
}
UPSTREAM_GOLD_REWARD = {task_id: 1.0 for task_id in UPSTREAM_GOLD} | {
    "update_task_with_history_and_env_assertions": 0.0,
    "update_task_with_user_tools": 0.0,
}
UPDATE_1 = ("assistant", "update_task_status", {"task_id": "task_1", "status": "completed"})
UPSTREAM_TRAJECTORIES: list[tuple[str, list[tuple[str, str, dict[str, Any]]], bool, list[bool] | None]] = [
    # (task, tool calls, upstream db_match, upstream env-assertion verdicts; None: upstream raised)
    ("create_task_1", [], False, []),
    ("create_task_1_with_env_assertions", [], False, None),  # assert_task_status raises: no task_2
    ("impossible_task_1", [], True, []),  # the transfer changes nothing
    ("update_task_1", [], False, []),
    ("update_task_with_initialization_actions", [], False, []),
    ("update_task_with_initialization_data", [], False, []),
    ("update_task_with_message_history", [], False, []),
    ("update_task_with_user_tools", [], False, [False]),
    (
        "update_task_with_user_tools",
        [UPDATE_1, ("user", "dismiss_notification", {"notification_id": "notif_1"})],
        False,
        [True],
    ),
    (
        "update_task_with_history_and_env_assertions",
        [("assistant", "update_task_status", {"task_id": "task_2", "status": "completed"})],
        False,
        [True],
    ),
    ("create_task_1", [("assistant", "create_task", {"user_id": "user_1", "title": "Other"})], False, []),
    (
        "create_task_1",
        [("assistant", "create_task", {"user_id": "user_1", "title": "Important Meeting"})] * 2,
        False,
        [],
    ),
    ("impossible_task_1", [("assistant", "create_task", {"user_id": "user_1", "title": "x"})], False, []),
]


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(data_dir=str(DATA_DIR), results_dir=str(tmp_path_factory.mktemp("results")))


@pytest.fixture(scope="module")
def scenarios(settings: Settings) -> dict[str, Any]:
    found = {n: cls for n, cls in all_scenarios(settings).items() if n.startswith("tau2_mock__")}
    return {cls.tau2_id: cls().bind(settings) for cls in found.values()}


def test_census(scenarios: dict[str, Any]) -> None:
    assert sorted(scenarios) == sorted(TASKS) == sorted(UPSTREAM_GOLD)
    assert {type(s).name for s in scenarios.values()} == {f"tau2_mock__{t}" for t in TASKS}


@pytest.mark.parametrize("task_id", sorted(UPSTREAM_GOLD))
def test_gold_replay_hashes_are_upstreams(scenarios: dict[str, Any], settings: Settings, task_id: str) -> None:
    gold = seeding.gold_replay(scenarios[task_id], settings)
    if gold is None:  # no gold actions: the seeded state is the gold state
        states = seeding.prepare(scenarios[task_id], settings).states
        hashes = {side: db_hash(state["db"]) for side, state in states.items()}
    else:
        assert gold.failures == []
        hashes = gold.hashes
    assert (hashes["agent"], hashes["user"]) == UPSTREAM_GOLD[task_id]


def _replay(scenario: Any, settings: Settings, calls: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    prepared = seeding.prepare(scenario, settings)
    for requestor, name, arguments in calls:
        prepared.envs["user" if requestor == "user" else "agent"].call(name, arguments)
    return prepared.states


def _db_match(scenario: Any, settings: Settings, states: dict[str, Any]) -> bool:
    agent, user = UPSTREAM_GOLD[scenario.tau2_id]
    return db_hash(states["agent"]["db"]) == agent and db_hash(states["user"]["db"]) == user


def _gold_minus(task_id: str, index: int) -> list[tuple[str, str, dict[str, Any]]]:
    actions = TASKS[task_id]["evaluation_criteria"].get("actions") or []
    return [(a.get("requestor", "assistant"), a["name"], a["arguments"]) for i, a in enumerate(actions) if i != index]


@pytest.mark.parametrize("case", range(len(UPSTREAM_TRAJECTORIES)))
def test_trajectory_verdicts_agree_with_upstream(scenarios: dict[str, Any], settings: Settings, case: int) -> None:
    task_id, calls, upstream_match, upstream_env = UPSTREAM_TRAJECTORIES[case]
    if not calls and TASKS[task_id]["evaluation_criteria"].get("actions"):
        calls = _gold_minus(task_id, 0)  # the gold trajectory without its only action
    scenario = scenarios[task_id]
    states = _replay(scenario, settings, calls)
    assert _db_match(scenario, settings, states) is upstream_match
    verdicts = [
        evaluate_db_state_assertion("tau2_mock", dict(a), states["agent"]["db"], states["user"]["db"])
        for a in scenario.db_state_assertions or []
    ]
    if upstream_env is None:  # upstream's assertion raised: ours fails with the error
        assert verdicts and all(v["passed"] is False and "predicate_raised" in v["error"] for v in verdicts)
    else:
        assert [v["passed"] for v in verdicts] == upstream_env


@pytest.mark.parametrize("task_id", sorted(UPSTREAM_GOLD_REWARD))
def test_offline_oracle_reward_is_upstreams_gold_reward(
    scenarios: dict[str, Any], settings: Settings, task_id: str
) -> None:
    scenario = scenarios[task_id]
    ctx = participants.Context.for_scenario(scenario, settings)
    outcome = asyncio.run(
        run_scenario(scenario, agent=participants.make_agent(ctx), user=participants.make_user(ctx), settings=settings)
    )
    assert outcome.signals["tau2_reward"] == UPSTREAM_GOLD_REWARD[task_id]
    info = outcome.evidence["tau2_reward_info"]
    assert info["not_evaluated"] == []  # no mock task puts NL_ASSERTION in its basis
    gold_incomplete = "tau2_gold_incomplete" in type(scenario).tags
    assert outcome.is_successful is (not gold_incomplete)
    assert gold_incomplete is (UPSTREAM_GOLD_REWARD[task_id] == 0.0)


# ---- conformance: every task-schema feature of the mock tasks, present and exercised -----------


def _run_offline(scenario: Any, settings: Settings) -> Any:
    ctx = participants.Context.for_scenario(scenario, settings)
    return asyncio.run(
        run_scenario(scenario, agent=participants.make_agent(ctx), user=participants.make_user(ctx), settings=settings)
    )


def _initialization_data(s: Any, settings: Settings) -> None:
    states = seeding.prepare(s, settings).states
    assert states["agent"]["db"]["tasks"]["task_2"]["title"] == "Project Review"
    assert states["agent"]["db"]["users"]["user_1"] == {
        "user_id": "user_1",
        "name": "Test User",
        "tasks": ["task_1", "task_2"],
    }  # merged, not replaced
    assert states["user"]["db"] is states["agent"]["db"]  # upstream's quirk, kept for its hash


def _initialization_actions(s: Any, settings: Settings) -> None:
    prepared = seeding.prepare(s, settings)
    kinds = [step["kind"] for step in prepared.initialization]
    assert "function" in kinds
    sides = {step["env_type"] for step in prepared.initialization}
    assert sides  # recorded with their side and result
    assert all("result" in step for step in prepared.initialization)


def _message_history(s: Any, settings: Settings) -> None:
    history = s.message_history
    prepared = seeding.prepare(s, settings)
    assert prepared.states["agent"]["db"]["tasks"]["task_2"]["status"] == "pending"  # the history's call replayed
    seen: list[list[dict[str, Any]]] = []

    class Recorder(OracleAgent):
        async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
            seen.append(list(messages))
            return await super().respond(messages, tools)

    plan = GoldPlan(s.gold_actions() or [])
    conversation = Conversation(
        agent=Recorder(plan),
        user=ScriptedUser("Please mark it completed.", plan),
        agent_env=prepared.envs["agent"],
        user_env=prepared.envs.get("user"),
        agent_prompt="agent",
        user_prompt="user",
        greeting=s.agent_greeting,
        history=list(history),
    )
    result = asyncio.run(conversation.run())
    prefix = result.transcript[: len(history)]
    assert all(entry.get("history") is True for entry in prefix)
    assert [e["role"] for e in prefix] == [m["role"] for m in history]
    assert all(not e.get("history") for e in result.transcript[len(history) :])
    assert not any(e.get("content") == s.agent_greeting for e in result.transcript)  # no greeting after a history
    first_view = seen[0]
    assert first_view[1] == {"role": "user", "content": history[0]["content"]}
    assert first_view[2]["tool_calls"][0]["function"]["name"] == "create_task"
    assert first_view[3]["role"] == "tool" and first_view[3]["tool_call_id"] == "call_1"


def _env_assertions(s: Any, settings: Settings) -> None:
    outcome = _run_offline(s, settings)
    assert outcome.signals["db_state_assertion"] is not None


def _nl_assertions(s: Any, settings: Settings) -> None:
    assert s.nl_assertions == TASKS[s.tau2_id]["evaluation_criteria"]["nl_assertions"]


def _communicate_info(s: Any, settings: Settings) -> None:
    outcome = _run_offline(s, settings)
    checks = outcome.evidence["tau2_reward_info"]["communicate_checks"]
    assert s.communicate_info and [c["info"] for c in checks] == list(s.communicate_info)
    assert all(c["met"] for c in checks)  # the oracle states them


def _compare_args(s: Any, settings: Settings) -> None:
    outcome = _run_offline(s, settings)  # the oracle's transfer summary is the gold's; any would do
    assert outcome.signals["action_match"] is True
    other = s.action_match(
        [],
        [
            {
                "role": "assistant",
                "tool_calls": [{"id": "x", "name": "transfer_to_human_agents", "arguments": {"summary": "anything"}}],
            }
        ],
    )
    assert other.matched is True  # compare_args [] ignores the summary


def _impossible_task(s: Any, settings: Settings) -> None:
    outcome = _run_offline(s, settings)
    assert outcome.conversation.stop_reason == "transfer" and outcome.is_successful is True


def _user_tools(s: Any, settings: Settings) -> None:
    env = seeding.prepare(s, settings).envs["user"]
    assert [t["function"]["name"] for t in env.schemas()] == ["check_notifications", "dismiss_notification"]
    assert json.loads(env.call("check_notifications", {}).content)[0]["status"] == "unread"
    assert env.call("dismiss_notification", {"notification_id": "notif_9"}).content == (
        "Error: Notification notif_9 not found"
    )


def _reward_basis(s: Any, settings: Settings) -> None:
    basis = TASKS[s.tau2_id]["evaluation_criteria"].get("reward_basis")
    outcome = _run_offline(s, settings)
    assert outcome.evidence["tau2_reward_info"]["reward_basis"] == (basis or ["DB", "COMMUNICATE"])


def _no_criteria_actions(s: Any, settings: Settings) -> None:
    assert s.gold_actions() is None
    outcome = _run_offline(s, settings)
    assert outcome.signals["db_state_match"] is None  # nothing to replay: not applicable


def _string_instructions(s: Any, settings: Settings) -> None:
    prompt = s.get_user_prompt()
    assert TASKS[s.tau2_id]["user_scenario"]["instructions"] in prompt


def _persona(s: Any, settings: Settings) -> None:
    assert TASKS[s.tau2_id]["user_scenario"]["persona"] in s.get_user_prompt()


FEATURES: dict[str, tuple[Callable[[dict[str, Any]], bool], Callable[[Any, Settings], None]]] = {
    "initialization_data": (
        lambda t: bool((t.get("initial_state") or {}).get("initialization_data")),
        _initialization_data,
    ),
    "initialization_actions": (
        lambda t: bool((t.get("initial_state") or {}).get("initialization_actions")),
        _initialization_actions,
    ),
    "message_history": (lambda t: bool((t.get("initial_state") or {}).get("message_history")), _message_history),
    "env_assertions": (lambda t: bool(t["evaluation_criteria"].get("env_assertions")), _env_assertions),
    "nl_assertions": (lambda t: bool(t["evaluation_criteria"].get("nl_assertions")), _nl_assertions),
    "communicate_info": (lambda t: bool(t["evaluation_criteria"].get("communicate_info")), _communicate_info),
    "compare_args": (
        lambda t: any("compare_args" in a for a in t["evaluation_criteria"].get("actions") or []),
        _compare_args,
    ),
    "impossible_task": (lambda t: t["id"].startswith("impossible"), _impossible_task),
    "user_tools": (lambda t: "check_notifications" in json.dumps(t["user_scenario"]), _user_tools),
    "reward_basis": (lambda t: True, _reward_basis),
    "no_actions": (lambda t: "actions" not in t["evaluation_criteria"], _no_criteria_actions),
    "string_instructions": (lambda t: isinstance(t["user_scenario"]["instructions"], str), _string_instructions),
    "persona": (lambda t: bool(t["user_scenario"].get("persona")), _persona),
}


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_every_schema_feature_is_exercised(scenarios: dict[str, Any], settings: Settings, feature: str) -> None:
    has, check = FEATURES[feature]
    carriers = [task_id for task_id, task in TASKS.items() if has(task)]
    assert carriers, f"no mock task at the pin has {feature}"
    for task_id in carriers:
        check(scenarios[task_id], settings)


def test_every_task_key_is_covered_by_a_feature() -> None:
    """A key the pin's tasks use that no feature above names would be an untested part of the schema."""
    keys = set()
    for task in TASKS.values():
        keys |= {f"initial_state.{k}" for k in task.get("initial_state") or {}}
        keys |= {f"evaluation_criteria.{k}" for k in task["evaluation_criteria"]}
        keys |= {f"user_scenario.{k}" for k in task["user_scenario"]}
    named = {
        "initial_state.initialization_data", "initial_state.initialization_actions", "initial_state.message_history",
        "evaluation_criteria.actions", "evaluation_criteria.env_assertions", "evaluation_criteria.nl_assertions",
        "evaluation_criteria.communicate_info", "evaluation_criteria.reward_basis", "user_scenario.persona",
        "user_scenario.instructions",
    }  # fmt: skip
    assert keys == named


def test_history_replay_mismatch_is_a_data_error(scenarios: dict[str, Any], settings: Settings) -> None:
    from pytest_tau2.errors import DataError

    scenario = scenarios["update_task_with_message_history"]
    states = seeding.seed_states(scenario, settings)
    step = next(a for a in scenario.initialization_actions if a["kind"] == "message_history")
    with pytest.raises(DataError, match="the history recorded"):
        scenario.run_initialization_action({**step, "expected": '{"task_id": "task_9"}'}, states)
