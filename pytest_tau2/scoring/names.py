"""The names of the success signals: what a scenario whitelists in ``success_signals``.

A leaf (it imports nothing from the package), so :mod:`pytest_tau2.scenario` can declare and
check its whitelist without importing the signal table, whose records name the scenario they
score. The table (:mod:`pytest_tau2.scoring.table`) notes here each key it registers, so a
scenario's definition check knows a :class:`SignalKey` is live without reading the table.
"""

from __future__ import annotations

import enum


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
        return BUILT_IN_METRICS[self]


BUILT_IN_METRICS: dict[SuccessSignal, str] = {
    SuccessSignal.ACTION_MATCH: "is_action_match",
    SuccessSignal.DB_STATE_MATCH: "db_state_match",
    SuccessSignal.DB_STATE_ASSERTION: "db_state_assertion_pass_rate",
    SuccessSignal.NL_ASSERTION: "nl_assertion_pass_rate",
    SuccessSignal.JUDGE_PASSED: "judge_passed",
    SuccessSignal.CLEAN_EXIT: "clean_exit",
}
"""The metrics.json field of each built-in signal: a published name, so it is fixed here and the
table's built-in specs take theirs from it."""


class SignalKey(str):
    """The key of a signal added with ``register_signal``, as a scenario whitelists it
    (``success_signals = (SuccessSignal.CLEAN_EXIT, MY_SPEC.signal)``). A plain string is refused
    there, so a typo is a definition error rather than a signal that never gates."""

    __slots__ = ()


_REGISTERED: set[str] = {str(s) for s in SuccessSignal}
"""Keys of the signals in the table now (the built-ins always; others while registered)."""


def note_registered(key: str) -> None:
    """Called by the table when it adds ``key``."""
    _REGISTERED.add(str(key))


def note_unregistered(key: str) -> None:
    """Called by the table when it removes ``key`` (never a built-in)."""
    _REGISTERED.discard(str(key))


def is_registered(key: str) -> bool:
    """Whether the signal table holds a signal under ``key``."""
    return str(key) in _REGISTERED


def is_signal(value: object) -> bool:
    """Whether ``value`` may stand in a ``success_signals`` whitelist: a built-in member, or the
    :class:`SignalKey` of a signal registered now."""
    return isinstance(value, SuccessSignal) or (isinstance(value, SignalKey) and is_registered(value))
