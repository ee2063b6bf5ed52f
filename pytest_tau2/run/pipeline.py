"""ONE scenario end to end, without pytest: seed -> conversation -> gold replay -> judge -> score.

The pytest adapter (plugin/), the prefetcher and any script call :func:`run_scenario`; the
agent may run in process or behind a WebSocket (its :class:`~pytest_tau2.run.agent_side.AgentSide`
differs, nothing else does). Infrastructure failures of the conversation surface in
``outcome.conversation.error`` with ``stop_reason == "error"``; a judge that could not grade in
``outcome.judge_error`` (and ``outcome.judge.error``), beside a conversation that keeps its own
stop reason and CLEAN_EXIT: :attr:`ScenarioOutcome.infrastructure_error` is either.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Protocol

from pytest_tau2.conversation.loop import Conversation, ConversationResult, Limits, Spend
from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.environment.env import Environment
from pytest_tau2.errors import InfrastructureError, ScenarioDefinitionError
from pytest_tau2.llm.usage import UsageMeter
from pytest_tau2.run.agent_side import ProvidesAgentSide, agent_side_for
from pytest_tau2.run.seeding import gold_dbs, gold_replay, prepare
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.outcome import ScenarioOutcome
from pytest_tau2.scoring.divergence import Divergence, first_divergence
from pytest_tau2.scoring.signals import JudgeOutcome, ScoringInput, score
from pytest_tau2.scoring.verdict import scenario_verdict
from pytest_tau2.settings import Settings

__all__ = ["Judge", "check_gold_actions", "conversation_spend", "limits_for", "run_scenario", "scenario_verdict"]


class Judge(Protocol):
    async def judge(self, assertions: list[str], transcript: list[dict[str, Any]]) -> JudgeOutcome: ...


def limits_for(scenario: Scenario, settings: Settings) -> Limits:
    """The scenario's limits, each overridden by its ``--tau2-max-*`` option when that is set."""

    def pick(name: str) -> Any:
        chosen = getattr(settings, name)
        return getattr(scenario, name, None) if chosen is None else chosen

    return Limits(
        max_turns=pick("max_turns"),
        max_duration=pick("max_duration"),
        max_tool_errors=settings.max_tool_errors,
        max_user_steps=settings.max_user_steps,
        max_tokens=pick("max_tokens"),
        max_cost=pick("max_cost"),
        max_messages=pick("max_messages"),
    )


def conversation_spend(usage: UsageMeter) -> Callable[[], Spend]:
    """What the conversation has used, read from the trial's meter: every side but the judge's
    (the judge grades after the conversation, so its calls could never be stopped by a limit)."""

    def spend() -> Spend:
        sides = [(name, u) for name, u in usage.sides().items() if name != "judge" and u.calls]
        tokens = sum(u.total_tokens for _, u in sides)
        costs = [u.cost for _, u in sides]
        cost = None if any(c is None for c in costs) else sum(c for c in costs if c is not None)
        return Spend(tokens, cost, tuple((name, u.total_tokens, u.cost) for name, u in sides))

    return spend


async def run_scenario(
    scenario: Scenario,
    *,
    agent: Participant | ProvidesAgentSide,
    user: Participant,
    settings: Settings,
    judge: Judge | None = None,
    usage: UsageMeter | None = None,
    seed: int | None = None,
) -> ScenarioOutcome:
    """Seed, converse, replay gold, judge, score, apply the stall rule.

    The gold replay runs after the conversation: only the scoring needs its expected end state.
    Before it, conversations started together (up to ``--tau2-concurrency`` at once) would each
    replay theirs, about 1 ms apiece, ahead of the first request of any of them.
    """
    start = time.perf_counter()
    scenario.bind(settings)
    prepared = prepare(scenario, settings)  # a data error fails here, before any model call
    check_gold_actions(scenario)  # so does a malformed gold definition (the replay itself runs later)
    side = agent_side_for(agent)
    need_dbs = bool(scenario.db_state_assertions) or settings.save_db
    line = phone_line_for(scenario, settings, settings.seed if seed is None else seed)
    try:
        try:
            seat = await side.open(prepared, user)
        except InfrastructureError as exc:
            result = ConversationResult([], "error", 0, 0.0, exc)
            await _close_quietly(user)
        else:
            result = await Conversation(
                agent=seat.participant,
                user=user,
                agent_env=seat.agent_env,
                user_env=seat.user_env,
                agent_prompt=scenario.get_agent_prompt(),
                user_prompt=scenario.get_user_prompt() if line is None else line.user_prompt,
                limits=limits_for(scenario, settings),
                greeting=scenario.agent_greeting,
                history=list(scenario.message_history or []),
                spend=conversation_spend(usage) if usage is not None else None,
                closing_turn=getattr(scenario, "upstream_view", None) is None,  # --tau2-prompts seed
                line=seat.line(line) if line is not None and seat.line is not None else line,
            ).run()
        gold = gold_replay(scenario, settings)
        expected = gold.hashes if gold is not None else None
        try:
            final = await side.final_state(prepared, result, expected_hashes=expected, need_dbs=need_dbs)
        except InfrastructureError as exc:
            result = replace(result, stop_reason="error", error=exc)
            final = await side.final_state(prepared, result, expected_hashes=expected, need_dbs=need_dbs)
    finally:
        await side.close()

    judge_outcome = None
    judge_error: InfrastructureError | None = None
    if judge is not None and scenario.nl_assertions and result.error is None:
        try:
            judge_outcome = await judge.judge(scenario.nl_assertions, result.transcript)
        except InfrastructureError as exc:
            # The judge could not grade (down, credentials, unreadable reply): the item's
            # infrastructure error, never a failed NL assertion of the agent. The conversation
            # keeps its own stop reason; what the judge was sent and answered is kept.
            judge_error = exc
            judge_outcome = JudgeOutcome(
                verdicts=[],
                judge_input=list(getattr(exc, "judge_input", None) or []),
                raw_reply=getattr(exc, "raw_reply", None),
                error=str(exc),
                model=getattr(exc, "model", None),
            )
    signals, checks, evidence = score(
        ScoringInput(
            scenario=scenario,
            conversation=result,
            final=final,
            expected_hashes=expected,
            expected_dbs=lambda: gold_dbs(scenario, settings),
            judge=judge_outcome,
            judge_configured=judge is not None,
        )
    )
    extra: dict[str, Any] = {"initialization": prepared.initialization}
    if final.details:
        extra["remote"] = final.details
    verdict = scenario_verdict(scenario, signals)  # made once, in scoring
    stalled = 0 < settings.min_agent_turns and result.agent_turns < settings.min_agent_turns
    divergence = None
    if (stalled or verdict.is_successful is False) and result.error is None:
        divergence = divergence_from_gold(scenario, result.transcript, prepared.envs)
    if line is not None:
        extra["voice"] = line
    return ScenarioOutcome(
        scenario=scenario,
        conversation=result,
        signals=signals,
        checks=checks,
        verdict=verdict,
        stalled=stalled,
        final_dbs=final.dbs,
        gold=gold,
        tool_errors=final.tool_errors,
        recorded_actions=final.actions,
        judge=judge_outcome,
        judge_error=judge_error,
        duration_s=time.perf_counter() - start,
        evidence=evidence,
        extra=extra,
        first_divergence=divergence,
    )


