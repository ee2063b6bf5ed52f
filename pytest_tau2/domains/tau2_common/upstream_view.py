"""``--tau2-prompts``: which text the agent and the simulated user of a tau2 domain are shown.

``upstream`` (the default) sends what upstream tau2's ``LLMAgent`` and ``UserSimulator`` send at
the pin, byte for byte: the agent's system prompt (upstream's instruction block around the domain
policy), its tool schemas in upstream's order, the user simulator's system prompt (its guidelines
and the task's scenario as upstream renders it) and the user's tool schemas. None of that text is
in this repository: it is read at run time from the *tau2 view* file, ``agent_view.json``,
generated from upstream's code at the pin (docs/leaderboard.md says how to get it). It is found
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
                f"--tau2-prompts upstream: no tau2 view file at {path} (set {VIEW_ENV}, docs/leaderboard.md); "
                "this run uses the seed prompts and is not leaderboard-comparable",
                stacklevel=2,
            )
        return SEED_FALLBACK, None
    return UPSTREAM, load_view(path)


def agent_system_prompt(view: JSONObject, policy: str) -> str:
    """Upstream's agent system prompt around ``policy`` (the domain policy as upstream builds it)."""
    template = str(view["agent_system_prompt_template"])
    return template.format(agent_instruction=str(view["agent_instruction"]), domain_policy=policy)


def user_system_prompt(view: JSONObject, user_scenario: UserScenario, *, with_tools: bool) -> str:
    """Upstream's user-simulator system prompt: guidelines (with or without tools) and the scenario."""
    guidelines = cast("Mapping[str, str]", view["user_guidelines"])["tools" if with_tools else "plain"]
    return user_prompt_around(view, guidelines, user_scenario)


def user_prompt_around(view: JSONObject, guidelines: str, user_scenario: UserScenario) -> str:
    """Upstream's user-simulator template filled with ``guidelines`` (the voice ones on a call) and the scenario."""
    template = str(view["user_system_prompt_template"])
    return template.format(
        global_user_sim_guidelines_with_persona=guidelines, instructions=render_scenario(user_scenario)
    )


def tool_schemas(view: JSONObject, domain: str, side: str) -> dict[str, JSONObject]:
    """Upstream's schemas of one side's tools, by tool name (empty for a domain the view lacks)."""
    domains = cast("Mapping[str, JSONObject]", view["domains"])
    listed = cast(
        "list[JSONObject]", (domains.get(domain) or {}).get("tools" if side == "agent" else "user_tools") or []
    )
    return {str(cast(JSONObject, schema["function"])["name"]): schema for schema in listed}


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
