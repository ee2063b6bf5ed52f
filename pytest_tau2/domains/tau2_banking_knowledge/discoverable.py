"""Discoverable tools: tools the agent (or, handed over by the agent, the user) can only use
after finding them in the documents.

Each one is a plain function ``fn(db, **arguments) -> str`` registered with its name, a
description, its parameters and whether it changes the DB. Upstream's rules, kept here:

- the agent unlocks a tool (``unlock_discoverable_agent_tool``: remembered for the run, not in
  the DB), then calls it with a JSON object string (``call_discoverable_agent_tool``), parsed
  with every integer read as a float, so ``33`` and ``33.0`` write the same records;
- a call is logged in the ``agent_discoverable_tools`` table when the tool writes, or when its
  name is in the task's read allowlist (the discoverable tools the gold trajectory calls);
  the log id depends on the tool's name only, so repeated calls log once;
- a refusal is the tool's text answer (``Error: ...``), not an error result, and is logged
  like any call; only a ``TypeError`` (bad argument names or types) skips the log.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pytest_tau2.environment.jsontypes import JSONObject

Run = Callable[..., str]


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    description: str
    required: bool = True


@dataclass(frozen=True)
class Discoverable:
    name: str
    description: str
    params: tuple[Param, ...]
    mutates: bool
    run: Run = field(repr=False)
    result: str = "Action completed successfully."
    """The one-line result upstream's docstring promises (shown on unlock and hand-over)."""

    def card(self, texts: JSONObject | None = None) -> str:
        """The text an agent sees for this tool (upstream's layout); with ``texts`` (upstream's
        description and parameters of this tool, from the tau2 view) in upstream's words."""
        if texts is None:
            return card_text(
                self.name, self.description, [(p.name, p.type, p.required, p.description) for p in self.params]
            )
        params = cast("dict[str, dict[str, Any]]", texts.get("parameters") or {})
        rows = [
            (n, str(p.get("type")), bool(p.get("required", True)), str(p.get("description"))) for n, p in params.items()
        ]
        return card_text(self.name, str(texts.get("description")), rows)

    def shown_description(self, texts: JSONObject | None = None) -> str:
        """The description an agent sees: upstream's (``texts``, from the tau2 view) or ours."""
        return self.description if texts is None else str(texts.get("description"))

    def required_missing(self, arguments: JSONObject) -> str | None:
        signature = inspect.signature(self.run)
        for name, parameter in list(signature.parameters.items())[1:]:
            if parameter.default is inspect.Parameter.empty and name not in arguments:
                return name
        return None

    def accepts(self, name: str) -> bool:
        return name in list(inspect.signature(self.run).parameters)[1:]


def card_text(name: str, description: str, params: list[tuple[str, str, bool, str]]) -> str:
    """A discoverable tool's card: its name, description and one line per parameter."""
    lines = [
        f"  - {n}: {kind} ({'required' if required else 'optional'}) - {text}" for n, kind, required, text in params
    ]
    body = "\n".join(lines) if lines else "  (no parameters)"
    return f"Tool: {name}\nDescription: {description}\nParameters:\n{body}"


TEXTS = "discoverable_texts"
"""Key of the agent state holding upstream's discoverable-tool texts (``{"agent": {name: {description,
parameters}}, "user": {...}}``, from the tau2 view under ``--tau2-prompts upstream``; absent: ours)."""


def upstream_texts(state: Mapping[str, object], side: str, name: str) -> JSONObject | None:
    """Upstream's texts of one discoverable tool, when the scenario put them in the state."""
    texts = cast("Mapping[str, Mapping[str, JSONObject]] | None", state.get(TEXTS))
    return (texts or {}).get(side, {}).get(name)


AGENT_TOOLS: dict[str, Discoverable] = {}
USER_TOOLS: dict[str, Discoverable] = {}


def discoverable(
    registry: dict[str, Discoverable], description: str, *params: Param, mutates: bool, result: str = ""
) -> Callable[[Run], Run]:
    def register(fn: Run) -> Run:
        name = fn.__name__
        # Python names the function in a TypeError; upstream's methods live on these classes.
        fn.__qualname__ = ("KnowledgeTools." if registry is AGENT_TOOLS else "KnowledgeUserTools.") + name
        registry[name] = Discoverable(
            name, description, params, mutates, fn, result or "Action completed successfully."
        )
        return fn

    return register


def agent_tool(description: str, *params: Param, mutates: bool, result: str = "") -> Callable[[Run], Run]:
    return discoverable(AGENT_TOOLS, description, *params, mutates=mutates, result=result)


def user_tool(description: str, *params: Param, mutates: bool, result: str = "") -> Callable[[Run], Run]:
    return discoverable(USER_TOOLS, description, *params, mutates=mutates, result=result)


def s(name: str, description: str, required: bool = True) -> Param:
    return Param(name, "string", description, required)


def n(name: str, description: str, required: bool = True) -> Param:
    return Param(name, "number", description, required)


def b(name: str, description: str, required: bool = True) -> Param:
    return Param(name, "boolean", description, required)


def i(name: str, description: str, required: bool = True) -> Param:
    return Param(name, "integer", description, required)


def parse_arguments(text: object) -> dict[str, Any] | str:
    """The JSON object string of a discoverable call, integers read as floats (upstream's
    normalisation); a string starting ``Error:`` when it is not valid JSON."""
    if not isinstance(text, str):  # upstream's json.loads refuses it: the call fails
        raise TypeError(f"the JSON object must be str, bytes or bytearray, not {type(text).__name__}")
    try:
        value = json.loads(text, parse_int=float)
    except json.JSONDecodeError as exc:
        return f"Error: Invalid JSON in arguments: {exc}"
    return value  # type: ignore[no-any-return]  # upstream passes whatever the JSON holds on
