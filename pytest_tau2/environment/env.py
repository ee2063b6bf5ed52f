"""One side's world during a scenario: its state, its tools, the calls it has seen.

:class:`Environment` is the single entry point for tool calls, from an LLM, an oracle, a
gold replay or an initialization action alike: it parses and validates arguments against the
tool's JSON Schema (or, for a tool with ``check_argument_types = False``, checks only their
names), runs the tool, serialises the result, records write actions and counts errors. A bad
call comes back as an error result, never as an exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, cast

from pytest_tau2.environment.db import copy_db
from pytest_tau2.environment.imports import import_whole
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.environment.tools import Tool
from pytest_tau2.errors import InfrastructureError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator


@dataclass(frozen=True)
class ToolResult:
    """What a tool call gave back: the text the caller sees and whether it was an error."""

    content: str
    error: bool = False
    ends_conversation: str | None = None
    """Set when the conversation must end after this result (``"exit"``, ``"transfer"``)."""


@dataclass
class Environment:
    """The state and tools of one side (``"agent"`` or ``"user"``) of a scenario."""

    side: str
    state: dict[str, object] = field(repr=False)
    tools: list[Tool] = field(repr=False)
    actions: list[JSONObject] = field(default_factory=list)
    """Recorded write actions, ``{"name", "arguments"}``, in call order."""
    tool_errors: int = 0
    after_success: Callable[[], None] | None = None
    """Called after every successful call (telecom keeps phone and carrier in sync with it)."""
    schema_overrides: Mapping[str, JSONObject] = field(default_factory=dict, repr=False)
    """Schemas sent in place of a tool's own, by tool name (``--tau2-prompts upstream``: upstream's)."""

    def __post_init__(self) -> None:
        self._by_name: dict[str, Tool] = {}
        for tool in self.tools:
            self._by_name[tool.name] = tool
        for tool in self.tools:
            if tool.action_name:
                self._by_name.setdefault(tool.action_name, tool)

    @property
    def db(self) -> object:
        return self.state.get("db")

    def schemas(self) -> list[JSONObject]:
        """The tools as an LLM sees them, in declaration order."""
        return offered_schemas(self.tools, self.schema_overrides)

    def mutates(self, name: str) -> bool:
        """Whether a call of ``name`` may change the state (a write tool that does not end the conversation)."""
        tool = self._by_name.get(name)
        return tool is not None and tool.mutates_state and not tool.ends_conversation

    def has_tool(self, name: str) -> bool:
        return name in self._by_name

    def writes(self, name: str) -> bool:
        """Whether the tool called ``name`` may change the state (unknown names: no)."""
        tool = self._by_name.get(name)
        return tool is not None and tool.mutates_state

    def call(self, name: str, arguments: Mapping[str, JSONValue] | str | None) -> ToolResult:
        """Run one tool call; every failure becomes an error result (and is counted)."""
        tool = self._by_name.get(name)
        if tool is None:
            return self._error(f"Tool '{name}' not found.")
        parsed = parse_arguments(arguments)
        if parsed is _TOO_DEEP:
            return self._error(f"{_TOO_DEEP} for '{name}'")
        if isinstance(parsed, str):
            return self._error(f"arguments for '{name}' are not valid JSON: {parsed}")
        if tool.check_argument_types:
            problem = _schema_problem(type(tool), parsed)
            if problem is not None:
                return self._error(f"invalid arguments for '{name}': {problem}")
        else:
            problem = _names_problem(type(tool), parsed)
            if problem is not None:
                return self._error(f"{tool.name}() {problem}")
        parsed = copy_db(parsed)  # the tool may store what it was given; the caller's object stays untouched
        try:
            value = tool.run(**parsed)
        except InfrastructureError:
            # Not the agent's doing (a model a tool calls is down, a cassette miss): the scenario
            # is an error, never a tool error the agent reads and works around.
            raise
        except Exception as exc:  # a tool refusing a call is part of the conversation
            return self._error(str(exc) or type(exc).__name__)
        except (SystemExit, KeyboardInterrupt) as exc:
            # Not a refusal the model could read: the tool tried to end the process. The
            # scenario is an error naming the tool; the sweep goes on.
            what = f"called sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else "raised KeyboardInterrupt"
            raise InfrastructureError(
                f"the {self.side}'s tool {tool.name!r} ({_qualified(tool)}) {what} while running a call: a tool "
                "refuses a call by raising an exception (ToolError), it never ends the process"
            ) from None
        try:
            text = serialize_result(value)
        except Exception as exc:  # tuple keys, a cycle, a failing __str__: the tool's bug, named
            raise InfrastructureError(
                f"the {self.side}'s tool {tool.name!r} ({_qualified(tool)}) returned a value that cannot be "
                f"written as text: {type(exc).__name__}: {_describe(exc)} (return a string, a number, or JSON data)"
            ) from None
        if tool.action_name:
            self.actions.append({"name": tool.action_name, "arguments": copy_db(parsed)})
        if self.after_success is not None:
            self.after_success()
        return ToolResult(text, False, tool.ends_conversation)

    def runs_inline(self, name: str) -> bool:
        """Whether a call of ``name`` runs on the caller's thread: the built-in domains' tools (fast,
        pure Python) do; a user domain's tools run off the event loop (:mod:`conversation.loop`)."""
        tool = self._by_name.get(name)
        return tool is None or (_built_in(type(tool)) and not type(tool).slow)

    def _error(self, message: str) -> ToolResult:
        self.tool_errors += 1
        return ToolResult(f"Error: {message}", True)


