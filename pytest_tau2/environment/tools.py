"""Tools: what an agent (or a simulated user) can call, and the registry that finds them.

A tool is a class with a JSON Schema for its arguments (the same schema the LLM sees) and a
``run(**arguments)`` method working on the side's state (``self.db`` is ``state["db"]``).
Classes register themselves under ``(namespace, class name)``; a domain's scenario names the
classes it offers, and a name not found in the domain namespace falls back to the default
namespace (where :class:`EndConversationTool` lives).

Two names per tool, on purpose:

- ``name`` is what the LLM sees and calls (upstream snake_case for tau2, e.g.
  ``get_order_details``; the class name by default);
- ``action_name`` is set on *write* tools only: a successful call is recorded as the action
  ``{"name": action_name, "arguments": ...}`` used by ACTION_MATCH and the gold replay.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.errors import ToolDefinitionError

DEFAULT_NAMESPACE = "default"

# (namespace, class name) -> tool class
TOOL_REGISTRY: dict[tuple[str, str], type[Tool]] = {}

EMPTY_PARAMETERS: JSONObject = {"type": "object", "properties": {}, "required": []}


class Tool:
    """Base class of every tool. Subclasses set the class attributes and implement ``run``.

    Raise :class:`pytest_tau2.errors.ToolError` (or any exception) to refuse a call: the
    caller gets ``Error: <message>`` as the tool result, never an exception.
    """

    namespace: ClassVar[str] = DEFAULT_NAMESPACE
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    parameters: ClassVar[JSONObject] = EMPTY_PARAMETERS
    action_name: ClassVar[str | None] = None
    """Set on write tools: successful calls are recorded as actions under this name."""
    mutates_state: ClassVar[bool] = False
    """True when a call may change the DB (the replay of a trajectory re-executes these)."""
    slow: ClassVar[bool] = False
    """True: a call waits on something outside the process (a model, a sandbox), so it runs off
    the event loop even for a built-in tool (:meth:`Environment.runs_inline`)."""
    ends_conversation: ClassVar[str | None] = None
    """A stop reason (``"exit"``, ``"transfer"``): the conversation ends once the result is committed."""
    abstract: ClassVar[bool] = False
    """A domain base class sets ``abstract = True`` in its own body to stay out of the registry."""
    check_argument_types: ClassVar[bool] = True
    """True: every call's arguments are validated against ``parameters`` (JSON Schema) first.
    False: only their names are checked (unknown or missing ones refuse the call); the values
    reach ``run`` as given and the tool converts them itself. The tau2 domains use this to
    accept and refuse exactly what upstream does, which validates nothing at call time."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("abstract", False):
            return
        if not cls.name:  # inherited names count: a mixin or a parent tool may give it
            cls.name = cls.__name__
        _register(cls)

    def __init__(self, state: dict[str, object], config: Mapping[str, object] | None = None) -> None:
        self.state = state
        self.config: Mapping[str, object] = config or {}

    # The two extension edges keep ``Any`` on purpose: a tool's DB is whatever its scenario's
    # ``read_db`` made (a domain base narrows it: ``RetailTool.db`` is a ``RetailDB``), and
    # ``run`` is overridden with each tool's own keyword arguments.
    @property
    def db(self) -> Any:
        """The side's database (``state["db"]``)."""
        return self.state["db"]

    def run(self, *args: Any, **arguments: Any) -> object:  # pragma: no cover - interface
        raise NotImplementedError(f"{type(self).__name__}.run is not implemented")

    @classmethod
    def openai_schema(cls) -> JSONObject:
        """The function schema sent to an LLM (OpenAI tools format)."""
        return {
            "type": "function",
            "function": {"name": cls.name, "description": cls.description, "parameters": cls.parameters},
        }


def _register(cls: type[Tool]) -> None:
    key = (cls.namespace, cls.__name__)
    existing = TOOL_REGISTRY.get(key)
    if existing is not None and _qualified(existing) != _qualified(cls):
        raise ToolDefinitionError(
            f"tool class name {cls.__name__!r} is registered twice in namespace {cls.namespace!r}: "
            f"{_qualified(existing)} and {_qualified(cls)}; rename one of them"
        )
    TOOL_REGISTRY[key] = cls


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def resolve_tool(namespace: str, class_name: str) -> type[Tool]:
    """Find a tool class in ``namespace``, falling back to the default namespace."""
    for ns in (namespace, DEFAULT_NAMESPACE):
        cls = TOOL_REGISTRY.get((ns, class_name))
        if cls is not None:
            return cls
    known = sorted(name for ns, name in TOOL_REGISTRY if ns in (namespace, DEFAULT_NAMESPACE))
    raise ToolDefinitionError(
        f"no tool class {class_name!r} in namespace {namespace!r} or {DEFAULT_NAMESPACE!r}; "
        f"known there: {', '.join(known) or '(none)'}"
    )


class EndConversationTool(Tool):
    """Ends the conversation cleanly. Every domain offers it (found by default-namespace fallback)."""

    name = "EndConversationTool"
    description = (
        "End the conversation. Call this once the customer's requests are fully handled and you "
        "have said goodbye, or when the customer wants to stop."
    )
    parameters = EMPTY_PARAMETERS
    ends_conversation = "exit"

    def run(self, **arguments: object) -> str:
        return "Conversation ended."
