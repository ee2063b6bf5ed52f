"""The success signals as one table, and the scoring of one finished scenario.

A *signal* is a value saved in metrics.json (bool, a 0..1 pass rate, or None when it does not
apply); a *check* is one pytest sub-result with its evidence. Each signal is a
:class:`SignalSpec` in :data:`SIGNALS`: its key (the name scenarios whitelist), its
metrics.json field (also the JUnit property), its summary label, how the summary counts it,
its JSON Schema and its docs line, and the function that computes it. The verdict, metrics.json
and its schema, JUnit properties, the run summary and the docs table are all read from this
table, so a new signal is one :func:`register_signal` call plus its compute function.

Scoring reads plain values only: the expected hashes of the gold replay, the
:class:`FinalState` that the agent side reported, the transcript and the judge's verdicts.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pytest_tau2.environment.db import canonical_json, db_diff, db_hash

if TYPE_CHECKING:
    from pytest_tau2.conversation.loop import ConversationResult
    from pytest_tau2.scenario.base import Scenario


class SuccessSignal(enum.StrEnum):
    """The built-in signals. Members equal their key strings, so either indexes a signals dict."""

    ACTION_MATCH = "action_match"
    DB_STATE_MATCH = "db_state_match"
    DB_STATE_ASSERTION = "db_state_assertion"
    NL_ASSERTION = "nl_assertion"
    JUDGE_PASSED = "judge_passed"
    CLEAN_EXIT = "clean_exit"

    @property
    def metric(self) -> str:
        """The field name of this signal in ``metrics.json``."""
        return SIGNALS[self.value].metric


class SignalKey(str):
    """The key of a signal added with :func:`register_signal`, as a scenario whitelists it
    (``success_signals = (SuccessSignal.CLEAN_EXIT, MY_SPEC.signal)``). A plain string is refused
    there, so a typo is a definition error rather than a signal that never gates."""

    __slots__ = ()


# ---- what scoring reads -----------------------------------------------------------------------


@dataclass
class Check:
    """One sub-result: ``passed`` is None when the check does not apply (shown as skipped)."""

    id: str
    signal: str
    """The signal's key (a :class:`SuccessSignal` member for the built-ins)."""
    passed: bool | None
    message: str = ""


@dataclass
class JudgeOutcome:
    """The NL judge's per-assertion verdicts for one scenario."""

    verdicts: list[dict[str, Any]]
    judge_input: list[dict[str, Any]] = field(default_factory=list)
    raw_reply: str | None = None
    error: str | None = None
    model: str | None = None


@dataclass
class FinalState:
    """What the sides ended with, as the agent side reported it.

    ``dbs`` holds each side's final DB when it is at hand (a remote bot sends its DB only when
    asked); ``hashes`` holds hashes that were reported rather than computed here. ``missing``
    says why there is no final state at all (e.g. the bot's session failed).
    """

    actions: list[dict[str, Any]]
    dbs: dict[str, Any]
    hashes: dict[str, str | None] = field(default_factory=dict)
    tool_errors: int = 0
    dbs_on_wire: bool = False
    """True when ``dbs`` came over the wire (plain JSON trees): diffs then compare wire forms."""
    missing: str | None = None
    notes: list[str] = field(default_factory=list)
    """Hints appended to a DB mismatch (e.g. a bot whose hash recipe differs)."""
    details: dict[str, Any] = field(default_factory=dict)
    """Extra facts for metrics.json (the remote session, its hashes)."""

    def hash_of(self, side: str) -> str | None:
        if side in self.hashes:
            return self.hashes[side]
        db = self.dbs.get(side)
        return db_hash(db) if db is not None else None


@dataclass
class ScoringInput:
    """Everything one scenario is scored from, as plain values."""

    scenario: Scenario
    conversation: ConversationResult
    final: FinalState
    expected_hashes: dict[str, str | None] | None
    """Per-side hashes of the gold replay; None when the scenario has no gold trajectory."""
    expected_dbs: Callable[[], dict[str, Any]]
    """The gold DBs themselves, recomputed on demand (only a mismatch needs them, for the diff)."""
    judge: JudgeOutcome | None = None
    judge_configured: bool = False
    computed: dict[str, SignalResult] = field(default_factory=dict)
    """The results of the signals computed so far (lower ``check_order`` first), so a signal that
    combines others (``tau2_reward``) reads their values instead of recomputing them."""


