"""The result record: one pydantic model of metrics.json (and, in :mod:`.run_record`, of the run-level files).

:class:`ScenarioRecord` is what one scenario's ``metrics.json`` holds;
:class:`~pytest_tau2.report.run_record.RunMetrics` is ``all_metrics.json`` and
:class:`~pytest_tau2.report.run_record.RunInfo` is ``run.json``. Every reader of these files (the run summary,
pass^k, merge, resume, the HTML report, JUnit properties) goes through them, and every writer produces its text from
:meth:`ScenarioRecord.document`, which fixes the order of the keys: no other module reads or writes a result by key.

**The signal fields** (a value per signal, the per-item evidence of rate signals, the details
fields of a spec) come from the signal table, which can grow at run time
(:func:`~pytest_tau2.scoring.signals.register_signal`). They are real pydantic fields of a
subclass that :func:`record_type` builds from the table (``pydantic.create_model``, once per
state of the table, ~1 ms), not ``extra`` values of the fixed class, because:

- a custom signal's value is then validated and typed like a built-in one's (a file whose
  ``is_polite`` is ``"yes"`` is refused naming the field), and the JSON Schema of the whole
  file is one ``model_json_schema`` call (:mod:`pytest_tau2.report.metrics`);
- ``model_extra`` keeps one meaning: fields this version does not know (written by a newer
  version), which the HTML report shows as they are.

Static type checkers cannot see fields made at run time, so code reads them through typed
accessors: :meth:`ScenarioRecord.signal`, :meth:`~ScenarioRecord.evidence`,
:meth:`~ScenarioRecord.detail`. Records are made with :meth:`ScenarioRecord.read` (a file's
object, or a record already) so they always carry the table's fields.

**Reading is lenient, writing is exact.** Every field but ``scenario`` has a default, so a file
of an older or newer version loads; the writer sets every field. A document is dumped with
``exclude_unset``, so a file read and written back (resume, merge, all_metrics.json) keeps
exactly the keys it had. The constraints the writer keeps (``trial >= 1``, the stop reasons)
are stated in the JSON Schema only (``json_schema_extra``): a reader takes a file that breaks
them, as the report always has.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, ClassVar, TypeVar, cast

from pydantic import ConfigDict, Field, WithJsonSchema, create_model

from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.report import subresults
from pytest_tau2.report.record_base import LIMIT_STOP_REASONS as LIMIT_STOP_REASONS  # re-exported
from pytest_tau2.report.record_base import RECORD_MODES as RECORD_MODES  # re-exported
from pytest_tau2.report.record_base import (
    STOP_REASONS,
    JsonValue,
    MetricNames,
    Number,
    SignalName,
    marked,
    ref,
)
from pytest_tau2.report.record_base import Part as Part  # re-exported
from pytest_tau2.report.record_parts import DataPin, Labels, Recording
from pytest_tau2.scenario.trial_ids import trial_id
from pytest_tau2.scoring.signals import SignalSpec, signal_specs

SCHEMA_VERSION = 1
R = TypeVar("R", bound="ScenarioRecord")


class Check(Part):
    """One sub-result; ``passed`` is None for a check that does not apply (skipped)."""

    id: str = Field(json_schema_extra={"minLength": 1})
    signal: SignalName = ""
    passed: bool | None = None
    message: str | None = Field("", json_schema_extra={"type": "string"})
    """None only from a custom signal that gave no message (written as it came)."""

    def sub_result(self) -> subresults.SubResult:
        return subresults.SubResult(self.id, self.passed, self.message)


class Usage(Part):
    """One side's LLM usage."""

    model_config = ConfigDict(title="usage")  # kept as ``$defs/usage`` in the schema
    calls: int = Field(0, json_schema_extra={"minimum": 0})
    prompt_tokens: int = Field(0, json_schema_extra={"minimum": 0})
    completion_tokens: int = Field(0, json_schema_extra={"minimum": 0})
    total_tokens: int = Field(0, json_schema_extra={"minimum": 0})
    cost_usd: Number | None = Field(None, description="null when a call of this side was unpriced.")
    replayed_calls: int = Field(
        0,
        description="Present when some of this side's calls were replayed from a cassette: their tokens and cost "
        "are the recorded call's, not new spend.",
        json_schema_extra={"minimum": 0},
    )
    unknown_usage: dict[str, int] = Field(
        default_factory=dict,
        description="Present when some calls reported a usage count that is not a token count (negative, a "
        "string...): by field, how many; the token sums leave those counts out.",
    )
    OPTIONAL: ClassVar[tuple[str, ...]] = ("replayed_calls", "unknown_usage")
    """Fields the writer leaves out when they are zero (not required by the schema)."""


