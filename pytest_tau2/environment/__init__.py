"""The world a scenario runs in: DB state, tools, and the calls made on them."""

from pytest_tau2.environment.db import canonical_json, copy_db, db_diff, db_hash, peek, peek_items, peek_values
from pytest_tau2.environment.env import Environment, ToolResult, serialize_result
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.environment.tools import (
    DEFAULT_NAMESPACE,
    TOOL_REGISTRY,
    EndConversationTool,
    Tool,
    resolve_tool,
)

__all__ = [
    "DEFAULT_NAMESPACE",
    "TOOL_REGISTRY",
    "EndConversationTool",
    "Environment",
    "JSONObject",
    "JSONValue",
    "Tool",
    "ToolResult",
    "canonical_json",
    "copy_db",
    "db_diff",
    "db_hash",
    "peek",
    "peek_items",
    "peek_values",
    "resolve_tool",
    "serialize_result",
]
