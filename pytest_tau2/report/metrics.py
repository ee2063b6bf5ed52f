"""One finished scenario as its result record, and metrics.json's JSON Schema generated from the record.

The record's fields are :class:`~pytest_tau2.report.record.ScenarioRecord`'s; its signal fields
come from the signal table (:func:`~pytest_tau2.report.record.record_type`). The schema is that
model's ``model_json_schema`` (serialization mode: what the writer always writes is required)
with a generator that writes the forms the shipped file uses (``["string", "null"]`` rather than
``anyOf``, no titles or defaults), the nested objects inlined, and the table's ``$defs`` (signal
keys, metrics field names). ``python -m pytest_tau2.report.metrics`` rewrites the shipped file.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from pytest_tau2.report.record import _MODEL, SCHEMA_VERSION, ScenarioRecord, Usage, record_type
from pytest_tau2.scoring.signals import SignalSpec, signal_specs

if TYPE_CHECKING:
    from pytest_tau2.scenario.outcome import ScenarioOutcome

__all__ = ["SCHEMA_VERSION", "build_metrics", "build_record", "metrics_schema"]


def build_record(
    outcome: ScenarioOutcome,
    *,
    models: Mapping[str, object],
    data_pin: Mapping[str, object] | None,
    token_usage: Mapping[str, object],
    agent_kind: str,
    user_kind: str,
    infrastructure_error: str | None = None,
    trial: Mapping[str, object] | None = None,
    recording: Mapping[str, object] | None = None,
) -> ScenarioRecord:
    """The result record of one finished scenario (every field set)."""
    scenario = outcome.scenario
    persona = scenario.user_persona
    specs = list(signal_specs())
    trial = trial or {}
    fields: dict[str, object] = {
        "schema_version": SCHEMA_VERSION,
        "scenario": scenario.name,
        "domain": scenario.domain,
        "tau2_id": getattr(scenario, "tau2_id", None),
        "description": scenario.description,
        "trial": trial.get("trial", 1),
        "trials": trial.get("trials", 1),
        "seed": trial.get("seed"),
        "judge_score": None,
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
        "first_divergence": outcome.first_divergence.to_dict() if outcome.first_divergence is not None else None,
        "review": outcome.review,
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
    fields.update({spec.metric: outcome.signals.get(spec.key) for spec in specs})
    fields.update(
        {spec.evidence_field: outcome.evidence.get(spec.evidence_field, []) for spec in specs if spec.evidence_field}
    )
    fields.update({name: outcome.evidence.get(name) for spec in specs for name in spec.details_schema or {}})
    line = outcome.extra.get("voice")  # a phone call's (speech/line.py PhoneLine), else None
    fields["voice"] = line.summary() if line is not None else None
    return record_type(ScenarioRecord).model_validate(fields)


def build_metrics(outcome: ScenarioOutcome, **facts: Any) -> dict[str, Any]:
    """metrics.json's object for one finished scenario: :func:`build_record`'s document."""
    return build_record(outcome, **facts).document()


# ---- the JSON Schema ---------------------------------------------------------------------------

SCHEMA_ID = "https://pytest-tau2.invalid/schemas/metrics.schema.json"
DESCRIPTION = (
    f"The result of one evaluation scenario, written to <run dir>/<scenario>/metrics.json (schema_version "
    f"{SCHEMA_VERSION}). Signal fields hold null when the signal is not applicable to the scenario. The signal "
    "fields are generated from the signal table (python -m pytest_tau2.report.metrics rewrites this file)."
)
_KEPT_DEFS = {Usage.__name__: "usage"}
"""Models kept as a ``$defs`` entry (referenced); every other nested model is written inline."""
_RATE = {"anyOf": [{"type": "null"}, {"type": "number", "minimum": 0, "maximum": 1}]}


class _Generator(GenerateJsonSchema):
    """pydantic's JSON Schema in the forms metrics.schema.json uses."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        inner = self.generate_inner(schema["schema"])
        if set(inner) == {"type"} and isinstance(inner["type"], str):
            return {"type": [inner["type"], "null"]}
        return {"anyOf": [{"type": "null"}, inner]}

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])  # defaults are for readers; the writer sets every field

    def field_title_should_be_set(self, schema: object) -> bool:
        return False


def _tidy(node: Any, defs: dict[str, Any]) -> Any:
    """Inline pydantic's model references, turn the record's ``x-ref`` marks into ``$ref`` and drop
    what the shipped file does not say (titles, ``additionalProperties: true``, models' docstrings)."""
    if isinstance(node, list):
        return [_tidy(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    rest = {k: v for k, v in node.items() if k not in ("$ref", "x-ref")}
    if "x-ref" in node:
        return {"$ref": f"#/$defs/{node['x-ref']}", **_tidy(rest, defs)}
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in _KEPT_DEFS:
            return {"$ref": f"#/$defs/{_KEPT_DEFS[name]}", **_tidy(rest, defs)}
        inlined = {k: v for k, v in defs[name].items() if k != "description"}
        return {**_tidy(inlined, defs), **_tidy(rest, defs)}
    out = {}
    for key, value in node.items():
        if (key == "title" and isinstance(value, str)) or (key == "additionalProperties" and value is True):
            continue
        out[key] = _tidy(value, defs)
    return out


def _generate(kind: type[ScenarioRecord], specs: list[SignalSpec]) -> dict[str, Any]:
    generated = kind.model_json_schema(mode="serialization", schema_generator=_Generator)
    defs = generated.pop("$defs", {})
    body = _tidy(generated, defs)
    usage = _tidy({k: v for k, v in defs[Usage.__name__].items() if k != "description"}, defs)
    usage["required"] = [name for name in usage["required"] if name not in Usage.OPTIONAL]
    properties = {name: body["properties"][name] for name in kind._layout}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": ScenarioRecord.model_config.get("title"),
        "description": DESCRIPTION,
        "type": "object",
        "additionalProperties": False,
        "required": list(properties),
        "properties": properties,
        "$defs": {
            "signal": {"type": "string", "enum": [spec.key for spec in specs]},
            "metric_name": {"type": "string", "enum": [spec.metric for spec in specs]},
            "metric_names": {"type": "array", "items": {"$ref": "#/$defs/metric_name"}, "uniqueItems": True},
            "pass_rate": copy.deepcopy(_RATE),
            "usage": usage,
            "model": copy.deepcopy(_MODEL),
            "json_value": {
                "description": "Any JSON value.",
                "type": ["object", "array", "string", "number", "boolean", "null"],
            },
        },
    }


_SCHEMAS: dict[type[ScenarioRecord], dict[str, Any]] = {}


def metrics_schema() -> dict[str, Any]:
    """The JSON Schema of metrics.json for the current signal table (a fresh copy)."""
    kind = record_type(ScenarioRecord)
    schema = _SCHEMAS.get(kind)
    if schema is None:
        _SCHEMAS.clear()  # one table at a time: a class made for an earlier table is not reused
        schema = _SCHEMAS[kind] = _generate(kind, list(signal_specs()))
    return copy.deepcopy(schema)


def main() -> None:
    """``python -m pytest_tau2.report.metrics``: rewrite the shipped schema from the record and the table."""
    path = resources.files("pytest_tau2.report").joinpath("metrics.schema.json")
    with resources.as_file(path) as file:
        file.write_text(json.dumps(metrics_schema(), indent=2) + "\n", "utf-8")
        print(f"wrote {file}")


if __name__ == "__main__":
    main()
