"""``--tau2-prompts``: which text the agent and the simulated user of a tau2 domain are shown.

``upstream`` (the default) sends what upstream tau2's ``LLMAgent`` and ``UserSimulator`` send at
the pin, byte for byte: the agent's system prompt (upstream's instruction block around the domain
policy), its tool schemas in upstream's order, the user simulator's system prompt (its guidelines
and the task's scenario as upstream renders it) and the user's tool schemas. None of that text is
in this repository: it is read at run time from the *tau2 view* file, ``agent_view.json``,
derived from upstream's code at the pin (``pytest-tau2 data view``, domains/tau2_common/view_derive.py). It is found
at ``$TAU2_VIEW_FILE``, else at ``tau2-view/agent_view.json`` beside the tau2 data folder.

``seed`` sends our own prompts (domains/tau2_common/prompts.py) and our tool descriptions, and
offers ``EndConversationTool``. When ``upstream`` is asked for and the view file is missing, the
run falls back to ``seed``, says so once, and records ``seed (upstream view missing)``: such a run
is not leaderboard-comparable.
"""

from __future__ import annotations

import functools
import json
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import cast

from pytest_tau2.domains.tau2_common.task_types import UserScenario
from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.errors import DataError

VIEW_ENV = "TAU2_VIEW_FILE"
VIEW_FILE = "agent_view.json"
UPSTREAM = "upstream"
SEED = "seed"
SEED_FALLBACK = "seed (upstream view missing)"
"""The prompts a run asked to be ``upstream`` used when no view file was found."""
UPSTREAM_OWN_DISCOVERABLE = "upstream (banking discoverable tools ours)"
"""banking_knowledge under ``upstream`` with a view that lacks its discoverable tools' texts (they are
in upstream's code, not its data; ``pytest-tau2 data view`` derives them): those stay ours."""


def view_path(data_root: Path) -> Path:
    """Where the view file is: ``$TAU2_VIEW_FILE``, else ``<data root>/../tau2-view/agent_view.json``."""
    named = os.environ.get(VIEW_ENV)
    if named:
        return Path(named).expanduser()
    return data_root.resolve().parent / "tau2-view" / VIEW_FILE


@functools.cache
def load_view(path: Path) -> JSONObject:
    """The parsed view file (cached per path); a DataError naming the file when it is broken."""
    try:
        view = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: the tau2 view file is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    missing = [k for k in ("agent_instruction", "agent_system_prompt_template", "user_system_prompt_template",
                           "user_guidelines", "domains") if k not in view]  # fmt: skip
    if not isinstance(view, dict) or missing:
        raise DataError(f"{path}: not a tau2 view file (missing {', '.join(missing) or 'an object'})")
    return cast(JSONObject, view)


_WARNED: set[Path] = set()


def find_view(mode: str, data_root: Path) -> tuple[str, JSONObject | None]:
    """``(prompts used, view)`` for the asked ``mode``: the view when ``upstream`` and found."""
    if mode != UPSTREAM:
        return SEED, None
    path = view_path(data_root)
    if not path.is_file():
        if path not in _WARNED:
            _WARNED.add(path)
            warnings.warn(
                f"--tau2-prompts upstream: no tau2 view file at {path} (make one with `pytest-tau2 data view`, "
                f"or set {VIEW_ENV}; docs/leaderboard.md); "
                "this run uses the seed prompts and is not leaderboard-comparable",
                stacklevel=2,
            )
        return SEED_FALLBACK, None
    return UPSTREAM, load_view(path)


def agent_system_prompt(view: JSONObject, policy: str) -> str:
    """Upstream's agent system prompt around ``policy`` (the domain policy as upstream builds it)."""
    template = str(view["agent_system_prompt_template"])
    return template.format(agent_instruction=str(view["agent_instruction"]), domain_policy=policy)


PERSONA_MARK = "<PERSONA_GUIDELINES>"
"""Where upstream puts its run-time persona's guidelines in a guideline text; its default persona
(the one ``tau2 run`` uses unless told otherwise) puts nothing there."""


def user_system_prompt(
    view: JSONObject, user_scenario: UserScenario, *, with_tools: bool, guidelines_key: str | None = None
) -> str:
    """Upstream's user-simulator system prompt: guidelines and the scenario. The one place the user's
    prompt is composed: ``guidelines_key`` picks other guidelines of the view (a derived view also
    holds upstream's ``voice`` / ``voice_tools``); by default those without or with tools."""
    texts = cast("Mapping[str, str]", view["user_guidelines"])
    key = guidelines_key or ("tools" if with_tools else "plain")
    if key not in texts:
        raise DataError(f"the tau2 view has no user guidelines {key!r} (pytest-tau2 data view derives them)")
    guidelines = texts[key].replace(PERSONA_MARK, "")
    return user_prompt_around(view, guidelines, user_scenario)


