"""The signal table: the records a signal is computed from and gives, its spec, the registry.

A *signal* is a value saved in metrics.json (bool, a 0..1 pass rate, or None when it does not
apply); a *check* is one pytest sub-result with its evidence. Each signal is a
:class:`SignalSpec` in :data:`SIGNALS`: its key (the name scenarios whitelist), its
metrics.json field (also the JUnit property), its summary label, how the summary counts it,
its JSON Schema and its docs line, and the function that computes it.

This module holds the machinery only; read the table through :mod:`pytest_tau2.scoring.signals`,
which registers the built-in signals and tau2's reward (in that order) before anyone reads it.
Each key registered here is noted in :mod:`pytest_tau2.scoring.names`, the leaf a scenario
checks its whitelist against.

Scoring reads plain values only: the expected hashes of the gold replay, the
:class:`FinalState` that the agent side reported, the transcript and the judge's verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pytest_tau2.environment.db import db_hash
from pytest_tau2.extension.registry import Registry
from pytest_tau2.scoring.names import SignalKey, SuccessSignal, note_registered, note_unregistered

if TYPE_CHECKING:
    from pytest_tau2.conversation.loop import ConversationResult
    from pytest_tau2.environment.jsontypes import JSONObject
    from pytest_tau2.scoring.action_match import MatchResult


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
    panel: list[dict[str, Any]] = field(default_factory=list)
    """A jury's judges, each ``{"judge", "model", "nl_assertion_verdicts", "raw_reply"}`` (empty: one judge)."""


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


class ScoredScenario(Protocol):
    """What the built-in signals read of a scenario (``scenario.base.Scenario`` has it all, and a
    signal of another package may read more of it). Scoring sits below the scenario package
    (docs/architecture.md, "Layers"), so it names the members, not the class."""

    @property
    def name(self) -> str: ...

    @property
    def nl_assertions(self) -> list[str] | None: ...

    @property
    def db_state_assertions(self) -> list[dict[str, Any]] | None: ...

    @property
    def predicate_domain(self) -> str: ...

    def action_match(self, recorded_actions: list[JSONObject], transcript: list[JSONObject]) -> MatchResult | None: ...


@dataclass
class ScoringInput:
    """Everything one scenario is scored from, as plain values."""

    scenario: ScoredScenario
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


SIGNALS: Registry[str, SignalSpec] = Registry("signal", describe=lambda spec: f"metrics field {spec.metric!r}")
"""Every signal by key, in report order (extension/registry.py: the registry of every extension point)."""


def register_signal(spec: SignalSpec) -> SignalSpec:
    """Add a signal to the table (a second, different spec under one key or field is refused)."""
    clash = next((s for s in SIGNALS.registered() if s.key != spec.key and s.metric == spec.metric), None)
    if clash is not None:
        raise ValueError(f"signal {spec.key!r} uses metrics field {spec.metric!r}, already used by {clash.key!r}")
    SIGNALS.register(spec.key, spec)
    note_registered(spec.key)
    return spec


def unregister_signal(key: str) -> None:
    """Remove a registered signal (tests and plugins that add one temporarily)."""
    if key in SuccessSignal.__members__.values():
        raise ValueError(f"{key!r} is a built-in signal")
    SIGNALS.unregister(key)
    note_unregistered(key)


def signal_specs() -> Iterator[SignalSpec]:
    """The registered specs in report order (a snapshot: registering while iterating is safe)."""
    return iter(tuple(SIGNALS.values()))