def offered_schemas(tools: Sequence[Tool | type[Tool]], overrides: Mapping[str, JSONObject]) -> list[JSONObject]:
    """The tools' schemas as an LLM is sent them: each tool's own, or its override (by name), in the
    overrides' order when there are any; a tool they lack (a banking retrieval variant's own) comes first."""
    if not overrides:
        return [tool.openai_schema() for tool in tools]
    order = {name: index for index, name in enumerate(overrides)}
    ordered = sorted(tools, key=lambda tool: order.get(tool.name, -1))
    return [overrides.get(tool.name) or tool.openai_schema() for tool in ordered]


def _qualified(tool: Tool) -> str:
    cls = type(tool)
    return f"{cls.__module__}.{cls.__qualname__}"


def _describe(exc: BaseException) -> str:
    try:
        return str(exc)[:300]
    except Exception:  # an exception whose own __str__ fails
        return "(its message cannot be shown)"


_BUILT_IN: dict[type, bool] = {}


def _built_in(cls: type) -> bool:
    known = _BUILT_IN.get(cls)
    if known is None:
        known = _BUILT_IN[cls] = cls.__module__.startswith("pytest_tau2.")
    return known


MAX_ARGUMENT_DEPTH = 64
"""How deeply a tool call's arguments may nest (objects and lists). Real calls nest a few levels;
a model sending hundreds would break every recursive walk after it (copying, schema checks,
writing the transcript), so such a call is refused as a tool error the model sees."""


def parse_arguments(arguments: Mapping[str, JSONValue] | str | None) -> JSONObject | str:
    """The arguments as a dict, or a string describing why they could not be parsed."""
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        if arguments.count("[") + arguments.count("{") > MAX_ARGUMENT_DEPTH and _too_deep(arguments):
            return _TOO_DEEP
        try:
            value = json.loads(arguments)
        except json.JSONDecodeError as exc:
            return f"{exc.msg} at position {exc.pos} in {arguments[:200]!r}"
        except RecursionError:
            return _TOO_DEEP
        if not isinstance(value, dict):
            return f"expected a JSON object, got {type(value).__name__}"
        return value
    return dict(arguments)


_TOO_DEEP = f"arguments nested too deeply (more than {MAX_ARGUMENT_DEPTH} levels of objects and lists)"


def _too_deep(text: str) -> bool:
    """Whether the JSON text opens more than MAX_ARGUMENT_DEPTH brackets at once (outside strings),
    read without parsing (json.loads itself recurses once per level)."""
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_ARGUMENT_DEPTH:
                return True
        elif char in "]}":
            depth -= 1
    return False


_VALIDATORS: dict[type[Tool], Validator] = {}


def warm_up() -> None:
    """Import what checking a tool call's arguments needs (jsonschema, ~30 ms), ahead of the first
    call: the prefetcher does it while its first model requests are out (run/prefetch.py)."""
    import_whole("jsonschema.exceptions")
    import_whole("jsonschema.validators")


def _validator(tool_cls: type[Tool]) -> Validator:
    # Built once per tool class: schema checking is on the hot path of every call.
    validator = _VALIDATORS.get(tool_cls)
    if validator is None:
        # here, not at import: a process that calls no tool never pays for it (whole or not at all)
        validators = import_whole("jsonschema.validators")
        validator_cls = validators.validator_for(tool_cls.parameters)
        validator = _VALIDATORS[tool_cls] = validator_cls(tool_cls.parameters)
    return validator


def _schema_problem(tool_cls: type[Tool], arguments: JSONObject) -> str | None:
    exceptions = import_whole("jsonschema.exceptions")
    error = exceptions.best_match(_validator(tool_cls).iter_errors(arguments))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{error.message}" + (f" (at '{where}')" if where else "")


def _names_problem(tool_cls: type[Tool], arguments: JSONObject) -> str | None:
    """What is wrong with the argument *names* (the values are the tool's business), in
    Python's words for a bad call: unknown ones first, then missing required ones."""
    schema = tool_cls.parameters
    # An object schema (the tool's own declaration): "properties" an object, "required" a list of names.
    properties = cast(JSONObject, schema.get("properties", {}))
    if schema.get("additionalProperties", True) is False:
        unknown = [key for key in arguments if key not in properties]
        if unknown:
            return f"got an unexpected keyword argument {unknown[0]!r}"
    missing = [key for key in cast("list[str]", schema.get("required", [])) if key not in arguments]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        return f"missing {len(missing)} required argument{plural}: " + ", ".join(repr(key) for key in missing)
    return None


def serialize_result(value: object) -> str:
    """Turn a tool's return value into the text the caller sees.

    Same observable rule as upstream tau2: a string passes through unchanged, a bare number
    or bool becomes its ``str()``, anything else becomes JSON (insertion order, ASCII,
    ``default=str`` so dates print as ``2025-02-25``). A tool whose upstream counterpart
    returns a plain dict of stringified numbers builds that dict itself.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, date):
        return value.isoformat()
    return json.dumps(value, default=str)
