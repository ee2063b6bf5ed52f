"""The mock domain's two DBs (tasks and users; the user's notification inbox) and the
initialization-data merge.

Upstream validates ``db.json`` / ``user_db.json`` into pydantic models and hashes their dump.
The pinned files already hold every field the dump shows, except the defaults a record may
omit (a task's ``description``, a notification's ``status`` and ``task_id``): the readers add
them, so :func:`pytest_tau2.environment.db.db_hash` equals upstream's hash.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict, cast

from pytest_tau2.data.parsing import load_json_file
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue


class MockTask(TypedDict):
    task_id: str
    title: str
    description: str | None
    status: str


class MockUser(TypedDict):
    user_id: str
    name: str
    tasks: list[str]


class MockDB(TypedDict):
    tasks: dict[str, MockTask]
    users: dict[str, MockUser]


class Notification(TypedDict):
    notification_id: str
    message: str
    status: str
    task_id: str | None


class MockUserDB(TypedDict):
    notifications: dict[str, Notification]


def _read(path: str | Path) -> dict[str, dict[str, JSONObject]]:
    return cast("dict[str, dict[str, JSONObject]]", load_json_file(path))


def read_db(path: str | Path) -> MockDB:
    """Parse the agent-side ``db.json`` (no caching: the scenario caches)."""
    db = _read(path)
    for task in db.get("tasks", {}).values():
        task.setdefault("description", None)
    return cast(MockDB, db)


def read_user_db(path: str | Path) -> MockUserDB:
    """Parse the user-side ``user_db.json`` (notifications default to unread, no task)."""
    db = _read(path)
    db.setdefault("notifications", {})
    for notification in db["notifications"].values():
        complete_notification(notification)
    return cast(MockUserDB, db)


def complete_notification(notification: JSONObject) -> JSONObject:
    notification.setdefault("status", "unread")
    notification.setdefault("task_id", None)
    return notification


def merge(target: dict[str, object], update: Mapping[str, JSONValue]) -> None:
    """Upstream's ``update_db``: a recursive merge where both sides are objects; any other value
    (a list, a string) replaces the old one. ``target`` is changed in place."""
    for key, value in update.items():
        current = target.get(key)
        if isinstance(value, Mapping) and isinstance(current, dict):
            merge(current, value)
        else:
            target[key] = json.loads(json.dumps(value))  # a private copy of the task's data