@dataclass
class SignalResult:
    value: bool | float | None
    checks: list[Check]
    evidence: list[dict[str, Any]] = field(default_factory=list)
    """Per-item verdicts (assertions, predicates) saved under the spec's ``evidence_field``."""
    details: dict[str, Any] = field(default_factory=dict)
    """Further metrics.json fields of this signal, by field name (the spec's ``details_schema``)."""


# ---- the table --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SignalSpec:
    key: str
    """The name a scenario whitelists in ``success_signals`` (and the checks' ``signal``)."""
    metric: str
    """Its field in metrics.json, and its JUnit property."""
    label: str
    """Its line in the run summary."""
    kind: Literal["bool", "rate"]
    """``bool``; or ``rate``: a 0..1 pass rate over per-item evidence, passing only at 1.0."""
    compute: Callable[[ScoringInput], SignalResult]
    description: str
    """What the value means; the docs table and the JSON Schema use it."""
    not_applicable_when: str
    unit: str = ""
    """What the summary counts for a rate signal (``assertions``); bool signals count scenarios."""
    evidence_field: str | None = None
    """metrics.json field with the per-item verdicts; the summary counts their ``passed``."""
    evidence_schema: Mapping[str, Any] | None = None
    check_order: int = 100
    """Where this signal's sub-results appear among the item's (lower first; ties: table order)."""
    details_schema: Mapping[str, Mapping[str, Any]] | None = None
    """metrics.json fields this signal adds beside its value (field -> JSON Schema); always
    written, null when the compute function gave none."""

    @property
    def signal(self) -> SuccessSignal | SignalKey:
        """What a scenario puts in ``success_signals`` to whitelist this signal."""
        if self.key in SuccessSignal.__members__.values():
            return SuccessSignal(self.key)
        return SignalKey(self.key)

    def value_schema(self) -> dict[str, Any]:
        text = f"{self.key.upper()}: {self.description} (null: {self.not_applicable_when})."
        if self.kind == "bool":
            return {"description": text, "type": ["boolean", "null"]}
        return {"description": text, "anyOf": [{"type": "null"}, {"type": "number", "minimum": 0, "maximum": 1}]}


SIGNALS: dict[str, SignalSpec] = {}
"""Every signal by key, in report order."""


def register_signal(spec: SignalSpec) -> SignalSpec:
    """Add a signal to the table (a second, different spec under one key or field is refused)."""
    clash = next((s for s in SIGNALS.values() if s.key != spec.key and s.metric == spec.metric), None)
    if clash is not None:
        raise ValueError(f"signal {spec.key!r} uses metrics field {spec.metric!r}, already used by {clash.key!r}")
    existing = SIGNALS.get(spec.key)
    if existing is not None and existing != spec:
        raise ValueError(f"signal {spec.key!r} is already registered with another spec")
    SIGNALS[spec.key] = spec
    return spec


def unregister_signal(key: str) -> None:
    """Remove a registered signal (tests and plugins that add one temporarily)."""
    if key in SuccessSignal.__members__.values():
        raise ValueError(f"{key!r} is a built-in signal")
    SIGNALS.pop(key, None)


def signal_specs() -> Iterator[SignalSpec]:
    return iter(tuple(SIGNALS.values()))


def score(inp: ScoringInput) -> tuple[dict[str, Any], list[Check], dict[str, Any]]:
    """Each signal computed once: values by key, every check, and evidence and details by metrics field."""
    values: dict[str, Any] = {}
    checks: list[Check] = []
    evidence: dict[str, Any] = {}
    for spec in sorted(signal_specs(), key=lambda s: s.check_order):
        result = spec.compute(inp)
        inp.computed[spec.key] = result
        values[spec.key] = result.value
        checks.extend(result.checks)
        if spec.evidence_field is not None:
            evidence[spec.evidence_field] = result.evidence
        for name in spec.details_schema or {}:
            evidence[name] = result.details.get(name)
    return {spec.key: values[spec.key] for spec in signal_specs()}, checks, evidence


