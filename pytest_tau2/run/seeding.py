"""Everything before the conversation: seeded states, initialization, tools, and the gold replay.

The gold replay (reference actions on a fresh state) gives both the expected hashes and the
reference actions, so the two never disagree. It is cached per process, keyed by the scenario
class, its name and the data root it read: two runs over different data never share a result.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from pytest_tau2.data.resolve import data_path
from pytest_tau2.environment.db import db_hash, fresh_db
from pytest_tau2.environment.env import Environment
from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.environment.tools import resolve_tool
from pytest_tau2.errors import DataError
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.outcome import GoldResult
from pytest_tau2.settings import Settings

SIDE_NAMES = {"assistant": "agent", "agent": "agent", "user": "user"}


class MissingDataFile(DataError):
    """A ``db_path`` names a file that is not under the data root."""

    def __init__(self, side: str, key: str, relative: str, path: Path, root: Path) -> None:
        super().__init__(
            f"the {side} DB file {path} does not exist ({key} {relative!r} resolved against the data root {root}; "
            "set --tau2-eval-data-root or fix setup_shared_state)"
        )
        self.key, self.relative, self.path, self.root = key, relative, path, root


def load_db_paths(scenario: Scenario, state: dict[str, object], side: str, root: Path) -> None:
    """Replace each ``db_path`` / ``<name>_db_path`` of ``state`` by the loaded (copy-on-write) DB."""
    for key in [k for k in state if k == "db_path" or k.endswith("_db_path")]:
        relative = state.pop(key)
        if not isinstance(relative, str):
            raise DataError(f"{key} must be a path (a string) under the data root {root}, got {relative!r}")
        target = "db" if key == "db_path" else key[: -len("_path")]
        state[target] = fresh_db(scenario.read_db(_db_file(root, relative, side, key), side))


# (root, relative) -> the checked file: resolving symlinks and checking the file costs ~0.1 ms
# of system calls, twice per scenario (gold replay and run), and the DB itself is parsed once
# per process anyway (a failing check is not remembered: it raises every time).
_DB_FILES: dict[tuple[Path, str], Path] = {}


def _db_file(root: Path, relative: str, side: str, key: str) -> Path:
    path = _DB_FILES.get((root, relative))
    if path is None:
        path = data_path(root, relative)
        if not path.is_file():
            raise MissingDataFile(side, key, relative, path, root)
        _DB_FILES[(root, relative)] = path
    return path


def seed_states(
    scenario: Scenario, settings: Settings, sides: tuple[str, ...] | None = None
) -> dict[str, dict[str, object]]:
    """One fresh state dict per side (all of the scenario's, or ``sides``), DBs loaded."""
    root = Path(scenario.data_root(settings))
    states: dict[str, dict[str, object]] = {}
    for side in sides or scenario.sides:
        state: dict[str, object] = {}
        scenario.setup_shared_state(state, side)
        load_db_paths(scenario, state, side, root)
        states[side] = state
    return states


def build_environments(scenario: Scenario, states: dict[str, dict[str, object]]) -> dict[str, Environment]:
    """Instantiate each side's tools (from its Resources) on its state, wired to ``sync_state``."""
    envs: dict[str, Environment] = {}
    for side in scenario.sides:
        resources = scenario.agent_resources if side == "agent" else scenario.user_resources
        namespace = scenario.namespace if side == "agent" else scenario.user_namespace
        tools = [
            resolve_tool(namespace, cls_name)(states[side], config) for cls_name, config in resources.tools.items()
        ]
        schemas = getattr(scenario, "tool_schemas", None)  # tau2 domains: upstream's, under --tau2-prompts upstream
        envs[side] = Environment(side, states[side], tools, schema_overrides=schemas(side) if schemas else {})
    if "user" in envs:

        def sync() -> None:
            scenario.sync_state(states["agent"], states.get("user"))

        for env in envs.values():
            env.after_success = sync
    return envs


def apply_initialization(scenario: Scenario, states: dict[str, dict[str, object]]) -> list[dict[str, object]]:
    """Run the scenario's initialization actions; returns them with their results (recorded apart)."""
    applied = []
    for action in scenario.initialization_actions or []:
        result = scenario.run_initialization_action(action, states)
        applied.append({**action, "result": result})
    return applied


@dataclass(repr=False)  # holds whole DBs
class Prepared:
    """A scenario seeded and initialized, its tools built: ready for the conversation."""

    scenario: Scenario
    settings: Settings
    states: dict[str, dict[str, object]]
    initialization: list[dict[str, object]]
    envs: dict[str, Environment]


def prepare(scenario: Scenario, settings: Settings) -> Prepared:
    states = seed_states(scenario, settings)
    initialization = apply_initialization(scenario, states)
    return Prepared(scenario, settings, states, initialization, build_environments(scenario, states))


# ---- gold replay ------------------------------------------------------------------------------

_GOLD_CACHE: dict[tuple[str, str, str], GoldResult] = {}


def _gold_key(scenario: Scenario, settings: Settings) -> tuple[str, str, str]:
    cls = type(scenario)
    return (f"{cls.__module__}.{cls.__qualname__}", scenario.name, str(scenario.data_root(settings)))


def gold_replay(scenario: Scenario, settings: Settings) -> GoldResult | None:
    """Expected end state and reference actions, computed once per (class, scenario, data root)."""
    gold_actions = scenario.gold_actions()
    if gold_actions is None:
        return None
    key = _gold_key(scenario, settings)
    cached = _GOLD_CACHE.get(key)
    if cached is None:
        cached, _ = _replay(scenario, settings, gold_actions)
        _GOLD_CACHE[key] = cached
    return cached


def gold_dbs(scenario: Scenario, settings: Settings) -> dict[str, object]:
    """The gold end-state DBs themselves (recomputed: only a failing comparison needs them)."""
    _, states = _replay(scenario, settings, scenario.gold_actions() or [])
    return {side: state.get("db") for side, state in states.items()}


def _replay(
    scenario: Scenario, settings: Settings, gold_actions: list[JSONObject]
) -> tuple[GoldResult, dict[str, dict[str, object]]]:
    start = time.perf_counter()
    prepared = prepare(scenario, settings)
    failures = []
    for index, action in enumerate(gold_actions):
        # A gold action is {"name", "arguments", "requestor"} (Scenario.gold_actions).
        side = SIDE_NAMES.get(cast(str, action.get("requestor", "assistant")), "agent")
        name = cast(str, action["name"])
        env = prepared.envs.get(side)
        if env is None:
            failures.append({"index": index, "name": name, "error": f"no {side} side"})
            continue
        result = env.call(name, cast("JSONObject | str", action.get("arguments") or {}))
        if result.error:
            failures.append({"index": index, "name": name, "error": result.content})
    states = prepared.states
    hashes = {side: db_hash(state["db"]) if "db" in state else None for side, state in states.items()}
    actions = [a for env in prepared.envs.values() for a in env.actions]
    return GoldResult(hashes, actions, failures, time.perf_counter() - start), states
