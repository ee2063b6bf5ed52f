"""Run one scenario end to end, without pytest: seed -> gold replay -> conversation -> scoring.

The pytest adapter (plugin.py) calls :func:`run_scenario` from a fixture and turns the
:class:`ScenarioOutcome` into sub-results, properties and files.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_tau2.conversation.loop import Conversation, ConversationResult, Limits
from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.environment.db import db_hash, fresh_db
from pytest_tau2.environment.env import Environment
from pytest_tau2.environment.tools import resolve_tool
from pytest_tau2.errors import DataError
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scoring.signals import Check, JudgeOutcome, score
from pytest_tau2.scoring.verdict import Verdict
from pytest_tau2.settings import Settings

SIDE_NAMES = {"assistant": "agent", "agent": "agent", "user": "user"}


@dataclass
class GoldResult:
    """What replaying the reference actions on a fresh seeded state gives."""

    hashes: dict[str, str | None]
    actions: list[dict[str, Any]]
    """The write actions the replay recorded (the reference action list)."""
    failures: list[dict[str, Any]]
    """Gold actions that failed by design upstream, kept as failed: ``{index, name, error}``."""
    duration_s: float = 0.0


@dataclass(repr=False)  # holds whole DBs: a repr (asyncio reprs task results) would walk them
class ScenarioOutcome:
    scenario: Scenario
    conversation: ConversationResult
    signals: dict[Any, Any]
    checks: list[Check]
    verdict: Verdict
    stalled: bool
    final_dbs: dict[str, Any]
    gold: GoldResult | None
    tool_errors: int
    recorded_actions: list[dict[str, Any]]
    judge: JudgeOutcome | None
    duration_s: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_successful(self) -> bool | str:
        if self.stalled:
            return False
        return self.verdict.is_successful


# ---- seeding ----------------------------------------------------------------------------------


def seed_states(scenario: Scenario, settings: Settings) -> dict[str, dict[str, Any]]:
    """One fresh state dict per side; ``db_path`` values become loaded (copied) DBs."""
    from pytest_tau2.data.resolve import data_path

    root = scenario.data_root(settings)
    states: dict[str, dict[str, Any]] = {}
    for side in scenario.sides:
        state: dict[str, Any] = {}
        scenario.setup_shared_state(state, side)
        for key in [k for k in state if k == "db_path" or k.endswith("_db_path")]:
            path = data_path(Path(root), str(state.pop(key)))
            if not path.is_file():
                raise DataError(
                    f"the {side} DB file {path} does not exist (db_path resolved against the "
                    f"data root {root}; set --tau2-eval-data-root or fix setup_shared_state)"
                )
            target = "db" if key == "db_path" else key[: -len("_path")]
            state[target] = fresh_db(scenario.read_db(path, side))
        states[side] = state
    return states


def build_environments(scenario: Scenario, states: dict[str, dict[str, Any]]) -> dict[str, Environment]:
    """Instantiate each side's tools (from its Resources) on its state, wired to ``sync_state``."""
    envs: dict[str, Environment] = {}
    for side in scenario.sides:
        resources = scenario.agent_resources if side == "agent" else scenario.user_resources
        namespace = scenario.namespace if side == "agent" else scenario.user_namespace
        tools = [
            resolve_tool(namespace, cls_name)(states[side], config) for cls_name, config in resources.tools.items()
        ]
        envs[side] = Environment(side, states[side], tools)
    if "user" in envs:

        def sync() -> None:
            scenario.sync_state(states["agent"], states.get("user"))

        for env in envs.values():
            env.after_success = sync
    return envs