def docs_table() -> str:
    """The signals table of docs/scoring.md (a test keeps the page in step with the table)."""
    rows = [
        "| signal | `metrics.json` field | value | not applicable (null) when |",
        "|---|---|---|---|",
    ]
    for spec in signal_specs():
        value = "bool" if spec.kind == "bool" else "pass rate 0..1"
        rows.append(f"| `{spec.key.upper()}` | `{spec.metric}` | {value} | {spec.not_applicable_when} |")
    return "\n".join(rows)


# ---- the six built-in signals ----------------------------------------------------------------


def _clean_exit(inp: ScoringInput) -> SignalResult:
    clean = inp.conversation.clean_exit
    message = (
        ""
        if clean
        else f"the conversation did not end with the agent's exit tool (stop_reason: {inp.conversation.stop_reason})"
    )
    return SignalResult(clean, [Check("clean_exit", SuccessSignal.CLEAN_EXIT, clean, message)])


def _action_match(inp: ScoringInput) -> SignalResult:
    match = inp.scenario.action_match(inp.final.actions, inp.conversation.transcript)
    if match is None:
        return SignalResult(None, [Check("action_match", SuccessSignal.ACTION_MATCH, None, "no reference answer")])
    return SignalResult(match.matched, [Check("action_match", SuccessSignal.ACTION_MATCH, match.matched, match.reason)])


def _db_state_match(inp: ScoringInput) -> SignalResult:
    signal = SuccessSignal.DB_STATE_MATCH
    expected = inp.expected_hashes
    if expected is None:
        return SignalResult(None, [Check("db_state_match", signal, None, "the scenario has no gold actions")])
    if inp.final.missing is not None:
        return SignalResult(None, [Check("db_state_match", signal, None, inp.final.missing)])
    actual = {side: inp.final.hash_of(side) for side in expected}
    mismatched = [side for side in expected if expected[side] != actual[side]]
    if not mismatched:
        return SignalResult(True, [Check("db_state_match", signal, True)])
    expected_dbs = inp.expected_dbs()
    parts = []
    for side in mismatched:
        label = "DB" if side == "agent" else f"{side} DB"
        want, got = expected_dbs.get(side), inp.final.dbs.get(side)
        if got is None:
            diff = "(the agent side did not send its DB)"
        elif inp.final.dbs_on_wire:
            diff = db_diff(_wire(want), got)
        else:
            diff = db_diff(want, got)
        parts.append(f"{label} hash {actual[side]} != expected {expected[side]}\ndiff (expected -> actual):\n{diff}")
    return SignalResult(False, [Check("db_state_match", signal, False, "\n".join(parts + inp.final.notes))])


def _wire(db: Any) -> Any:
    """``db`` as it travels (plain dicts, dates as text), so a diff shows values, not Python types."""
    return None if db is None else json.loads(canonical_json(db))


def _db_state_assertions(inp: ScoringInput) -> SignalResult:
    signal = SuccessSignal.DB_STATE_ASSERTION
    assertions = inp.scenario.db_state_assertions or []
    if not assertions:
        return SignalResult(None, [Check("db_state_assertion", signal, None, "no DB-state assertions")])
    from pytest_tau2.scoring.predicates import evaluate_db_state_assertion

    checks, verdicts = [], []
    for i, assertion in enumerate(assertions):
        verdict = evaluate_db_state_assertion(
            inp.scenario.predicate_domain, assertion, inp.final.dbs.get("agent"), inp.final.dbs.get("user")
        )
        message = "" if verdict["passed"] else _predicate_message(verdict, assertion)
        checks.append(
            Check(f"db_state_assertion[{i}:{verdict['func_name']}]", signal, bool(verdict["passed"]), message)
        )
        verdicts.append(verdict)
    return SignalResult(sum(bool(v["passed"]) for v in verdicts) / len(assertions), checks, verdicts)


def _predicate_message(verdict: dict[str, Any], assertion: dict[str, Any]) -> str:
    arguments = ", ".join(f"{k}={v!r}" for k, v in (assertion.get("arguments") or {}).items())
    text = (
        f"{verdict['func_name']}({arguments}) on the {verdict['side']} DB "
        f"returned {verdict['actual']!r}, expected {verdict['expected']!r}"
    )
    if verdict.get("message"):
        text += f": {verdict['message']}"
    if verdict.get("error"):
        text += f" [error: {verdict['error']}]"
    return text