class Breakdown(Part):
    """How ``is_successful`` was reached, by metrics field name."""

    passed: MetricNames = []
    failed: MetricNames = []
    not_applicable: MetricNames = []
    excluded: dict[str, bool | Number | None] = Field(
        default_factory=dict,
        description="Signals outside the whitelist with their values; they never gate.",
        json_schema_extra={
            "propertyNames": ref("metric_name"),
            "additionalProperties": {"type": ["boolean", "number", "null"]},
        },
    )


_MODEL = {
    "anyOf": [
        {"type": "null"},
        {
            "type": "object",
            "required": ["model", "args"],
            "properties": {"model": {"type": "string", "minLength": 1}, "args": {"type": "object"}},
        },
    ]
}
"""``$defs/model``: one side's model configuration (``ModelConfig.safe_dict``)."""
Models = Annotated[
    dict[str, dict[str, object] | list[dict[str, object]] | None],
    WithJsonSchema(
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["agent", "user", "judge"],
            "properties": {  # "judges": only with several judges, each one's model ("judge" is the first)
                **{side: ref("model") for side in ("agent", "user", "judge")},
                "judges": {"type": "array", "items": ref("model")},
            },
        }
    ),
]
"""Per side ``{model, args}`` or None. A plain mapping: ``args`` are the user's model arguments."""
Verdict = Annotated[
    bool | str | None,
    WithJsonSchema({"anyOf": [{"type": "boolean"}, {"type": "string", "const": "N/A"}]}),
]

HEAD = ("schema_version", "scenario", "domain", "tau2_id", "description", "trial", "trials", "seed")
"""metrics.json's first keys; then one value per signal (table order)."""
MIDDLE = (
    "judge_score", "success_signals", "is_successful", "success_breakdown", "stalled", "stop_reason",
    "infrastructure_error", "agent_turns", "duration_s", "conversation_duration_s", "tool_errors", "resumed",
)  # fmt: skip
"""After the signal values; then the evidence fields, then the details fields (table order)."""
TAIL = (
    "first_divergence", "review", "checks", "token_usage", "recording", "agent", "user", "models", "data_pin", "labels",
    "voice",
)  # fmt: skip