def apply_initialization(scenario: Scenario, states: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Run the scenario's initialization actions; returns them with their results (recorded apart)."""
    applied = []
    for action in scenario.initialization_actions or []:
        result = scenario.run_initialization_action(action, states)
        applied.append({**action, "result": result})
    return applied


# ---- gold replay ------------------------------------------------------------------------------

_GOLD_CACHE: dict[tuple[str, str], GoldResult] = {}


def gold_replay(scenario: Scenario, settings: Settings) -> GoldResult | None:
    """Expected end state and reference actions, computed once per scenario per process."""
    gold_actions = scenario.gold_actions()
    if gold_actions is None:
        return None
    key = (type(scenario).__module__ + "." + type(scenario).__qualname__, scenario.name)
    cached = _GOLD_CACHE.get(key)
    if cached is None:
        cached, _ = _replay(scenario, settings, gold_actions)
        _GOLD_CACHE[key] = cached
    return cached


def gold_dbs(scenario: Scenario, settings: Settings) -> dict[str, Any]:
    """The gold end-state DBs themselves (recomputed: only a failing comparison needs them)."""
    _, states = _replay(scenario, settings, scenario.gold_actions() or [])
    return {side: state.get("db") for side, state in states.items()}


def _replay(
    scenario: Scenario, settings: Settings, gold_actions: list[dict[str, Any]]
) -> tuple[GoldResult, dict[str, dict[str, Any]]]:
    start = time.perf_counter()
    states = seed_states(scenario, settings)
    apply_initialization(scenario, states)
    envs = build_environments(scenario, states)
    failures = []
    for index, action in enumerate(gold_actions):
        side = SIDE_NAMES.get(action.get("requestor", "assistant"), "agent")
        env = envs.get(side)
        if env is None:
            failures.append({"index": index, "name": action["name"], "error": f"no {side} side"})
            continue
        result = env.call(action["name"], action.get("arguments") or {})
        if result.error:
            failures.append({"index": index, "name": action["name"], "error": result.content})
    hashes = {side: db_hash(state["db"]) if "db" in state else None for side, state in states.items()}
    actions = [a for env in envs.values() for a in env.actions]
    return GoldResult(hashes, actions, failures, time.perf_counter() - start), states


# ---- the run ----------------------------------------------------------------------------------


def prepare(
    scenario: Scenario, settings: Settings
) -> tuple[GoldResult | None, dict[str, dict[str, Any]], list[dict[str, Any]], dict[str, Environment]]:
    """Everything before the conversation: gold (cached), seeded states, initialization, tools."""
    scenario.bind(settings)
    gold = gold_replay(scenario, settings)
    states = seed_states(scenario, settings)
    initialization = apply_initialization(scenario, states)
    return gold, states, initialization, build_environments(scenario, states)


def limits_for(scenario: Scenario, settings: Settings) -> Limits:
    return Limits(
        max_turns=scenario.max_turns if settings.max_turns is None else settings.max_turns,
        max_duration=scenario.max_duration if settings.max_duration is None else settings.max_duration,
        max_tool_errors=settings.max_tool_errors,
    )


async def run_scenario(
    scenario: Scenario,
    *,
    agent: Participant,
    user: Participant,
    settings: Settings,
    judge: Any = None,
) -> ScenarioOutcome:
    """Seed, replay gold, converse, score. Infrastructure failures surface in ``conversation.error``."""
    if getattr(agent, "runs_tools_remotely", False):  # an external bot: its tools, DB and actions live there
        from pytest_tau2.bot.runner import run_remote_scenario

        return await run_remote_scenario(scenario, agent=agent, user=user, settings=settings, judge=judge)  # type: ignore[arg-type]
    start = time.perf_counter()
    gold, states, initialization, envs = prepare(scenario, settings)
    conversation = Conversation(
        agent=agent,
        user=user,
        agent_env=envs["agent"],
        user_env=envs.get("user"),
        agent_prompt=scenario.get_agent_prompt(),
        user_prompt=scenario.get_user_prompt(),
        limits=limits_for(scenario, settings),
        greeting=scenario.agent_greeting,
    )
    result = await conversation.run()
    final_dbs = {side: state.get("db") for side, state in states.items()}
    recorded = [a for env in envs.values() for a in env.actions]
    judge_outcome = None
    if judge is not None and scenario.nl_assertions and result.error is None:
        judge_outcome = await judge.judge(scenario.nl_assertions, result.transcript)
    db_state_verdicts: list[dict[str, Any]] = []
    signals, checks = score(
        scenario,
        conversation=result,
        final_dbs=final_dbs,
        gold=gold,
        recorded_actions=recorded,
        judge=judge_outcome,
        judge_configured=judge is not None,
        gold_dbs=lambda: gold_dbs(scenario, settings),
        db_state_verdicts=db_state_verdicts,
    )
    verdict = scenario_verdict(scenario, signals)
    stalled = settings.min_agent_turns > 0 and result.agent_turns < settings.min_agent_turns
    return ScenarioOutcome(
        scenario=scenario,
        conversation=result,
        signals=signals,
        checks=checks,
        verdict=verdict,
        stalled=stalled,
        final_dbs=final_dbs,
        gold=gold,
        tool_errors=sum(env.tool_errors for env in envs.values()),
        recorded_actions=recorded,
        judge=judge_outcome,
        duration_s=time.perf_counter() - start,
        extra={"initialization": initialization, "db_state_assertion_verdicts": db_state_verdicts},
    )


def scenario_verdict(scenario: Scenario, signals: Mapping[Any, Any]) -> Verdict:
    """The breakdown from strict AND, with the scenario's own combinator deciding the verdict."""
    from pytest_tau2.scoring.verdict import strict_and

    verdict = strict_and(signals, tuple(scenario.success_signals))
    verdict.is_successful = scenario.compute_is_successful(signals)
    return verdict


__all__ = [
    "GoldResult",
    "ScenarioOutcome",
    "apply_initialization",
    "build_environments",
    "gold_replay",
    "run_scenario",
    "seed_states",
]
