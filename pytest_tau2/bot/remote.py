"""Run one scenario against an external bot and score it from what the bot reports.

:func:`run_remote_scenario` is :func:`pytest_tau2.runner.run_scenario` for a
:class:`~pytest_tau2.bot.client.WebSocketAgent`: the same gold replay, loop, judge, scoring
and verdict, with three differences, all because the agent's tools and DB live in the bot:

- the loop's agent Environment is a :class:`BotEnvironment`, which hands back the results the
  bot reported instead of running tools (so the transcript holds the bot's calls and results);
- ACTION_MATCH compares the actions of the bot's ``scenario_summary`` (plus the runner-side
  user's, for dual-side domains);
- DB_STATE_MATCH compares the bot's reported canonical hash with the gold hash; the DB itself
  is fetched only when needed (DB-state predicates, ``--tau2-save-db``, or a mismatch to diff).

CLEAN_EXIT comes from the bot's ``exit`` frame, which ends the loop as an exit tool does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pytest_tau2.bot.client import WebSocketAgent
from pytest_tau2.bot.protocol import excerpt, wire_arguments
from pytest_tau2.conversation.loop import Conversation, ConversationResult
from pytest_tau2.conversation.offline import GoldPlan
from pytest_tau2.conversation.protocol import Participant, Reply
from pytest_tau2.environment.db import canonical_json, db_diff, db_hash
from pytest_tau2.environment.env import Environment, ToolResult
from pytest_tau2.errors import InfrastructureError, ProtocolError
from pytest_tau2.runner import (
    GoldResult,
    ScenarioOutcome,
    gold_dbs,
    limits_for,
    prepare,
    scenario_verdict,
)
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.model import SuccessSignal
from pytest_tau2.scoring.signals import Check, score
from pytest_tau2.settings import Settings


def is_remote_agent(agent: Any) -> bool:
    """True when ``agent`` runs its tools elsewhere and must be run by :func:`run_remote_scenario`."""
    return bool(getattr(agent, "runs_tools_remotely", False))


class BotEnvironment(Environment):
    """The agent side as the loop sees it when the tools ran in the bot: results come from its reports.

    ``mirror`` (dual-side domains) is the runner's replica of the agent side: each reported
    call is replayed on it, so the cross-side sync gives the user's side (the phone) the
    effects of the agent's calls, as in-process. Its results are not used.
    """

    def __init__(
        self,
        agent: WebSocketAgent,
        schemas: list[dict[str, Any]],
        on_call: Callable[[str], None] | None = None,
        mirror: Environment | None = None,
    ) -> None:
        super().__init__("agent", {}, [])
        self.agent = agent
        self._schemas = schemas
        self._on_call = on_call
        self._mirror = mirror

    def schemas(self) -> list[dict[str, Any]]:
        return self._schemas

    def call(self, name: str, arguments: Any) -> ToolResult:
        result = self.agent.take_result(name)
        if result.error:
            self.tool_errors += 1
        elif self._mirror is not None:
            self._mirror.call(name, arguments)
        if self._on_call is not None:
            self._on_call(name)
        return result


class _ReportingEnvironment(Environment):
    """The user's side (dual-side domains), queueing each of its calls for the bot's replica."""

    def __init__(self, env: Environment, agent: WebSocketAgent) -> None:
        super().__init__(env.side, env.state, env.tools, after_success=env.after_success)
        self.agent = agent

    def call(self, name: str, arguments: Any) -> ToolResult:
        result = super().call(name, arguments)
        self.agent.pending_user_tool_calls.append(
            {"name": name, "arguments": wire_arguments(arguments), "result": result.content, "error": result.error}
        )
        return result


@dataclass
class _KeepOpen:
    """The agent without ``aclose``: the loop closes its participants, but the summary comes after."""

    agent: WebSocketAgent

    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        return await self.agent.respond(messages, tools)


async def run_remote_scenario(
    scenario: Scenario,
    *,
    agent: WebSocketAgent,
    user: Participant,
    settings: Settings,
    judge: Any = None,
) -> ScenarioOutcome:
    """Seed (runner side: gold and user), converse through the bot, fetch its summary, score.

    Infrastructure and protocol failures surface in ``outcome.conversation.error`` with
    ``stop_reason == "error"``, as for :func:`pytest_tau2.runner.run_scenario`.
    """
    start = time.perf_counter()
    # The runner keeps its own seeded state: the user side lives here (dual-side domains), and
    # the agent side's initial hash checks that runner and bot start from the same data.
    gold, states, initialization, envs = prepare(scenario, settings)
    local_db = states["agent"].get("db")
    local_hash = db_hash(local_db) if local_db is not None else None
    if "user" in envs:  # dual-side: each side replays the other's calls on its replica (see BotEnvironment)
        envs["user"] = _ReportingEnvironment(envs["user"], agent)
        bot_env = BotEnvironment(agent, envs["agent"].schemas(), _plan_follower(user), mirror=envs["agent"])
    else:
        bot_env = BotEnvironment(agent, envs["agent"].schemas(), _plan_follower(user))
    summary: dict[str, Any] | None = None
    try:
        try:
            await agent.start()
        except InfrastructureError as exc:
            result = ConversationResult([], "error", 0, 0.0, exc)
            await _close(user)
        else:
            result = await Conversation(
                agent=_KeepOpen(agent),
                user=user,
                agent_env=bot_env,
                user_env=envs.get("user"),
                agent_prompt=scenario.get_agent_prompt(),
                user_prompt=scenario.get_user_prompt(),
                limits=limits_for(scenario, settings),
                greeting=scenario.agent_greeting,
            ).run()
            if result.error is None:
                try:
                    summary = await _fetch_summary(agent, scenario, gold, settings, expect_hash=local_hash is not None)
                except InfrastructureError as exc:
                    result = replace(result, stop_reason="error", error=exc)
    finally:
        await agent.aclose()

    final_dbs = {side: state.get("db") for side, state in states.items()}
    final_dbs["agent"] = summary.get("db") if summary else None
    hashes = {side: db_hash(db) if db is not None else None for side, db in final_dbs.items()}
    hashes["agent"] = summary.get("db_hash") if summary else None
    recorded = list(summary["actions"]) if summary else []
    recorded += [a for side, env in envs.items() if side != "agent" for a in env.actions]
    judge_outcome = None
    if judge is not None and scenario.nl_assertions and result.error is None:
        judge_outcome = await judge.judge(scenario.nl_assertions, result.transcript)
    db_state_verdicts: list[dict[str, Any]] = []
    signals, checks = score(
        scenario,
        conversation=result,
        final_dbs=final_dbs,
        gold=None,  # DB_STATE_MATCH is decided below, from the reported hash
        recorded_actions=recorded,
        judge=judge_outcome,
        judge_configured=judge is not None,
        gold_dbs=dict,
        db_state_verdicts=db_state_verdicts,
    )
    notes = _hash_notes(agent, local_hash, summary)
    value, db_check = remote_db_state_match(
        gold, hashes, final_dbs, lambda: gold_dbs(scenario, settings), summary is not None, notes
    )
    signals[SuccessSignal.DB_STATE_MATCH] = value
    checks = [db_check if c.id == "db_state_match" else c for c in checks]
    stalled = settings.min_agent_turns > 0 and result.agent_turns < settings.min_agent_turns
    return ScenarioOutcome(
        scenario=scenario,
        conversation=result,
        signals=signals,
        checks=checks,
        verdict=scenario_verdict(scenario, signals),
        stalled=stalled,
        final_dbs=final_dbs,
        gold=gold,
        tool_errors=bot_env.tool_errors + sum(env.tool_errors for side, env in envs.items() if side != "agent"),
        recorded_actions=recorded,
        judge=judge_outcome,
        duration_s=time.perf_counter() - start,
        extra={
            "initialization": initialization,
            "db_state_assertion_verdicts": db_state_verdicts,
            "remote": {
                "url": agent.url,
                "session_id": (agent.ready or {}).get("session_id"),
                "db_hashes": hashes,
                "initial_db_hash": (agent.initialized or {}).get("db_hash"),
                "runner_initial_db_hash": local_hash,
                "exit": agent.exit,
            },
        },
    )


async def _fetch_summary(
    agent: WebSocketAgent, scenario: Scenario, gold: GoldResult | None, settings: Settings, *, expect_hash: bool
) -> dict[str, Any]:
    # The DB itself only when something reads it: predicates, --tau2-save-db, or a diff.
    summary = await agent.summary(include_db=bool(scenario.db_state_assertions) or settings.save_db)
    if expect_hash and summary["db_hash"] is None:
        raise ProtocolError(
            f"the bot's scenario_summary has no db_hash, but {scenario.name} has an agent DB: {excerpt(summary)}"
        )
    if "db" not in summary and gold is not None and summary["db_hash"] != gold.hashes.get("agent"):
        summary = await agent.summary(include_db=True)
    return summary


def remote_db_state_match(
    gold: GoldResult | None,
    hashes: dict[str, str | None],
    final_dbs: dict[str, Any],
    expected_dbs: Callable[[], dict[str, Any]],
    have_summary: bool,
    notes: list[str],
) -> tuple[bool | None, Check]:
    """DB_STATE_MATCH from per-side hashes; a diff for each mismatched side whose DB is at hand."""
    signal = SuccessSignal.DB_STATE_MATCH
    if gold is None:
        return None, Check("db_state_match", signal, None, "the scenario has no gold actions")
    if not have_summary:
        return None, Check("db_state_match", signal, None, "no scenario summary from the bot (the session failed)")
    mismatched = [side for side in gold.hashes if gold.hashes[side] != hashes.get(side)]
    if not mismatched:
        return True, Check("db_state_match", signal, True)
    expected = expected_dbs()
    parts = []
    for side in mismatched:
        label = "DB" if side == "agent" else f"{side} DB"
        actual = final_dbs.get(side)
        diff = "(the bot did not send its DB)" if actual is None else db_diff(_wire(expected.get(side)), _wire(actual))
        parts.append(
            f"{label} hash {hashes.get(side)} != expected {gold.hashes[side]}\ndiff (expected -> actual):\n{diff}"
        )
    return False, Check("db_state_match", signal, False, "\n".join(parts + notes))


def _wire(db: Any) -> Any:
    """``db`` as it travels (plain dicts, dates as text), so a diff shows values, not Python types."""
    return None if db is None else json.loads(canonical_json(db))


def _hash_notes(agent: WebSocketAgent, local_hash: str | None, summary: dict[str, Any] | None) -> list[str]:
    """Hints for a bot implementer when a DB mismatch may come from data or hashing, not the agent."""
    notes = []
    initial = (agent.initialized or {}).get("db_hash")
    if initial is not None and local_hash is not None and initial != local_hash:
        notes.append(
            f"note: the bot's initial DB hash {initial} differs from the runner's {local_hash}: "
            "runner and bot do not start from the same data"
        )
    if summary and summary.get("db") is not None and summary.get("db_hash"):
        recomputed = db_hash(summary["db"])
        if recomputed != summary["db_hash"]:
            notes.append(
                f"note: the DB the bot sent hashes to {recomputed}, not its reported {summary['db_hash']}: "
                "the bot's hash recipe differs from docs/websocket.md"
            )
    return notes


def _plan_follower(user: Participant) -> Callable[[str], None] | None:
    """Keep a scripted user's gold plan in step with the bot's calls.

    In-process, the oracle and the scripted user share one plan cursor, so the user performs
    its own gold steps (telecom's phone) when the agent's are done. With the agent remote, the
    runner's copy of the plan advances here, past each agent gold action the bot reports.
    """
    plan = getattr(user, "plan", None)
    if not isinstance(plan, GoldPlan):
        return None

    def follow(name: str) -> None:
        if plan.cursor < len(plan.actions):
            action = plan.actions[plan.cursor]
            if action.get("requestor", "assistant") != "user" and action["name"] == name:
                plan.cursor += 1

    return follow


async def _close(participant: Any) -> None:
    closer = getattr(participant, "aclose", None)
    if closer is not None:
        try:
            await closer()
        except Exception:  # closing must not mask the outcome
            pass