class ScenarioRecord(Part):
    """One scenario's result, as metrics.json holds it (docs/output-files.md).

    The signal fields are added by :func:`record_type`; read them with :meth:`signal`,
    :meth:`evidence` and :meth:`detail`.
    """

    model_config = ConfigDict(title="pytest-tau2 metrics.json")
    schema_version: int = Field(
        SCHEMA_VERSION, description="Version of this document's layout.", json_schema_extra={"const": SCHEMA_VERSION}
    )
    scenario: str = Field(
        description="The scenario name, '<domain>__<case>'; also the pytest parameter id.",
        json_schema_extra={"pattern": "^[^_].*__.+$"},
    )
    domain: str = Field(
        "", description="The part of the scenario name before '__'.", json_schema_extra={"minLength": 1}
    )
    tau2_id: str | None = Field(
        None, description="Upstream tau2-bench task id for tau2 ports; null for other scenarios."
    )
    description: str = Field("", description="The scenario's one-line description.")
    trial: int | None = Field(
        None,
        description="Which trial of the scenario this result is (1..trials); see docs/leaderboard.md.",
        json_schema_extra={"type": "integer", "minimum": 1},
    )
    trials: int | None = Field(
        None,
        description="Trials per scenario in this run (--tau2-trials).",
        json_schema_extra={"type": "integer", "minimum": 1},
    )
    seed: int | None = Field(
        None,
        description="This trial's seed, derived from --tau2-seed and the trial index; passed to the agent and user "
        "models unless their args set one.",
    )
    judge_score: Number | None = Field(None, description="An overall judge score; reserved, null in this version.")
    success_signals: list[str] = Field(
        default_factory=list,
        description="The scenario's whitelist: the signals that gate is_successful.",
        json_schema_extra={"items": ref("signal"), "minItems": 1, "uniqueItems": True},
    )
    is_successful: Verdict = Field(
        None,
        description="Strict AND of the whitelisted signals that have a value (false when stalled or on an "
        "infrastructure error); 'N/A' when none has a value.",
    )
    success_breakdown: Breakdown = Field(
        default_factory=Breakdown, description="How is_successful was reached, by metrics field name."
    )
    stalled: bool = Field(
        False,
        description="The agent spoke fewer than --tau2-min-agent-turns times: the test failed as stalled.",
    )
    stop_reason: str = Field(
        "", description="Why the conversation ended.", json_schema_extra={"enum": list(STOP_REASONS)}
    )
    infrastructure_error: str | None = Field(
        None,
        description="What failed outside the agent under test (LLM transport, WebSocket...), secrets redacted; "
        "null when nothing did.",
    )
    agent_turns: int = Field(
        0,
        description="Agent messages with text (tool-call-only steps and a fixed greeting do not count).",
        json_schema_extra={"minimum": 0},
    )
    duration_s: float = Field(
        0.0,
        description="Wall-clock seconds of the whole scenario: seeding, gold replay, conversation, scoring.",
        json_schema_extra={"minimum": 0},
    )
    conversation_duration_s: float = Field(0.0, description="Wall-clock seconds of the conversation alone.", ge=0)
    tool_errors: int = Field(0, description="Tool calls that returned an error result (both sides).", ge=0)
    resumed: bool = Field(
        False, description="True when --tau2-resume read this result back from the saved run instead of running it."
    )
    first_divergence: dict[str, JsonValue] | None = Field(
        None,
        description="A failed scenario's first step off every gold path (docs/review.md); null when it passed, has no "
        "gold actions, or every write followed the gold.",
    )
    review: dict[str, JsonValue] | None = Field(
        None,
        description="A model's review of the conversation's agent and user-simulator errors (pytest-tau2 review, "
        "--tau2-review; docs/review.md); null when it was not reviewed. Never changes the verdict.",
    )
    checks: list[Check] = Field(
        default_factory=list,
        description="Every sub-result, including those of excluded signals; passed is null for a skipped (not "
        "applicable) check.",
    )
    token_usage: dict[str, Usage] = Field(
        default_factory=dict,
        description="LLM usage per side; agent, user and judge are always present.",
        json_schema_extra={"required": ["agent", "user", "judge"]},
    )
    recording: Recording | None = Field(
        None,
        description="Record/replay of model calls (--tau2-record-mode): the mode, the scenario's cassette file, and "
        "how many calls were replayed from it and recorded into it; null when recording is off or no model was "
        "called.",
    )
    agent: str = Field(
        "",
        description="The agent used: oracle, litellm:<model>, websocket:<url>, replay:<path>, or, for an agent a "
        "conftest's tau2_agent fixture made, python:<module>.<class>@<version> (its tau2_version attribute, else "
        "sha256: and 12 hex digits of its class's source).",
    )
    user: str = Field(
        "",
        description="The user simulator used: scripted, litellm:<model>, or python:<module>.<class>@<version> for "
        "a tau2_user fixture's own.",
    )
    models: Models = Field(
        default_factory=dict,
        description="Model configuration per side (credentials masked); null for a side without a model.",
    )
    data_pin: DataPin | None = Field(None, description="Provenance of tau2 data (null for in-repo domains).")
    labels: Labels = Field(
        default_factory=Labels,
        description="The user persona's behavior_config and voice_config: for slicing results, never shown to a model.",
    )
    voice: JsonValue = Field(None, description="The phone call (--tau2-speech-complexity; docs/voice.md), else null.")

    _layout: ClassVar[tuple[str, ...]] = ()
    """The keys of a document, in order (set on the classes :func:`record_type` builds)."""
    _made_from: ClassVar[type[ScenarioRecord] | None] = None
    """The class a table-made class extends (None for the fixed classes)."""

    # ---- reading ------------------------------------------------------------------------------

    @classmethod
    def read(cls: type[R], data: Mapping[str, object] | ScenarioRecord) -> R:
        """A record of the current signal table from a file's object (or a record already)."""
        kind = record_type(cls)
        if isinstance(data, kind) or (isinstance(data, cls) and type(data) is record_type(type(data))):
            return data  # validated when made: of the current table (also a subclass's, the report's)
        if isinstance(data, ScenarioRecord):
            data = data.document()
        return kind.model_validate(data)

    def signal(self, spec: SignalSpec | str) -> bool | float | None:
        """The value of a signal (a spec, or its metrics field name); None when absent."""
        value = getattr(self, spec.metric if isinstance(spec, SignalSpec) else spec, None)
        return value if value is None or isinstance(value, bool | int | float) else None

    def evidence(self, spec: SignalSpec) -> list[dict[str, object]]:
        """A rate signal's per-item verdicts (empty for a bool signal or when absent)."""
        found = getattr(self, spec.evidence_field, None) if spec.evidence_field else None
        return list(found) if isinstance(found, list) else []

    def items_passed(self, spec: SignalSpec) -> list[object]:
        """The ``passed`` of each evidence item of a rate signal (True, False, None: not judged)."""
        return [item.get("passed") if isinstance(item, Mapping) else None for item in self.evidence(spec)]

    def detail(self, name: str) -> object:
        """A field the signal table adds, by name (a details field such as ``tau2_reward_info``, an
        evidence list); None when absent. Prefer :meth:`signal` and :meth:`evidence` with a spec."""
        return getattr(self, name, None)

    def written(self, *names: str) -> bool:
        """Whether the file had every one of these fields (defaults stand in for missing ones)."""
        return all(name in self.model_fields_set or name in (self.model_extra or {}) for name in names)

    @property
    def folder(self) -> str:
        """The result folder of this record: the scenario name, or ``<name>-t<k>`` for one of several trials."""
        return trial_id(self.scenario, int(self.trial or 1), int(self.trials or 1))

    @property
    def gating(self) -> list[str]:
        """The signals that gate the verdict (every signal of the table when the file names none)."""
        return list(self.success_signals) or [spec.key for spec in signal_specs()]

    def gating_checks(self) -> list[Check]:
        """The checks of whitelisted signals: the item's sub-results (excluded signals never gate)."""
        gating = set(self.success_signals)
        return [check for check in self.checks if check.signal in gating]

    def tau2_not_evaluated(self) -> list[str]:
        """The tau2 reward components left out of this trial's reward (no judge for NL assertions...)."""
        info = self.detail("tau2_reward_info")
        found = info.get("not_evaluated") if isinstance(info, Mapping) else None
        return [str(component) for component in found or []]

    @staticmethod
    def junit_property(name: str) -> bool:
        """Whether ``name`` is one of the properties :meth:`junit_properties` writes."""
        if name.startswith(subresults.PROPERTY_PREFIX):
            return True
        fixed = ("is_successful", "stop_reason", "stalled", "agent_turns", "infrastructure_error", "resumed")
        return name in fixed or name in {spec.metric for spec in signal_specs()}

    def junit_properties(self) -> list[tuple[str, str]]:
        """The item's JUnit properties: verdict, stop reason, every signal, the gating sub-results."""
        fixed = {
            "is_successful": self.is_successful,
            "stop_reason": self.stop_reason,
            "stalled": self.stalled,
            "agent_turns": self.agent_turns,
        }
        props = [(name, _prop(value)) for name, value in fixed.items()]
        props += [(spec.metric, _prop(self.signal(spec))) for spec in signal_specs()]
        props += subresults.properties([check.sub_result() for check in self.gating_checks()])
        if self.infrastructure_error:
            props.append(("infrastructure_error", self.infrastructure_error))
        if self.resumed:
            props.append(("resumed", "true"))
        return props

    # ---- writing ------------------------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        """The record as metrics.json holds it: plain values, keys in the file's order, only the
        fields that were set (all of them for a record the plugin made) and any unknown ones."""
        data = self.model_dump(exclude_unset=True)
        layout = self._layout or record_type(type(self))._layout
        ordered = {name: data[name] for name in layout if name in data}
        if len(ordered) < len(data):  # fields of other versions, after the known ones
            ordered.update((name, value) for name, value in data.items() if name not in ordered)
        return ordered


def _prop(value: object) -> str:
    if value is None:
        return "N/A"
    return value if isinstance(value, str) else json.dumps(value)


# ---- the classes of the current signal table ------------------------------------------------------

_TYPES: dict[type[ScenarioRecord], tuple[tuple[SignalSpec, ...], type[ScenarioRecord]]] = {}


def record_type(base: type[R]) -> type[R]:
    """``base`` (:class:`ScenarioRecord` or a subclass) with one field per signal of the table (value,
    evidence, details), made once per state of the table: a signal registered later gives a new
    class on the next call. A class this function made maps back to its base."""
    base = base.__dict__.get("_made_from") or base
    specs = tuple(signal_specs())
    cached = _TYPES.get(base)
    if cached is not None and len(cached[0]) == len(specs) and all(map(operator.is_, cached[0], specs)):
        return cached[1]  # type: ignore[return-value]
    fields: dict[str, Any] = {}
    for spec in specs:
        value_type = bool | None if spec.kind == "bool" else Number | None
        fields[spec.metric] = (
            Annotated[value_type, WithJsonSchema(cast("JSONObject", marked(spec.value_schema())))],
            None,
        )
    for spec in specs:
        if spec.evidence_field:
            evidence = {
                "description": f"One verdict per item of {spec.key.upper()}, in order (empty when none was made).",
                "type": "array",
                "items": marked(spec.evidence_schema or {"type": "object"}),
            }
            fields[spec.evidence_field] = (Annotated[list[dict[str, object]], WithJsonSchema(evidence)], [])
    for spec in specs:
        for name, schema in (spec.details_schema or {}).items():
            fields[name] = (Annotated[object, WithJsonSchema(cast("JSONObject", marked(schema)))], None)
    kind = create_model(base.__name__, __base__=base, __module__=base.__module__, **fields)
    values = [spec.metric for spec in specs]
    kind._layout = (*HEAD, *values, *MIDDLE, *(n for n in fields if n not in values), *TAIL)
    kind._made_from = base
    _TYPES[base] = (specs, kind)
    return kind


def read_records(items: Iterable[Mapping[str, object] | ScenarioRecord]) -> list[ScenarioRecord]:
    """Records from file objects or records (records of the current table are taken as they are)."""
    return [ScenarioRecord.read(item) for item in items]