def _nl_assertions(inp: ScoringInput) -> SignalResult:
    signal = SuccessSignal.NL_ASSERTION
    assertions = inp.scenario.nl_assertions or []
    if not assertions:
        return SignalResult(None, [Check("nl_assertion", signal, None, "no NL assertions")])
    judge = inp.judge
    if judge is None:
        reason = (
            "no judge verdict (the conversation ended in an error)"
            if inp.judge_configured
            else "no judge configured (--tau2-judge-model)"
        )
        return SignalResult(
            None, [Check(f"nl_assertion[{i}]", signal, None, f"{reason}: {text}") for i, text in enumerate(assertions)]
        )
    checks = []
    for verdict in judge.verdicts:
        ok = verdict["passed"] is True
        message = "" if ok else f"{verdict['assertion']}\njudge: {verdict['reason']}"
        checks.append(Check(f"nl_assertion[{verdict['index']}]", signal, ok, message))
    rate = sum(1 for v in judge.verdicts if v["passed"] is True) / len(assertions)
    return SignalResult(rate, checks, list(judge.verdicts))


def _judge_passed(inp: ScoringInput) -> SignalResult:
    # An overall judge opinion; no domain produces one yet.
    return SignalResult(
        None, [Check("judge_passed", SuccessSignal.JUDGE_PASSED, None, "no overall judge is configured")]
    )


_PREDICATE_VERDICT = {
    "type": "object",
    "required": ["func_name", "side", "passed", "expected", "actual", "message", "error"],
    "properties": {
        "func_name": {"type": ["string", "null"]},
        "side": {"type": ["string", "null"]},
        "passed": {"type": "boolean"},
        "expected": {"$ref": "#/$defs/json_value"},
        "actual": {"type": ["boolean", "null"]},
        "message": {"type": ["string", "null"]},
        "error": {"type": ["string", "null"]},
    },
}
_JUDGE_VERDICT = {
    "type": "object",
    "required": ["index", "assertion", "passed", "reason"],
    "properties": {
        "index": {"type": "integer", "minimum": 0},
        "assertion": {"type": "string"},
        "passed": {"type": ["boolean", "null"]},
        "reason": {"type": ["string", "null"]},
    },
}

for _spec in (
    SignalSpec(
        "action_match", "is_action_match", "Action match", "bool", _action_match,
        "the recorded write actions match the reference answer",
        "the scenario has no `reference_answer`",
    ),
    SignalSpec(
        "db_state_match", "db_state_match", "DB-state match", "bool", _db_state_match,
        "the final DB hash equals the gold replay's",
        "`gold_actions()` returns `None`",
    ),
    SignalSpec(
        "db_state_assertion", "db_state_assertion_pass_rate", "DB-state assertion pass", "rate",
        _db_state_assertions, "passed predicates / predicates", "no `db_state_assertions`",
        unit="predicates", evidence_field="db_state_assertion_verdicts", evidence_schema=_PREDICATE_VERDICT,
    ),
    SignalSpec(
        "nl_assertion", "nl_assertion_pass_rate", "NL-Assertion pass", "rate", _nl_assertions,
        "assertions the judge passed / assertions",
        "no `nl_assertions`, or no judge verdict (no `--tau2-judge-model`, or the conversation ended in an "
        "infrastructure error)",
        unit="assertions", evidence_field="nl_assertion_verdicts", evidence_schema=_JUDGE_VERDICT,
    ),
    SignalSpec(
        "judge_passed", "judge_passed", "Judge passed", "bool", _judge_passed,
        "an overall judge opinion", "always, in this version (no overall judge yet)",
    ),
    SignalSpec(
        "clean_exit", "clean_exit", "Clean exit", "bool", _clean_exit,
        "the agent ended the conversation itself (stop_reason 'exit' or 'transfer')", "never",
        check_order=0,  # the first sub-result of every item: did the agent finish the call itself?
    ),
):  # fmt: skip
    register_signal(_spec)
