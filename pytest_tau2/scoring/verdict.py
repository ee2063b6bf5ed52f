"""The verdict: how signal values combine into ``is_successful``.

Rules (docs/scoring.md):
- a signal with no value (``None`` or ``"N/A"``) is *not applicable* and never gates;
- a boolean passes when true; a pass rate (float) passes only at exactly 1.0;
- ``is_successful`` is the strict AND of the whitelisted signals that have a value;
  no applicable whitelisted signal gives ``"N/A"``;
- signals outside the whitelist are reported under ``excluded`` and never gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_tau2.scoring.signals import signal_specs

NOT_APPLICABLE = "N/A"


def signal_passed(value: Any) -> bool | None:
    """True/False for a signal value, or None when it produced no value."""
    if value is None or value == NOT_APPLICABLE:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value) >= 1.0
    raise TypeError(f"signal value must be bool, a float pass rate, None or 'N/A'; got {value!r}")


@dataclass
class Verdict:
    is_successful: bool | str
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    not_applicable: list[str] = field(default_factory=list)
    excluded: dict[str, Any] = field(default_factory=dict)

    def breakdown(self) -> dict[str, Any]:
        """The ``success_breakdown`` object of metrics.json."""
        return {
            "passed": self.passed,
            "failed": self.failed,
            "not_applicable": self.not_applicable,
            "excluded": self.excluded,
        }


def strict_and(signals: Mapping[str, Any], whitelist: Sequence[str]) -> Verdict:
    """Strict AND over the whitelisted signals that produced a value (keys or SuccessSignal members)."""
    verdict = Verdict(is_successful=NOT_APPLICABLE)
    for spec in signal_specs():
        value = signals.get(spec.key)
        if spec.key not in whitelist:
            verdict.excluded[spec.metric] = value
            continue
        outcome = signal_passed(value)
        if outcome is None:
            verdict.not_applicable.append(spec.metric)
        elif outcome:
            verdict.passed.append(spec.metric)
        else:
            verdict.failed.append(spec.metric)
    if verdict.failed:
        verdict.is_successful = False
    elif verdict.passed:
        verdict.is_successful = True
    return verdict
