"""The record's building blocks: the schema marks, the JSON value types, the stop reasons, :class:`Part`.

Split from :mod:`.record` (which re-exports every name here) so that the record's parts can live
in modules of their own (:mod:`.record_parts`) without an import circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import BaseModel, ConfigDict, WithJsonSchema

from pytest_tau2.environment.jsontypes import JSONObject

__all__ = [
    "LIMIT_STOP_REASONS", "RECORD_MODES", "STOP_REASONS", "JsonValue", "MetricNames", "Number", "Part",
    "SignalName", "marked", "ref",
]  # fmt: skip


def ref(name: str) -> JSONObject:
    """A JSON Schema reference to one of metrics.schema.json's ``$defs`` (made a ``$ref`` when the
    schema is generated: pydantic resolves ``$ref`` values it did not make itself)."""
    return {"x-ref": name}


def marked(schema: object) -> object:
    """A JSON Schema of the signal table with its ``$defs`` references as :func:`ref` marks."""
    if isinstance(schema, Mapping):
        target = schema.get("$ref")
        if isinstance(target, str) and target.startswith("#/$defs/"):
            return {**{k: marked(v) for k, v in schema.items() if k != "$ref"}, **ref(target.rsplit("/", 1)[-1])}
        return {k: marked(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [marked(item) for item in schema]
    return schema


Number = Annotated[float | int, WithJsonSchema({"type": "number"})]
"""A JSON number as written: an int stays an int, a float a float (a round trip keeps the text)."""
SignalName = Annotated[str, WithJsonSchema(ref("signal"))]
MetricNames = Annotated[list[str], WithJsonSchema(ref("metric_names"))]
JsonValue = Annotated[object, WithJsonSchema(ref("json_value"))]
"""A value kept as it came (pydantic checks nothing of it); its schema is ``$defs/json_value``."""
STOP_REASONS = (
    "exit", "transfer", "user_stop", "max_turns", "max_duration", "max_tokens", "max_cost", "max_messages",
    "too_many_tool_errors", "user_max_steps", "error", "timeout",
)  # fmt: skip
"""conversation/loop.py's stop reasons; "timeout" is max_duration's name in results of earlier versions."""
LIMIT_STOP_REASONS = frozenset({"max_turns", "max_duration", "max_tokens", "max_cost", "max_messages"})
RECORD_MODES = ("none", "once", "new_episodes", "all")


class Part(BaseModel):
    """A part of a result file: unknown keys are kept (a newer version's), every field has a default."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_serialization_defaults_required=True,
        json_schema_extra={"additionalProperties": False},
    )

    def document(self) -> dict[str, object]:
        """Plain values of the keys that were set (a part read from a file keeps exactly its keys)."""
        return self.model_dump(exclude_unset=True)
