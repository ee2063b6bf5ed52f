"""The pass rule: when one signal value passes, and how a whitelist's outcomes combine.

Rules (docs/scoring.md):
- a signal with no value (``None`` or ``"N/A"``) is *not applicable* and never gates;
- a boolean passes when true; a pass rate (float) passes only at exactly 1.0;
- the strict AND of the whitelisted signals that have a value decides; no applicable
  whitelisted signal gives ``"N/A"``.

A leaf beside :mod:`pytest_tau2.scoring.names`: the verdict with its breakdown
(:mod:`pytest_tau2.scoring.verdict`) and a scenario's default combinator
(``Scenario.compute_is_successful``) both apply this one rule, and the scenario package reads
it without importing the signal table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from pytest_tau2.scoring.names import is_registered

F = TypeVar("F", bound=Callable[..., object])

NOT_APPLICABLE = "N/A"


def signal_passed(value: object) -> bool | None:
    """True/False for a signal value, or None when it produced no value."""
    if value is None or value == NOT_APPLICABLE:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value) >= 1.0
    raise TypeError(f"signal value must be bool, a float pass rate, None or 'N/A'; got {value!r}")


def combine(outcomes: Iterable[bool | None]) -> bool | str:
    """Strict AND of per-signal outcomes: any failure fails; else any pass passes; else ``"N/A"``."""
    passed = failed = False
    for outcome in outcomes:
        if outcome is None:
            continue
        if outcome:
            passed = True
        else:
            failed = True
    if failed:
        return False
    return True if passed else NOT_APPLICABLE


def strict_and_outcome(signals: Mapping[str, object], whitelist: Iterable[str]) -> bool | str:
    """``is_successful`` of the strict AND over the whitelisted signals that are in the table.

    The same answer as :func:`pytest_tau2.scoring.verdict.strict_and`, without its breakdown.
    """
    return combine(signal_passed(signals.get(key)) for key in dict.fromkeys(whitelist) if is_registered(key))


def default_combinator(method: F) -> F:
    """Mark ``Scenario.compute_is_successful``, the strict AND itself: the verdict (scoring/verdict.py)
    asks a scenario's combinator only when a subclass replaced it (the answer is otherwise at hand)."""
    method.strict_and = True  # type: ignore[attr-defined]
    return method


def is_default_combinator(method: object) -> bool:
    """Whether ``method`` (bound or not) is the one :func:`default_combinator` marked."""
    return getattr(getattr(method, "__func__", method), "strict_and", False) is True
