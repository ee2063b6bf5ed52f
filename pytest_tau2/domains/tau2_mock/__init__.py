"""tau2 mock domain: tasks and users (agent side), a notification inbox (user side)."""

from __future__ import annotations

from pytest_tau2.domains.tau2_mock.db import read_db, read_user_db
from pytest_tau2.domains.tau2_mock.tools import AGENT_TOOL_CLASSES, USER_TOOL_CLASSES

__all__ = ["AGENT_TOOL_CLASSES", "USER_TOOL_CLASSES", "read_db", "read_user_db"]
