"""The mock domain's tools: four for the agent, two for the user, plus the non-tool functions
that initialization actions and env assertions call.

Behaviour is upstream's (pin ``a2c0247``): ids are matched exactly, a new task is
``task_<number of tasks + 1>``, ``update_task_status`` stores the status it is given (upstream
never validates the assignment), and a title or description must be a string (upstream builds
a pydantic record from them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

from pytest_tau2.domains.tau2_common.tools import Tau2Tool, TransferMixin, upstream_model
from pytest_tau2.domains.tau2_mock.db import MockDB, MockTask, MockUser, MockUserDB, Notification
from pytest_tau2.environment.db import peek_values
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.environment.tools import Tool
from pytest_tau2.errors import ToolError

NAMESPACE = "tau2_mock"
USER_NAMESPACE = "tau2_mock_user"


def _schema(required: list[str], **properties: JSONObject) -> JSONObject:
    schemas: JSONObject = dict(properties)  # each a JSON Schema object
    return {
        "type": "object",
        "properties": schemas,
        "required": list[JSONValue](required),
        "additionalProperties": False,
    }


class _TaskRecord(BaseModel):
    task_id: str
    title: str
    description: str | None = None
    status: str


class _NotificationRecord(BaseModel):
    notification_id: str
    message: str
    status: str = "unread"
    task_id: str | None = None


class MockTool(Tau2Tool):
    abstract = True
    namespace = NAMESPACE

    if TYPE_CHECKING:

        @property
        def db(self) -> MockDB: ...


class CreateTaskTool(MockTool):
    name = "create_task"
    action_name = "create_task"
    mutates_state = True
    description = "Create a new task for a user. Fails when the user is not found."
    parameters = _schema(
        ["user_id", "title"],
        user_id={"type": "string", "description": "The id of the user creating the task, e.g. 'user_1'."},
        title={"type": "string", "description": "The title of the task."},
        description={"type": "string", "description": "An optional description of the task."},
    )

    def run(self, user_id: str, title: str, description: str | None = None) -> MockTask:
        return create_task(self.db, user_id, title, description)


class GetUsersTool(MockTool):
    name = "get_users"
    description = "Get all users in the database."
    parameters = _schema([])

    def run(self) -> list[MockUser]:
        return list(peek_values(self.db["users"]))


class UpdateTaskStatusTool(MockTool):
    name = "update_task_status"
    action_name = "update_task_status"
    mutates_state = True
    description = "Update the status of a task ('pending' or 'completed'). Fails when the task is not found."
    parameters = _schema(
        ["task_id", "status"],
        task_id={"type": "string", "description": "The id of the task, e.g. 'task_1'."},
        status={"type": "string", "enum": ["pending", "completed"], "description": "The new status."},
    )

    def run(self, task_id: str, status: str) -> MockTask:
        tasks = self.db["tasks"]
        if task_id not in tasks:
            raise ToolError(f"Task {task_id} not found")
        task = tasks[task_id]
        task["status"] = status
        return task


class TransferToHumanAgentsTool(TransferMixin, MockTool):
    """No DB effect; ends the conversation (shared with the other tau2 ports)."""


class MockUserTool(Tool):
    abstract = True
    namespace = USER_NAMESPACE
    check_argument_types = False

    if TYPE_CHECKING:

        @property
        def db(self) -> MockUserDB: ...


class CheckNotificationsTool(MockUserTool):
    name = "check_notifications"
    description = "Check all notifications in your inbox."
    parameters = _schema([])

    def run(self) -> list[Notification]:
        return list(peek_values(self.db["notifications"]))


class DismissNotificationTool(MockUserTool):
    name = "dismiss_notification"
    action_name = "dismiss_notification"
    mutates_state = True
    description = "Dismiss (mark as read) a notification. Fails when the notification is not found."
    parameters = _schema(
        ["notification_id"],
        notification_id={"type": "string", "description": "The id of the notification, e.g. 'notif_1'."},
    )

    def run(self, notification_id: str) -> str:
        notifications = self.db["notifications"]
        if notification_id not in notifications:
            raise ToolError(f"Notification {notification_id} not found")
        notifications[notification_id]["status"] = "read"
        return f"Notification {notification_id} dismissed"


AGENT_TOOL_CLASSES: tuple[type[Tool], ...] = (
    CreateTaskTool,
    GetUsersTool,
    UpdateTaskStatusTool,
    TransferToHumanAgentsTool,
)
USER_TOOL_CLASSES: tuple[type[Tool], ...] = (CheckNotificationsTool, DismissNotificationTool)


# ---- functions (initialization actions and env assertions call these by name) --------------


def create_task(db: MockDB, user_id: str, title: str, description: str | None = None) -> MockTask:
    if user_id not in db["users"]:
        raise ToolError(f"User {user_id} not found")
    task_id = f"task_{len(db['tasks']) + 1}"
    record = upstream_model(
        _TaskRecord, {"task_id": task_id, "title": title, "description": description, "status": "pending"}
    )
    db["tasks"][task_id] = record  # type: ignore[assignment]  # the model's dump: a MockTask
    db["users"][user_id]["tasks"].append(task_id)
    return db["tasks"][task_id]


def add_notification(db: MockUserDB, notification_id: str, message: str, task_id: str | None = None) -> Notification:
    record = upstream_model(
        _NotificationRecord, {"notification_id": notification_id, "message": message, "task_id": task_id}
    )
    db["notifications"][notification_id] = record  # type: ignore[assignment]  # the model's dump
    return db["notifications"][notification_id]
