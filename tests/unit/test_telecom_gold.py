"""Telecom gold replay: every base task's gold actions make all its db-state assertions pass.

Two replays, as upstream has two environments:

- the *predicted* replay (what a perfect conversation produces): initialization actions via
  ``run_function`` (sync after each), then the gold actions through an agent-side and a
  user-side :class:`Environment` whose ``after_success`` hook syncs, a final sync, then the
  env assertions through ``evaluate_db_state_assertion``. Upstream scores 114/114 this way.
- the *gold* replay upstream's evaluator builds for its DB hash: same initialization, then
  the gold actions **without any sync** (upstream's ``make_tool_call`` does not sync). The
  reference gold hashes were computed that way; on a perfect trajectory they differ from the
  predicted ones in most tasks (a payment request never reaches the phone, line state is
  not copied), which is why DB is not part of telecom's reward.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_tau2.domains.tau2_telecom import (
    AGENT_FUNCTIONS,
    AGENT_TOOL_CLASSES,
    USER_FUNCTIONS,
    USER_TOOL_CLASSES,
    read_db,
    read_user_db,
    run_function,
    sync_state,
)
from pytest_tau2.environment.db import copy_db, db_hash
from pytest_tau2.environment.env import Environment
from pytest_tau2.scoring.predicates import evaluate_db_state_assertion, list_registered_predicates

REAL_DATA = Path(os.environ.get("TAU2_DATA_DIR") or "/work/shared/tau2-data")
TELECOM = REAL_DATA / "tau2" / "domains" / "telecom"
pytestmark = pytest.mark.skipif(not TELECOM.is_dir(), reason=f"pinned tau2 data not found at {REAL_DATA}")


def _base_ids() -> list[str]:
    split = TELECOM / "split_tasks.json"
    if not split.is_file():
        return []
    return json.loads(split.read_text(encoding="utf-8"))["base"]


BASE_IDS = _base_ids()

REFUEL_TASK = "[mobile_data_issue]data_usage_exceeded|user_abroad_roaming_enabled_off[PERSONA:Easy]"
OVERDUE_TASK = "[service_issue]airplane_mode_on|overdue_bill_suspension[PERSONA:None]"
GOLD_HASHES = {
    REFUEL_TASK: (
        "ed58804f463f2bd376b6b4ede4df00ac7213ddde567c29c2db998112193af23d",
        "335858858a5676fb467e77d8cedd121b56d987851e3cd45cc4dd918d986214c3",
    ),
    OVERDUE_TASK: (
        "696ff759d03c2678069db9d64e7965eb5a215ff23ba8d88e8d1a5fbc637d98b4",
        "f27c4a613fd74fd2a9695894dd0e994dbfac1d1188b6174b2b079925215863f4",
    ),
}


@pytest.fixture(scope="module")
def tasks() -> dict[str, dict[str, Any]]:
    """tasks.json (14 MB, 2,285 tasks), parsed once for the module."""
    with (TELECOM / "tasks.json").open(encoding="utf-8") as handle:
        return {task["id"]: task for task in json.load(handle)}


@pytest.fixture(scope="module")
def initial() -> tuple[dict[str, Any], dict[str, Any]]:
    return read_db(TELECOM / "db.toml"), read_user_db(TELECOM / "user_db.toml")


def _initialize(task: dict[str, Any], initial: tuple[dict[str, Any], dict[str, Any]]) -> tuple[dict, dict]:
    db, user_db = copy_db(initial[0]), copy_db(initial[1])
    for action in task["initial_state"]["initialization_actions"]:
        run_function(db, user_db, action["env_type"], action["func_name"], action["arguments"])
    sync_state(db, user_db)  # upstream's set_state ends with a sync
    return db, user_db


def _environments(db: dict, user_db: dict, hook: Callable[[], None] | None) -> dict[str, Environment]:
    agent_tools = [cls({"db": db}) for cls in AGENT_TOOL_CLASSES]
    user_tools = [cls({"db": user_db}) for cls in USER_TOOL_CLASSES]
    return {
        "assistant": Environment("agent", {"db": db}, agent_tools, after_success=hook),
        "user": Environment("user", {"db": user_db}, user_tools, after_success=hook),
    }


def test_base_split_has_114_tasks() -> None:
    assert len(BASE_IDS) == 114


@pytest.mark.parametrize("task_id", BASE_IDS)
def test_gold_actions_pass_every_env_assertion(task_id: str, tasks: dict, initial: tuple) -> None:
    task = tasks[task_id]
    db, user_db = _initialize(task, initial)
    envs = _environments(db, user_db, lambda: sync_state(db, user_db))
    for action in task["evaluation_criteria"]["actions"]:
        result = envs[action["requestor"]].call(action["name"], action["arguments"])
        assert not result.error, f"gold action {action['action_id']} failed: {result.content}"
    sync_state(db, user_db)
    assertions = task["evaluation_criteria"]["env_assertions"]
    assert assertions
    for assertion in assertions:
        verdict = evaluate_db_state_assertion("tau2_telecom", assertion, db, user_db)
        assert verdict["passed"], verdict
        assert verdict["error"] is None and verdict["actual"] is True


@pytest.mark.parametrize("task_id", sorted(GOLD_HASHES))
def test_upstream_gold_hashes_without_sync(task_id: str, tasks: dict, initial: tuple) -> None:
    task = tasks[task_id]
    db, user_db = _initialize(task, initial)
    envs = _environments(db, user_db, hook=None)  # upstream's gold env: no sync after gold actions
    for action in task["evaluation_criteria"]["actions"]:
        envs[action["requestor"]].call(action["name"], action["arguments"])
    assert (db_hash(db), db_hash(user_db)) == GOLD_HASHES[task_id]


def test_gold_replay_with_sync_differs_from_upstreams_gold_hash(tasks: dict, initial: tuple) -> None:
    """Documented asymmetry: with sync, the payment request reaches the phone and is paid."""
    db, user_db = _initialize(tasks[OVERDUE_TASK], initial)
    envs = _environments(db, user_db, lambda: sync_state(db, user_db))
    gold = tasks[OVERDUE_TASK]["evaluation_criteria"]["actions"]
    texts = [envs[a["requestor"]].call(a["name"], a["arguments"]).content for a in gold]
    assert texts[2] == "Payment of 65.0 USD has been made for bill B1234321."
    assert (db_hash(db), db_hash(user_db)) != GOLD_HASHES[OVERDUE_TASK]


def test_all_tasks_name_only_known_functions_and_predicates(tasks: dict) -> None:
    registered = set(list_registered_predicates("tau2_telecom")["tau2_telecom"])
    tables = {"assistant": AGENT_FUNCTIONS, "user": USER_FUNCTIONS}
    assertion_names: set[str] = set()
    for task in tasks.values():
        for action in task["initial_state"]["initialization_actions"]:
            assert action["func_name"] in tables[action["env_type"]], action
        for assertion in task["evaluation_criteria"]["env_assertions"]:
            assert assertion["func_name"] in tables[assertion["env_type"]], assertion
            assertion_names.add(assertion["func_name"])
    assert assertion_names == {
        "assert_data_refueling_amount", "assert_no_overdue_bill", "assert_can_send_mms",
        "assert_mobile_data_status", "assert_internet_speed", "assert_service_status",
    }  # fmt: skip
    assert assertion_names <= registered


def test_every_gold_action_validates_against_its_tool_schema(tasks: dict) -> None:
    schemas = {("assistant", cls.name): cls.parameters for cls in AGENT_TOOL_CLASSES}
    schemas.update({("user", cls.name): cls.parameters for cls in USER_TOOL_CLASSES})
    seen: set[str] = set()
    for task in tasks.values():
        for action in task["evaluation_criteria"]["actions"]:
            key = json.dumps([action["requestor"], action["name"], action["arguments"]], sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            jsonschema.validate(action["arguments"], schemas[(action["requestor"], action["name"])])
    assert len(seen) >= 17
