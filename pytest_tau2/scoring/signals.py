"""The success signals as one table, and the scoring of one finished scenario.

The door to the signal table: importing this module registers the six built-in signals
(:mod:`~pytest_tau2.scoring.builtin_signals`) and then tau2's reward
(:mod:`~pytest_tau2.scoring.tau2_signal`), so whoever reads the table from here sees all of them
in report order. The verdict, metrics.json and its schema, JUnit properties, the run summary and
the docs table are all read from it, so a new signal is one :func:`register_signal` call plus its
compute function.

Where things live: the signal names a scenario whitelists in :mod:`~pytest_tau2.scoring.names`
(a leaf), the records and the registry in :mod:`~pytest_tau2.scoring.table`; both are
re-exported here.
"""

from __future__ import annotations

from typing import Any

from pytest_tau2.scoring import tau2_signal as _tau2_signal  # noqa: F401  (registers the six, then tau2_reward)
from pytest_tau2.scoring.names import SignalKey, SuccessSignal
from pytest_tau2.scoring.table import (
    SIGNALS,
    Check,
    FinalState,
    JudgeOutcome,
    ScoringInput,
    SignalResult,
    SignalSpec,
    register_signal,
    signal_specs,
    unregister_signal,
)

__all__ = [
    "SIGNALS",
    "Check",
    "FinalState",
    "JudgeOutcome",
    "ScoringInput",
    "SignalKey",
    "SignalResult",
    "SignalSpec",
    "SuccessSignal",
    "docs_table",
    "register_signal",
    "score",
    "signal_specs",
    "unregister_signal",
]


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
