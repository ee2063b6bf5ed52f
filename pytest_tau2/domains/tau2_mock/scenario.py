"""``Tau2MockBaseScenario``: tau2's 10-task conformance domain (tasks, users, notifications).

Every task-schema feature appears in these tasks at least once, so this port is also the
conformance test of the task loader and the evaluator: initialization data, initialization
actions on either side, a message history, env assertions on either side, NL assertions,
``communicate_info``, ``compare_args`` and every reward basis the pin uses.

Initialization runs in upstream's order, as the entries of :attr:`initialization_actions`
(each tagged with its ``kind``, recorded in the result): the task's ``initialization_data``
merged into the DBs, its ``initialization_actions``, then the state-changing tool calls of
its ``message_history`` replayed through the real tools, each checked against the recorded
tool result (a mismatch is a data error, as upstream's strict replay).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import cast

from pytest_tau2.domains.tau2_common.base import Tau2BaseScenario
from pytest_tau2.domains.tau2_common.tasks import cached_db
from pytest_tau2.domains.tau2_mock import predicates
from pytest_tau2.domains.tau2_mock.db import MockDB, MockUserDB, merge, read_db, read_user_db
from pytest_tau2.domains.tau2_mock.tools import (
    AGENT_TOOL_CLASSES,
    USER_NAMESPACE,
    USER_TOOL_CLASSES,
    add_notification,
    create_task,
)
from pytest_tau2.environment.env import Environment
from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.environment.tools import Tool
from pytest_tau2.errors import DataError
from pytest_tau2.scenario.model import SuccessSignal

FUNCTIONS: dict[str, dict[str, Callable[..., object]]] = {
    "agent": {
        "create_task": create_task,
        "assert_number_of_tasks": predicates.assert_number_of_tasks,
        "assert_task_status": predicates.assert_task_status,
    },
    "user": {
        "add_notification": add_notification,
        "assert_notification_status": predicates.assert_notification_status,
    },
}
"""The non-tool functions an initialization action may name, per side (upstream's toolkit methods)."""

SIDES = {"assistant": "agent", "agent": "agent", "user": "user"}

GOLD_INCOMPLETE = frozenset({"update_task_with_history_and_env_assertions", "update_task_with_user_tools"})
"""Tasks whose gold actions do not reach their own criteria: upstream's evaluator scores their gold
trajectory 0.0 (the first has no actions at all but asserts a completed task; the second asserts
a notification the gold never dismisses, and a run that dismisses it changes the user DB the gold
replay compares with, so no trajectory scores 1.0 upstream). Tagged ``tau2_gold_incomplete``."""


class Tau2MockBaseScenario(Tau2BaseScenario):
    """Mock: the success signals follow the task's ``reward_basis`` (see docs/tau2-mock.md)."""

    tau2_domain = "mock"
    agent_tool_classes = AGENT_TOOL_CLASSES
    user_tool_classes = USER_TOOL_CLASSES
    user_tool_namespace = USER_NAMESPACE
    guidelines_file = "tau2/user_simulator/simulation_guidelines_tools.md"

    @classmethod
    def task_tags(cls, task_id: str) -> tuple[str, ...]:
        return ("tau2_gold_incomplete",) if task_id in GOLD_INCOMPLETE else ()

    @property
    def predicate_domain(self) -> str:
        return "tau2_mock"

    @cached_property
    def success_signals(self) -> tuple[SuccessSignal, ...]:  # type: ignore[override]
        basis = self.criteria.get("reward_basis") or ["DB", "COMMUNICATE"]
        signals = []
        if "DB" in basis and self.gold_actions() is not None:
            signals.append(SuccessSignal.DB_STATE_MATCH)
        if "ENV_ASSERTION" in basis and self.db_state_assertions:
            signals.append(SuccessSignal.DB_STATE_ASSERTION)
        if "ACTION" in basis and self.gold_actions():
            signals.append(SuccessSignal.ACTION_MATCH)
        if "NL_ASSERTION" in basis and self.nl_assertions:
            signals.append(SuccessSignal.NL_ASSERTION)
        signals.append(SuccessSignal.CLEAN_EXIT)
        return tuple(signals)

    def setup_shared_state(self, state: dict[str, object], side: str) -> None:
        state["db_path"] = "tau2/domains/mock/" + ("db.json" if side == "agent" else "user_db.json")

    def read_db(self, path: Path, side: str) -> MockDB | MockUserDB:
        return cached_db(path, read_db) if side == "agent" else cached_db(path, read_user_db)

    # ---- initial state ------------------------------------------------------------------------

    @property
    def message_history(self) -> list[JSONObject] | None:  # type: ignore[override]
        state = self.task.get("initial_state") or {}
        history = state.get("message_history")
        return [dict(message) for message in history] if history else None

    @property
    def initialization_actions(self) -> list[JSONObject] | None:  # type: ignore[override]
        state = self.task.get("initial_state") or {}
        steps: list[JSONObject] = []
        data = state.get("initialization_data") or {}
        for key, env_type in (("agent_data", "assistant"), ("user_data", "user")):
            if data.get(key) is not None:
                steps.append({"kind": "initialization_data", "env_type": env_type, "arguments": data[key]})
        for action in state.get("initialization_actions") or []:
            steps.append({"kind": "function", **cast(JSONObject, action)})
        steps.extend(_history_calls(state.get("message_history") or []))
        return steps or None

    def run_initialization_action(
        self, action: Mapping[str, object], states: Mapping[str, Mapping[str, object]]
    ) -> object:
        kind = action.get("kind", "function")
        side = SIDES.get(str(action.get("env_type", "assistant")))
        if side is None:
            raise DataError(f"{self.name}: initialization action with unknown env_type {action.get('env_type')!r}")
        state = cast("dict[str, object]", states[side])
        arguments = dict(cast(JSONObject, action.get("arguments") or {}))
        if kind == "initialization_data":
            merge(cast("dict[str, object]", state["db"]), arguments)
            # Upstream points the other toolkit at the DB it just rebuilt: both sides then hold
            # (and hash) the same DB. Kept, so the user-side hash is upstream's.
            other = "user" if side == "agent" else "agent"
            if other in states:
                cast("dict[str, object]", states[other])["db"] = state["db"]
            return None
        name = str(action.get("func_name") or action.get("name"))
        if kind == "message_history":
            return self._replay_history_call(side, state, name, arguments, action.get("expected"))
        tool = self._tool(side, name)
        if tool is not None:
            return tool(state).run(**arguments)
        function = FUNCTIONS[side].get(name)
        if function is None:
            raise DataError(f"{self.name}: no {side}-side function {name!r} for an initialization action")
        return function(state["db"], **arguments)

    def _tool(self, side: str, name: str) -> type[Tool] | None:
        classes = self.agent_tool_classes if side == "agent" else self.user_tool_classes
        return next((cls for cls in classes if cls.name == name), None)

    def _replay_history_call(
        self, side: str, state: dict[str, object], name: str, arguments: JSONObject, expected: object
    ) -> object:
        tool = self._tool(side, name)
        if tool is None or not tool.mutates_state:
            return None  # upstream: unknown tools and reads are not replayed
        result = Environment(side, state, [tool(state)]).call(name, arguments)
        if _parsed(result.content) != _parsed(expected):
            raise DataError(
                f"{self.name}: replaying the message history's {name}({json.dumps(arguments)}) returned "
                f"{result.content!r}, the history recorded {expected!r}"
            )
        return result.content


def _parsed(content: object) -> object:
    if isinstance(content, str):
        try:
            return json.loads(content)
        except json.JSONDecodeError:
            return content
    return content


def _history_calls(history: list[JSONObject]) -> list[JSONObject]:
    """Each tool call of ``history`` with the result recorded after it (upstream pairs them by id)."""
    results = {str(m.get("id")): m.get("content") for m in history if m.get("role") == "tool"}
    steps: list[JSONObject] = []
    for message in history:
        for call in cast("list[JSONObject]", message.get("tool_calls") or []):
            env_type = "user" if message.get("role") == "user" else "assistant"
            steps.append(
                {
                    "kind": "message_history",
                    "env_type": env_type,
                    "func_name": call.get("name"),
                    "arguments": call.get("arguments") or {},
                    "expected": results.get(str(call.get("id"))),
                }
            )
    return steps
