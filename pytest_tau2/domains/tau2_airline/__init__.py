"""The tau2 airline domain: the DB reader and the 14 agent tools."""

from pytest_tau2.domains.tau2_airline.db import read_db
from pytest_tau2.domains.tau2_airline.tools import ACTION_NAME_TO_TOOL, TOOL_CLASSES

__all__ = ["ACTION_NAME_TO_TOOL", "TOOL_CLASSES", "read_db"]