def divergence_from_gold(
    scenario: Scenario, transcript: list[dict[str, Any]], envs: Mapping[str, Environment]
) -> Divergence | None:
    """The first divergence of a failed conversation from the scenario's gold actions (None without gold)."""
    gold = scenario.gold_actions()
    if not gold:
        return None

    def writes(side: str, name: str) -> bool:
        env = envs.get(side)
        return env is not None and env.writes(name)

    return first_divergence(gold, transcript, writes)


def check_gold_actions(scenario: Scenario) -> None:
    """The gold actions can be replayed: a list of ``{"name": str, "arguments": mapping or JSON
    text or None, "requestor": str or None}``; else a ScenarioDefinitionError naming the action."""
    actions = scenario.gold_actions()
    if actions is None:
        return
    if not isinstance(actions, (list, tuple)):
        kind = type(actions).__name__
        raise ScenarioDefinitionError(f"{scenario.name}: gold_actions() must return a list, got a {kind}")
    for index, action in enumerate(actions):
        problem = None
        if not isinstance(action, Mapping):
            problem = f"is a {type(action).__name__}, not a mapping"
        elif not isinstance(action.get("name"), str):
            problem = "has no tool name (a string under 'name')"
        elif not isinstance(action.get("arguments"), (Mapping, str, type(None))):
            problem = "has 'arguments' that are neither a mapping nor JSON text"
        elif not isinstance(action.get("requestor"), (str, type(None))):
            problem = "has a 'requestor' that is not a string"
        if problem is not None:
            raise ScenarioDefinitionError(f"{scenario.name}: gold action {index} {problem}: {action!r}")


def phone_line_for(scenario: Scenario, settings: Settings, seed: int) -> Any:
    """The scenario's phone line under ``--tau2-speech-complexity`` (None when it is off): the
    scenario's own conditions (``speech_conditions``) over the preset's defaults, else the task's
    from tau2's ``tasks_voice.json``, else the preset's defaults (speech/presets.py); and the
    simulated user's prompt for the call (speech/caller.py)."""
    complexity = settings.speech_complexity
    if not complexity:
        return None
    from pytest_tau2.data.resolve import resolve_data_dir
    from pytest_tau2.speech.caller import call_user_prompt
    from pytest_tau2.speech.engines import engines_for
    from pytest_tau2.speech.line import PhoneLine, phone_line
    from pytest_tau2.speech.presets import default_preset, laid_over, task_preset

    data_dir = resolve_data_dir(settings.data_dir)
    own = scenario.speech_conditions(complexity)
    if own is not None:
        preset = laid_over(default_preset(complexity), own, f"{scenario.name}.speech_conditions()")
        preset["complexity"] = complexity
    else:
        task_id = getattr(scenario, "tau2_id", None) or None
        preset = task_preset(data_dir, scenario.domain.removeprefix("tau2_"), task_id, complexity)
    roles = settings.roles  # --tau2-tts-model / --tau2-asr-model, parsed once (None: the offline engine)
    if roles.tts is None and roles.asr is None:
        line = phone_line(preset, seed)
    else:
        tts, asr = engines_for(
            None if roles.tts is None else (roles.tts.model, roles.tts.args),
            None if roles.asr is None else (roles.asr.model, roles.asr.args),
            settings.llm_timeout,
        )
        line = PhoneLine(preset, seed, tts, asr)
    line.user_prompt = call_user_prompt(scenario, preset, data_dir)
    return line


async def _close_quietly(participant: Any) -> None:
    closer = getattr(participant, "aclose", None)
    if closer is not None:
        try:
            await closer()
        except Exception:  # closing must not mask the outcome
            pass
