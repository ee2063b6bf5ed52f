"""Build the per-scenario ``metrics.json`` document and its JSON Schema.

The signal fields (one value per signal, and the per-item evidence of rate signals) come from
the signal table (:mod:`pytest_tau2.scoring.signals`); everything else is fixed here and in
``metrics.schema.json``, whose signal parts are filled in from the same table.
"""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import TYPE_CHECKING, Any

from pytest_tau2.scoring.signals import signal_specs

if TYPE_CHECKING:
    from pytest_tau2.run.outcome import ScenarioOutcome

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
    trial: dict[str, Any] | None = None,
    recording: dict[str, Any] | None = None,
) -> dict[str, Any]:
    scenario = outcome.scenario
    persona = scenario.user_persona
    specs = list(signal_specs())
    metrics: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "scenario": scenario.name,
        "domain": scenario.domain,
        "tau2_id": getattr(scenario, "tau2_id", None),
        "description": scenario.description,
        "trial": (trial or {}).get("trial", 1),
        "trials": (trial or {}).get("trials", 1),
        "seed": (trial or {}).get("seed"),
    }
    metrics.update({spec.metric: outcome.signals.get(spec.key) for spec in specs})
    metrics["judge_score"] = None
    metrics.update(
        {
            "success_signals": [str(s) for s in scenario.success_signals],
            "is_successful": outcome.is_successful if infrastructure_error is None else False,
            "success_breakdown": outcome.verdict.breakdown(),
            "stalled": outcome.stalled,
            "stop_reason": outcome.conversation.stop_reason,
            "infrastructure_error": infrastructure_error,
            "agent_turns": outcome.conversation.agent_turns,
            "duration_s": round(outcome.duration_s, 4),
            "conversation_duration_s": round(outcome.conversation.duration_s, 4),
            "tool_errors": outcome.tool_errors,
            "resumed": False,
        }
    )
    metrics.update(
        {spec.evidence_field: outcome.evidence.get(spec.evidence_field, []) for spec in specs if spec.evidence_field}
    )
    metrics.update({name: outcome.evidence.get(name) for spec in specs for name in spec.details_schema or {}})
    metrics.update(
        {
            "checks": [
                {"id": c.id, "signal": str(c.signal), "passed": c.passed, "message": c.message} for c in outcome.checks
            ],
            "token_usage": token_usage,
            "recording": recording,
            "agent": agent_kind,
            "user": user_kind,
            "models": models,
            "data_pin": data_pin,
            "labels": {"behavior_config": persona.behavior_config, "voice_config": persona.voice_config},
        }
    )
    return metrics


def _base_schema() -> dict[str, Any]:
    text = resources.files("pytest_tau2.report").joinpath("metrics.schema.json").read_text("utf-8")
    return dict(json.loads(text))


_BASE = _base_schema()


def metrics_schema() -> dict[str, Any]:
    """The JSON Schema of metrics.json: the shipped file plus one field per registered signal."""
    schema = copy.deepcopy(_BASE)
    props, required, defs = schema["properties"], schema["required"], schema["$defs"]
    for spec in signal_specs():
        props[spec.metric] = spec.value_schema()
        required += [] if spec.metric in required else [spec.metric]
        if spec.evidence_field:
            props[spec.evidence_field] = {
                "description": f"One verdict per item of {spec.key.upper()}, in order (empty when none was made).",
                "type": "array",
                "items": dict(spec.evidence_schema or {"type": "object"}),
            }
            required += [] if spec.evidence_field in required else [spec.evidence_field]
        for name, field_schema in (spec.details_schema or {}).items():
            props[name] = dict(field_schema)
            required += [] if name in required else [name]
    keys = [spec.key for spec in signal_specs()]
    defs["signal"] = {"type": "string", "enum": keys}
    defs["metric_name"] = {"type": "string", "enum": [spec.metric for spec in signal_specs()]}
    return schema


def main() -> None:
    """``python -m pytest_tau2.report.metrics``: rewrite the shipped schema from the signal table."""
    path = resources.files("pytest_tau2.report").joinpath("metrics.schema.json")
    with resources.as_file(path) as file:
        file.write_text(json.dumps(metrics_schema(), indent=2) + "\n", "utf-8")
        print(f"wrote {file}")


if __name__ == "__main__":
    main()
