"""The verdict: how signal values combine into ``is_successful``, with its breakdown.

Rules (docs/scoring.md; the pass rule itself is :mod:`pytest_tau2.scoring.rule`):
- a signal with no value (``None`` or ``"N/A"``) is *not applicable* and never gates;
- a boolean passes when true; a pass rate (float) passes only at exactly 1.0;
- ``is_successful`` is the strict AND of the whitelisted signals that have a value;
  no applicable whitelisted signal gives ``"N/A"``;
- signals outside the whitelist are reported under ``excluded`` and never gate.

:func:`scenario_verdict` is the one place a scenario's verdict is made: the strict AND with its
breakdown, computed once, and a scenario's own ``compute_is_successful`` asked only when it
overrides the default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pytest_tau2.scoring.rule import NOT_APPLICABLE, combine, is_default_combinator, signal_passed
from pytest_tau2.scoring.signals import signal_specs

__all__ = ["NOT_APPLICABLE", "Verdict", "scenario_verdict", "signal_passed", "strict_and"]


class Combines(Protocol):
    """What the verdict reads of a scenario (``scenario.base.Scenario`` has it; scoring sits below
    the scenario package and never imports it)."""

    @property
    def success_signals(self) -> Sequence[str]: ...

    def compute_is_successful(self, signals: Mapping[str, object]) -> bool | str: ...


@dataclass
class Verdict:
    is_successful: bool | str
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    not_applicable: list[str] = field(default_factory=list)
    excluded: dict[str, object] = field(default_factory=dict)

    def breakdown(self) -> dict[str, list[str] | dict[str, object]]:
        """The ``success_breakdown`` object of metrics.json."""
        return {
            "passed": self.passed,
            "failed": self.failed,
            "not_applicable": self.not_applicable,
            "excluded": self.excluded,
        }


def strict_and(signals: Mapping[str, object], whitelist: Sequence[str]) -> Verdict:
    """Strict AND over the whitelisted signals that produced a value (keys or SuccessSignal members)."""
    verdict = Verdict(is_successful=NOT_APPLICABLE)
    outcomes: list[bool | None] = []
    for spec in signal_specs():
        value = signals.get(spec.key)
        if spec.key not in whitelist:
            verdict.excluded[spec.metric] = value
            continue
        outcome = signal_passed(value)
        outcomes.append(outcome)
        if outcome is None:
            verdict.not_applicable.append(spec.metric)
        elif outcome:
            verdict.passed.append(spec.metric)
        else:
            verdict.failed.append(spec.metric)
    verdict.is_successful = combine(outcomes)
    return verdict


def scenario_verdict(scenario: Combines, signals: Mapping[str, object]) -> Verdict:
    """The breakdown from strict AND over the scenario's whitelist; the scenario's own combinator
    decides ``is_successful`` when it overrides ``compute_is_successful`` (the breakdown still
    shows the strict-AND view)."""
    verdict = strict_and(signals, tuple(scenario.success_signals))
    if _overrides_combinator(scenario):
        verdict.is_successful = scenario.compute_is_successful(signals)
    return verdict


def _overrides_combinator(scenario: Combines) -> bool:
    """False when ``compute_is_successful`` is the base class's strict AND (the answer is at hand)."""
    return not is_default_combinator(scenario.compute_is_successful)
