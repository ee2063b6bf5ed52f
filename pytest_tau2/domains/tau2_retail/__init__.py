"""tau2 retail domain: the retail DB reader and the 16 upstream retail tools."""

from __future__ import annotations

from pytest_tau2.domains.tau2_retail.db import read_db
from pytest_tau2.domains.tau2_retail.tools import ACTION_NAME_TO_TOOL, TOOL_CLASSES

__all__ = ["ACTION_NAME_TO_TOOL", "TOOL_CLASSES", "read_db"]
