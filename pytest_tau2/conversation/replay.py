"""``--tau2-agent replay:PATH``: re-run recorded agent tool calls through the real tools.

The file is JSON Lines, one object per scenario::

    {"scenario": "tau2_retail__0", "actions": [{"name": "...", "arguments": {...}}, ...]}

Re-scoring saved trajectories after a scoring change costs no LLM call, and lets anyone
check the scorer (e.g. gold actions minus the last write must fail DB_STATE_MATCH).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any


class ReplayFileError(ValueError):
    """The replay file is missing or malformed (names the file and line)."""


@functools.cache
def load_replay_file(path: str) -> dict[str, list[dict[str, Any]]]:
    file = Path(path)
    if not file.is_file():
        raise ReplayFileError(f"replay file {file} does not exist (from --tau2-agent replay:{path})")
    out: dict[str, list[dict[str, Any]]] = {}
    for number, line in enumerate(file.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReplayFileError(f"{file}:{number}: not valid JSON ({exc.msg})") from None
        if not isinstance(record, dict) or not isinstance(record.get("scenario"), str):
            raise ReplayFileError(f"{file}:{number}: expected an object with a 'scenario' string")
        actions = record.get("actions")
        if not isinstance(actions, list) or not all(
            isinstance(a, dict) and isinstance(a.get("name"), str) for a in actions
        ):
            raise ReplayFileError(f"{file}:{number}: 'actions' must be a list of {{name, arguments}} objects")
        out[record["scenario"]] = [
            {"name": a["name"], "arguments": a.get("arguments") or {}, "requestor": a.get("requestor", "assistant")}
            for a in actions
        ]
    return out
