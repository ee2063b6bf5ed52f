"""What the reviews of a run say, in numbers: critical user-simulator errors beside the success rate.

On tau2 part of every failure count is the simulated user going off script, not the agent. The
reviews (``review`` in metrics.json: pytest-tau2 review, --tau2-review) make that visible without
hiding anything: the success rate is given with every trial, and again without the trials whose
simulated user erred critically (they are never silently dropped); several trials per task say
how many of each task's trials had one. Pure: records in, lines and numbers out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_tau2.report.record import ScenarioRecord

__all__ = ["ReviewCounts", "compare_lines", "counts", "critical_user_error", "summary_lines"]


def review_of(record: ScenarioRecord) -> Mapping[str, object] | None:
    review = record.review
    return review if isinstance(review, Mapping) and "error" not in review else None


def critical_user_error(record: ScenarioRecord) -> bool:
    review = review_of(record)
    return bool(review and review.get("critical_user_error"))


@dataclass(frozen=True)
class ReviewCounts:
    reviewed: int
    unreadable: int
    failed: int
    failed_reviewed: int
    critical_user: int
    """Reviewed trials whose simulated user erred critically (any outcome)."""
    failed_critical_user: int
    passed: int
    scored: int
    """Trials with a verdict (not N/A, no infrastructure error): the success rate's denominator."""
    passed_without: int
    scored_without: int
    severities: dict[str, int]
    per_task: dict[str, tuple[int, int]]
    """Task -> (trials with a critical user error, reviewed trials), for tasks run several times."""


def counts(records: Sequence[ScenarioRecord]) -> ReviewCounts:
    scored = [r for r in records if r.is_successful in (True, False) and not r.infrastructure_error]
    reviewed = [r for r in records if review_of(r) is not None]
    critical = {r.folder for r in reviewed if critical_user_error(r)}
    failed = [r for r in scored if r.is_successful is False]
    severities: Counter[str] = Counter()
    for record in reviewed:
        for error in (review_of(record) or {}).get("errors") or []:  # type: ignore[attr-defined]
            if isinstance(error, Mapping):
                severities[f"{error.get('source')} {error.get('severity')}"] += 1
    per_task: dict[str, tuple[int, int]] = {}
    if any(int(r.trials or 1) > 1 for r in records):
        for record in reviewed:
            bad, total = per_task.get(record.scenario, (0, 0))
            per_task[record.scenario] = (bad + (record.folder in critical), total + 1)
    without = [r for r in scored if r.folder not in critical]
    return ReviewCounts(
        reviewed=len(reviewed),
        unreadable=sum(1 for r in records if isinstance(r.review, Mapping) and "error" in r.review),
        failed=len(failed),
        failed_reviewed=sum(1 for r in failed if review_of(r) is not None),
        critical_user=len(critical),
        failed_critical_user=sum(1 for r in failed if r.folder in critical),
        passed=sum(1 for r in scored if r.is_successful is True),
        scored=len(scored),
        passed_without=sum(1 for r in without if r.is_successful is True),
        scored_without=len(without),
        severities=dict(sorted(severities.items())),
        per_task=dict(sorted(per_task.items())),
    )


def _rate(passed: int, total: int) -> str:
    return f"{100.0 * passed / total:.1f}% ({passed}/{total})" if total else "n/a"


def summary_lines(records: Sequence[ScenarioRecord]) -> list[str]:
    """The summary's "Reviews" section (empty when no trial was reviewed)."""
    c = counts(records)
    if not c.reviewed and not c.unreadable:
        return []
    lines = [f"Reviews (docs/review.md): {c.reviewed} trials reviewed, {c.failed_reviewed} of {c.failed} failures"]
    if c.unreadable:
        lines.append(f"  {c.unreadable} reviews unreadable or not made (their review.json says why)")
    lines.append(
        f"  critical user-simulator error in {c.failed_critical_user} of {c.failed_reviewed} reviewed failures"
        f" ({c.critical_user} of {c.reviewed} reviewed trials in all)"
    )
    lines.append(
        f"  success rate {_rate(c.passed, c.scored)} with every trial; {_rate(c.passed_without, c.scored_without)} "
        f"without the {c.critical_user} whose simulated user erred critically"
    )
    if c.severities:
        lines.append("  errors found: " + ", ".join(f"{name} {n}" for name, n in c.severities.items()))
    flagged = [(task, bad, total) for task, (bad, total) in c.per_task.items() if bad]
    if flagged:
        shown = ", ".join(f"{task} {bad} of {total}" for task, bad, total in flagged[:10])
        lines.append(f"  trials with a critical user-simulator error, per task: {shown}")
    return lines


def compare_lines(a: Sequence[ScenarioRecord], b: Sequence[ScenarioRecord]) -> list[str]:
    """Critical user-simulator errors in both runs (compare), when either was reviewed."""
    ca, cb = counts(a), counts(b)
    if not ca.reviewed and not cb.reviewed:
        return []
    return [
        "Critical user-simulator errors (reviews): "
        f"A {ca.failed_critical_user} of {ca.failed_reviewed} reviewed failures, "
        f"B {cb.failed_critical_user} of {cb.failed_reviewed}; success rate without them: "
        f"A {_rate(ca.passed_without, ca.scored_without)}, B {_rate(cb.passed_without, cb.scored_without)}"
    ]