def user_prompt_around(view: JSONObject, guidelines: str, user_scenario: UserScenario) -> str:
    """Upstream's user-simulator template filled with ``guidelines`` (the voice ones on a call) and the scenario."""
    template = str(view["user_system_prompt_template"])
    return template.format(
        global_user_sim_guidelines_with_persona=guidelines, instructions=render_scenario(user_scenario)
    )


def tool_schemas(view: JSONObject, domain: str, side: str) -> dict[str, JSONObject]:
    """Upstream's schemas of one side's tools, by tool name (empty for a domain the view lacks), with
    their keys in the order upstream sends them (:func:`upstream_key_order`)."""
    key = (id(view), domain, side)
    cached = _SCHEMAS.get(key)
    if cached is None or cached[0] is not view:
        domains = cast("Mapping[str, JSONObject]", view["domains"])
        listed = cast(
            "list[JSONObject]", (domains.get(domain) or {}).get("tools" if side == "agent" else "user_tools") or []
        )
        ordered = [upstream_key_order(schema) for schema in listed]
        cached = _SCHEMAS[key] = (view, {str(cast(JSONObject, t["function"])["name"]): t for t in ordered})
    return cached[1]


_SCHEMAS: dict[tuple[int, str, str], tuple[JSONObject, dict[str, JSONObject]]] = {}


def upstream_key_order(schema: JSONObject) -> JSONObject:
    """One tool schema with its keys in upstream's order, whatever order the view file keeps them in
    (the shared one is written with sorted keys): the model reads the JSON in this order.

    Facts about upstream's ``Tool.openai_schema`` at the pin: ``type`` before ``function``; ``name``,
    ``description``, ``parameters`` in that order; in every object schema the required properties
    come first, in ``required``'s order, then the others; every other mapping has sorted keys (as
    pydantic writes them). The order among several optional properties is kept as the file has it:
    a view derived from upstream's source keeps upstream's (one telecom user tool, ``set_apn_settings``,
    has six optional fields, which a sorted file holds in sorted order).
    """
    function = cast(JSONObject, schema.get("function") or {})
    head = [k for k in ("name", "description", "parameters") if k in function]
    laid_out: JSONObject = {k: function[k] for k in head + sorted(k for k in function if k not in head)}
    if isinstance(laid_out.get("parameters"), dict):
        laid_out["parameters"] = _ordered_schema(cast(JSONObject, laid_out["parameters"]))
    rest = {k: schema[k] for k in sorted(schema) if k not in ("type", "function")}
    return {"type": schema.get("type", "function"), "function": laid_out, **rest}


def _ordered_schema(node: JSONObject) -> JSONObject:
    """A JSON schema with sorted keys, its ``properties`` required-first (see upstream_key_order)."""
    out: JSONObject = {}
    for key in sorted(node):
        value = node[key]
        if key in ("properties", "$defs") and isinstance(value, dict):
            names = list(value) if key == "properties" else sorted(value)
            if key == "properties":
                required = [str(n) for n in cast("list[object]", node.get("required") or []) if n in value]
                names = required + [n for n in names if n not in required]
            value = {n: _ordered_schema(v) if isinstance(v := value[n], dict) else v for n in names}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            value = _ordered_schema(value)
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
            value = [_ordered_schema(v) if isinstance(v, dict) else v for v in value]
        out[key] = value
    return out


def _indent(text: str) -> str:
    """One tab before every line that holds more than whitespace (as Python's textwrap.indent does)."""
    return "".join("\t" + line if line.strip() else line for line in text.splitlines(keepends=True))


def render_scenario(user_scenario: UserScenario) -> str:
    """A task's ``user_scenario`` as upstream writes it into the user's prompt (facts: the labels,
    the tab indentation, which fields are optional)."""
    instructions = cast("Mapping[str, object] | str | None", user_scenario.get("instructions"))
    if isinstance(instructions, Mapping):
        parts = [
            f"Domain: {instructions.get('domain')}",
            f"Reason for call:\n{_indent(str(instructions.get('reason_for_call')))}",
        ]
        for key, label in (("known_info", "Known info"), ("unknown_info", "Unknown info")):
            if instructions.get(key) is not None:
                parts.append(f"{label}:\n{_indent(str(instructions[key]))}")
        parts.append(f"Task instructions:\n{_indent(str(instructions.get('task_instructions')))}")
        rendered = "\n".join(parts)
    else:
        rendered = str(instructions)
    lines = []
    if user_scenario.get("persona") is not None:
        lines += ["Persona:", _indent(str(user_scenario["persona"]))]
    lines += ["Instructions:", _indent(rendered)]
    return "\n".join(lines)
