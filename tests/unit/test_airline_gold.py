"""Gold replay of all 50 airline tasks on the pinned data: no refusal, upstream's final hashes.

The DB is parsed once for the module and every task gets a ``copy_db`` copy (about 0.1 s
each against about 0.1 s for a parse), so the whole file runs in roughly 10 s.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.domains.tau2_airline import ACTION_NAME_TO_TOOL, TOOL_CLASSES, read_db
from pytest_tau2.environment import Environment, copy_db, db_hash

DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
AIRLINE = DATA_DIR / "tau2" / "domains" / "airline"
pytestmark = pytest.mark.skipif(
    not (AIRLINE / "db.json").is_file(), reason=f"pinned tau2 airline data not found under {DATA_DIR}"
)

INITIAL_HASH = "124e39a664b56402bcd09cb8a6a9cece6acb8462337c969799d5658e3250f263"
GOLD_HASHES = {
    "0": INITIAL_HASH,
    "1": INITIAL_HASH,
    "4": INITIAL_HASH,
    "7": "0087f8266f0f2fc2091ee4fabd9c137ed8b6c8751df09ec4f650756e4ae0ccf7",
    "8": "00766aa3e0341b497a623f93983c8d951b8d48ad541a15123a1e2b902e644a82",
    "14": "b4ea8effd45eee77a90b96a2b298a5dbe4e7d7fff9452c952f481f9a447facdf",
    "23": "b46d1bed5ba2b9865240d1073bc143e93d59be2c363ed26e1a45523e929e6e11",
    "33": "735ba8f15206b7fbf570fe68bd92ea75d7dd5ea04c87d5a53296d70d103f7b74",
}
"""Upstream's gold final hashes (reference §2.3)."""
UNCHANGED = set("0 1 2 3 4 5 6 9 10 13 26 27 28 31 34 36 38 41 43 45 46 47 48 49".split())
"""Tasks whose gold end state equals the initial DB (reference §1.6)."""


def _tasks() -> list[dict[str, Any]]:
    path = AIRLINE / "tasks.json"
    if not path.is_file():
        return []
    return json.loads(path.read_text(encoding="utf-8"))


TASKS = _tasks()


@pytest.fixture(scope="module")
def initial_db() -> dict[str, Any]:
    return read_db(AIRLINE / "db.json")


def _replay(db: dict[str, Any], task: dict[str, Any]) -> Environment:
    state = {"db": db}
    env = Environment("agent", state, [cls(state) for cls in TOOL_CLASSES])
    for action in (task.get("evaluation_criteria") or {}).get("actions") or []:
        assert action["name"] in ACTION_NAME_TO_TOOL
        result = env.call(action["name"], action["arguments"])
        assert not result.error, f"gold action {action['name']} of task {task['id']} failed: {result.content}"
    return env


def test_census() -> None:
    assert len(TASKS) == 50
    assert len(UNCHANGED) == 24
    assert set(GOLD_HASHES) <= {task["id"] for task in TASKS}


def test_initial_hash_and_timings(initial_db: dict[str, Any]) -> None:
    start = time.perf_counter()
    assert db_hash(initial_db) == INITIAL_HASH
    hashed = time.perf_counter() - start
    start = time.perf_counter()
    copy = copy_db(initial_db)
    copied = time.perf_counter() - start
    assert copy == initial_db and copy is not initial_db
    # Generous bounds (measured about 0.1 s each): the gold replay below relies on both being cheap.
    assert hashed < 2 and copied < 2, f"hash {hashed:.3f} s, copy {copied:.3f} s"


@pytest.mark.parametrize("task", TASKS, ids=[task["id"] for task in TASKS])
def test_gold_replay(initial_db: dict[str, Any], task: dict[str, Any]) -> None:
    db = copy_db(initial_db)
    env = _replay(db, task)
    final = db_hash(db)
    if task["id"] in GOLD_HASHES:
        assert final == GOLD_HASHES[task["id"]]
    if task["id"] in UNCHANGED:
        assert final == INITIAL_HASH
    else:
        assert final != INITIAL_HASH
    writes = [a for a in env.actions if ACTION_NAME_TO_TOOL[a["name"]].mutates_state]
    assert bool(writes) == (task["id"] not in UNCHANGED)


def test_gold_replay_leaves_the_shared_db_untouched(initial_db: dict[str, Any]) -> None:
    assert db_hash(initial_db) == INITIAL_HASH
