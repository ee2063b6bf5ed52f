"""Mock db-state predicates: upstream's ``assert_*`` functions of the mock toolkits, over a DB dict.

Registered under domain ``"tau2_mock"``; ``env_type`` ``"assistant"`` ones read the task DB,
``"user"`` ones the notification inbox. Like upstream, an unknown id raises (the verdict then
fails with the error) instead of returning False.
"""

from __future__ import annotations

from pytest_tau2.domains.tau2_mock.db import MockDB, MockUserDB
from pytest_tau2.errors import ToolError
from pytest_tau2.scoring.predicates import register_db_state_predicate

DOMAIN = "tau2_mock"

predicate = register_db_state_predicate(DOMAIN)


@predicate
def assert_number_of_tasks(db: MockDB, user_id: str, expected_number: int) -> bool:
    """The user has ``expected_number`` tasks."""
    if user_id not in db["users"]:
        raise ToolError(f"User {user_id} not found")
    return len(db["users"][user_id]["tasks"]) == expected_number


@predicate
def assert_task_status(db: MockDB, task_id: str, expected_status: str) -> bool:
    """The task has status ``expected_status``."""
    if task_id not in db["tasks"]:
        raise ToolError(f"Task {task_id} not found")
    return bool(db["tasks"][task_id]["status"] == expected_status)


@predicate
def assert_notification_status(db: MockUserDB, notification_id: str, expected_status: str) -> bool:
    """The notification has status ``expected_status`` (``unread`` or ``read``)."""
    if notification_id not in db["notifications"]:
        raise ToolError(f"Notification {notification_id} not found")
    return bool(db["notifications"][notification_id]["status"] == expected_status)
