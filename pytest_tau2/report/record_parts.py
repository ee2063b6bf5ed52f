"""Parts of the result record that are plain data: record/replay facts, the data pin, persona labels.

Split from :mod:`.record` (which re-exports them) to keep that module readable; each is a
:class:`~pytest_tau2.report.record_parts.Part`: unknown keys kept, every field with a default.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from pytest_tau2.report.record_base import RECORD_MODES, JsonValue, Part

__all__ = ["DataPin", "Labels", "Recording"]


class Recording(Part):
    """Record/replay of model calls for one scenario."""

    model_config = ConfigDict(
        json_schema_extra={
            "additionalProperties": False,
            "required": ["mode", "cassette", "replayed_calls", "recorded_calls"],  # not ``error``
        }
    )
    mode: str = Field("", json_schema_extra={"enum": list(RECORD_MODES)})
    cassette: str = Field("", json_schema_extra={"minLength": 1})
    replayed_calls: int = Field(0, json_schema_extra={"minimum": 0})
    recorded_calls: int = Field(0, json_schema_extra={"minimum": 0})
    error: str | None = Field(
        None,
        description="Present when the cassette could not be written (a full or unwritable cassette folder): the "
        "file and the reason. The scenario's result is saved and scored all the same.",
        json_schema_extra={"type": "string"},
    )


class DataPin(Part):
    """Provenance of the tau2 data a scenario read."""

    model_config = ConfigDict(json_schema_extra={})  # open: a domain may say more
    source: str | None = Field(None, json_schema_extra={"type": "string"})
    commit: str | None = Field(None, json_schema_extra={"type": "string"})
    pinned: bool | None = Field(None, json_schema_extra={"type": "boolean"})
    data_dir: str | None = Field(None, json_schema_extra={"type": "string"})


class Labels(Part):
    """The user persona's labels, for slicing results."""

    behavior_config: JsonValue = None
    voice_config: JsonValue = None
