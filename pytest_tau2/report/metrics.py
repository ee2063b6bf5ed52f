"""Build the per-scenario ``metrics.json`` document (schema: metrics.schema.json)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from pytest_tau2.scenario.model import SuccessSignal

if TYPE_CHECKING:
    from pytest_tau2.runner import ScenarioOutcome

SCHEMA_VERSION = 1


def build_metrics(
    outcome: ScenarioOutcome,
    *,
    models: dict[str, Any],
    data_pin: dict[str, Any] | None,
    token_usage: dict[str, Any],
    agent_kind: str,
    user_kind: str,
    infrastructure_error: str | None = None,
) -> dict[str, Any]:
    scenario = outcome.scenario
    signals = outcome.signals
    persona = scenario.user_persona
    return {
        "schema_version": SCHEMA_VERSION,
        "scenario": scenario.name,
        "domain": scenario.domain,
        "tau2_id": getattr(scenario, "tau2_id", None),
        "description": scenario.description,
        "is_action_match": signals.get(SuccessSignal.ACTION_MATCH),
        "db_state_match": signals.get(SuccessSignal.DB_STATE_MATCH),
        "db_state_assertion_pass_rate": signals.get(SuccessSignal.DB_STATE_ASSERTION),
        "nl_assertion_pass_rate": signals.get(SuccessSignal.NL_ASSERTION),
        "judge_score": None,
        "judge_passed": signals.get(SuccessSignal.JUDGE_PASSED),
        "clean_exit": signals.get(SuccessSignal.CLEAN_EXIT),
        "success_signals": [s.value for s in scenario.success_signals],
        "is_successful": outcome.is_successful if infrastructure_error is None else False,
        "success_breakdown": outcome.verdict.breakdown(),
        "stalled": outcome.stalled,
        "stop_reason": outcome.conversation.stop_reason,
        "infrastructure_error": infrastructure_error,
        "agent_turns": outcome.conversation.agent_turns,
        "duration_s": round(outcome.duration_s, 4),
        "conversation_duration_s": round(outcome.conversation.duration_s, 4),
        "tool_errors": outcome.tool_errors,
        "db_state_assertion_verdicts": outcome.extra.get("db_state_assertion_verdicts", []),
        "nl_assertion_verdicts": outcome.judge.verdicts if outcome.judge else [],
        "checks": [
            {"id": c.id, "signal": c.signal.value, "passed": c.passed, "message": c.message} for c in outcome.checks
        ],
        "token_usage": token_usage,
        "agent": agent_kind,
        "user": user_kind,
        "models": models,
        "data_pin": data_pin,
        "labels": {"behavior_config": persona.behavior_config, "voice_config": persona.voice_config},
    }


@cache
def metrics_schema() -> dict[str, Any]:
    """The JSON Schema of metrics.json, shipped in the package."""
    text = resources.files("pytest_tau2.report").joinpath("metrics.schema.json").read_text("utf-8")
    return dict(json.loads(text))
