"""The run's failure modes: failed trials grouped by what went wrong, largest group first.

A failed trial (is_successful false, no infrastructure error) belongs to one group:

1. its first divergence from gold (``first_divergence.group``: kind, tool and the arguments that
   differ, e.g. ``wrong_arguments:cancel_pending_order(reason)``), when it has one;
2. else, when a review found a critical error (``review``: pytest-tau2 review), the first critical
   error's side and first tag (``review:agent:<tag>``, the agent's before the user's);
3. else what failed: ``signals:<the failed signals>`` (the writes followed the gold: what the
   agent said, an NL assertion, how the call ended), or ``stalled``.

Groups feed the summary's "Failure modes" lines, ``failure_modes.json`` (a run-level view), the
report's overview and ``pytest-tau2 compare`` (which groups grew and shrank). Pure: records in,
groups out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_tau2.report.record import ScenarioRecord

__all__ = ["FailureMode", "compare_lines", "document", "failure_modes", "mode_of", "summary_lines"]

KIND_WORDS = {
    "wrong_arguments": "wrong arguments",
    "wrong_read": "wrong read",
    "extra_write": "write not in gold",
    "missing_write": "missing write",
}


@dataclass(frozen=True)
class FailureMode:
    key: str
    label: str
    scenarios: tuple[str, ...]
    """The failed trials' result folders (``<scenario>`` or ``<scenario>-t<k>``)."""
    tasks: tuple[str, ...] = ()
    """The scenario of each folder, in the same order (the report links a trial by its scenario)."""

    @property
    def count(self) -> int:
        return len(self.scenarios)

    def to_dict(self) -> dict[str, object]:
        return {"key": self.key, "label": self.label, "count": self.count, "scenarios": list(self.scenarios)}


def failed(record: ScenarioRecord) -> bool:
    return record.is_successful is False and not record.infrastructure_error


def mode_of(record: ScenarioRecord) -> tuple[str, str] | None:
    """The failed trial's group key and label; None for a trial that did not fail on the agent."""
    if not failed(record):
        return None
    divergence = record.first_divergence or {}
    group = divergence.get("group")
    if isinstance(group, str) and group:
        kind = str(divergence.get("kind"))
        diff = divergence.get("argument_diff")
        args = sorted(str(name) for name in diff) if isinstance(diff, Mapping) else []
        label = f"{KIND_WORDS.get(kind, kind)}: {divergence.get('tool')}" + (f" ({', '.join(args)})" if args else "")
        return group, label
    critical = _critical_review_error(record)
    if critical is not None:
        side, kind = critical
        return f"review:{side}:{kind}", f"{side} error (review): {kind}"
    failed_signals = list(record.success_breakdown.failed or [])
    if failed_signals:
        names = ",".join(sorted(failed_signals))
        return f"signals:{names}", f"followed the gold's writes; failed: {', '.join(sorted(failed_signals))}"
    if record.stalled:
        return "stalled", "stalled (fewer agent turns than --tau2-min-agent-turns)"
    return "other", "failed (no failed signal recorded)"


def _critical_review_error(record: ScenarioRecord) -> tuple[str, str] | None:
    """The side and first tag of the review's first critical error (the agent's before the user's)."""
    review = record.detail("review")
    errors = review.get("errors") if isinstance(review, Mapping) else None
    critical = [
        e for e in errors if isinstance(e, Mapping) and str(e.get("severity", "")).startswith("critical")
    ] if isinstance(errors, list) else []  # fmt: skip
    for side in ("agent", "user"):
        for error in critical:
            if error.get("source") == side:
                tags = error.get("error_tags")
                return side, str(tags[0]) if isinstance(tags, list) and tags else "other"
    return None


def failure_modes(records: Iterable[ScenarioRecord]) -> list[FailureMode]:
    """Failed trials grouped, largest group first (ties: by key)."""
    groups: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    for record in records:
        mode = mode_of(record)
        if mode is not None:
            groups.setdefault(mode[0], (mode[1], []))[1].append((record.folder, record.scenario))
    modes = [
        FailureMode(key, label, tuple(f for f, _ in sorted(trials)), tuple(s for _, s in sorted(trials)))
        for key, (label, trials) in groups.items()
    ]
    return sorted(modes, key=lambda m: (-m.count, m.key))


def summary_lines(records: Sequence[ScenarioRecord], limit: int = 8) -> list[str]:
    """The summary's "Failure modes" section (empty when nothing failed on the agent)."""
    modes = failure_modes(records)
    if not modes:
        return []
    total = sum(m.count for m in modes)
    lines = [f"Failure modes ({total} failed trials, {len(modes)} groups; failure_modes.json has them all):"]
    for mode in modes[:limit]:
        shown = ", ".join(mode.scenarios[:3]) + (f" and {mode.count - 3} more" if mode.count > 3 else "")
        lines.append(f"  {mode.count:>4}  {mode.label}: {shown}")
    if len(modes) > limit:
        lines.append(f"        ... {len(modes) - limit} smaller groups")
    return lines


def document(records: Sequence[ScenarioRecord]) -> dict[str, object]:
    """failure_modes.json's object."""
    modes = failure_modes(records)
    return {"failed_trials": sum(m.count for m in modes), "groups": [m.to_dict() for m in modes]}


def compare_lines(a: Sequence[ScenarioRecord], b: Sequence[ScenarioRecord], limit: int = 10) -> list[str]:
    """Which failure modes grew and shrank from run A to run B, largest change first."""
    count_a = {m.key: m for m in failure_modes(a)}
    count_b = {m.key: m for m in failure_modes(b)}
    changes = []
    for key in {*count_a, *count_b}:
        before = count_a[key].count if key in count_a else 0
        after = count_b[key].count if key in count_b else 0
        if before != after:
            label = (count_b.get(key) or count_a[key]).label
            changes.append((after - before, key, label, before, after))
    if not changes:
        return ["Failure modes: the same groups, the same sizes"] if count_a or count_b else []
    changes.sort(key=lambda c: (-abs(c[0]), c[1]))
    lines = ["Failure modes (A -> B), largest change first:"]
    for delta, _, label, before, after in changes[:limit]:
        lines.append(f"  {'grew' if delta > 0 else 'shrank'} {before} -> {after}: {label}")
    if len(changes) > limit:
        lines.append(f"  ... {len(changes) - limit} more groups changed")
    return lines
