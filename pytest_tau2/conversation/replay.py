"""``--tau2-agent replay:PATH``: re-run recorded agent tool calls through the real tools.

The file is JSON Lines, one object per scenario::

    {"scenario": "tau2_retail__0", "actions": [{"name": "...", "arguments": {...}}, ...]}

``arguments`` may be an object or a JSON string holding one: a model's tool calls store their
arguments as the string the model sent, so a replay file made from a run's transcripts holds
strings. Both are normalised to a dict here, when the file is loaded, so that a malformed file
is refused before collection with its line number instead of failing every scenario mid-run.

Re-scoring saved trajectories after a scoring change costs no LLM call, and lets anyone
check the scorer (e.g. gold actions minus the last write must fail DB_STATE_MATCH).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from pytest_tau2.environment.jsontypes import JSONObject, JSONValue

RECORD_KEYS = frozenset({"scenario", "actions"})
ACTION_KEYS = frozenset({"name", "arguments", "requestor", "id"})
REQUESTORS = ("assistant", "user")


class ReplayFileError(ValueError):
    """The replay file is missing or malformed (names the file and line)."""


@functools.cache
def load_replay_file(path: str) -> dict[str, list[JSONObject]]:
    """Every scenario's actions, ``{"name", "arguments": dict, "requestor"}``; the last line per scenario wins."""
    file = Path(path)
    if not file.is_file():
        raise ReplayFileError(f"replay file {file} does not exist (from --tau2-agent replay:{path})")
    out: dict[str, list[JSONObject]] = {}
    for number, line in enumerate(file.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{file}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReplayFileError(f"{where}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise ReplayFileError(f"{where}: nested too deeply to read") from None
        if not isinstance(record, dict) or not isinstance(record.get("scenario"), str):
            raise ReplayFileError(f"{where}: expected an object with a 'scenario' string")
        _refuse_unknown_keys(record, RECORD_KEYS, where)
        actions = record.get("actions")
        if not isinstance(actions, list):
            raise ReplayFileError(f"{where}: 'actions' must be a list of {{name, arguments}} objects")
        out[record["scenario"]] = [_action(action, where, i) for i, action in enumerate(actions)]
    return out


def _action(action: JSONValue, line: str, index: int) -> JSONObject:
    if not isinstance(action, dict) or not isinstance(action.get("name"), str):
        raise ReplayFileError(
            f"{line}: 'actions' must be a list of {{name, arguments}} objects; actions[{index}] is {action!r}"
        )
    where = f"{line}: actions[{index}] ({action['name']})"
    _refuse_unknown_keys(action, ACTION_KEYS, where)
    requestor = action.get("requestor", "assistant")
    if requestor not in REQUESTORS:
        raise ReplayFileError(f"{where}: 'requestor' must be 'assistant' or 'user', got {requestor!r}")
    return {"name": action["name"], "arguments": _arguments(action.get("arguments"), where), "requestor": requestor}


def _arguments(raw: JSONValue, where: str) -> JSONObject:
    """An action's arguments as a dict: absent/null -> {}, an object as is, a JSON string parsed."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        if raw == "":
            return {}  # some models send "" for a call without arguments (the tools read it as {})
        try:
            parsed = json.loads(raw)
        except RecursionError:
            raise ReplayFileError(f"{where}: 'arguments' is nested too deeply to read") from None
        except json.JSONDecodeError as exc:
            raise ReplayFileError(
                f"{where}: 'arguments' is a string but not valid JSON ({exc.msg}): {raw[:200]!r}; "
                "fix it or leave the call out (such a call changed nothing: the tools refused it)"
            ) from None
        if not isinstance(parsed, dict):
            raise ReplayFileError(f"{where}: 'arguments' string must hold a JSON object, got {raw!r}")
        return parsed
    if isinstance(raw, dict):
        return raw
    raise ReplayFileError(f"{where}: 'arguments' must be an object or a JSON string of one, got {raw!r}")


def _refuse_unknown_keys(obj: JSONObject, allowed: frozenset[str], where: str) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise ReplayFileError(
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"(allowed: {', '.join(sorted(allowed))})"
        )
