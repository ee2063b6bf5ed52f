"""The numbers of reviews and failure modes from records (report/reviews.py, report/failure_modes.py)."""

from __future__ import annotations

from typing import Any

from pytest_tau2.report import failure_modes, reviews
from pytest_tau2.report.record import ScenarioRecord


def record(
    name: str, trial: int, ok: bool, *, critical: bool | None = None, group: str | None = None
) -> ScenarioRecord:
    fields: dict[str, Any] = {"scenario": name, "domain": "lab", "trial": trial, "trials": 2, "is_successful": ok,
                              "success_breakdown": {"failed": [] if ok else ["db_state_match"]}}  # fmt: skip
    if critical is not None:
        severity = "critical_hindered" if critical else "minor"
        error = {"source": "user", "severity": severity, "error_tags": ["hallucination"], "turn_idx": 1}
        fields["review"] = {"critical_user_error": critical, "errors": [error], "mode": "full"}
    if group is not None:
        fields["first_divergence"] = {"group": group, "kind": "missing_write", "tool": "set_value"}
    return ScenarioRecord.read(fields)


RUN = [
    record("lab__a", 1, False, critical=True),
    record("lab__a", 2, False, critical=False, group="missing_write:set_value"),
    record("lab__b", 1, True),
    record("lab__b", 2, False, critical=True, group="missing_write:set_value"),
    record("lab__c", 1, False),
    record("lab__c", 2, True),
]


def test_the_success_rate_with_and_without_critical_user_errors_and_per_task_counts() -> None:
    counts = reviews.counts(RUN)
    assert (counts.reviewed, counts.failed, counts.failed_reviewed, counts.failed_critical_user) == (3, 4, 3, 2)
    assert (counts.passed, counts.scored, counts.passed_without, counts.scored_without) == (2, 6, 2, 4)
    assert counts.per_task == {"lab__a": (1, 2), "lab__b": (1, 1)}
    lines = reviews.summary_lines(RUN)
    assert "  critical user-simulator error in 2 of 3 reviewed failures (2 of 3 reviewed trials in all)" in lines
    assert (
        "  success rate 33.3% (2/6) with every trial; 50.0% (2/4) without the 2 whose simulated user erred critically"
        in lines
    )
    assert "  trials with a critical user-simulator error, per task: lab__a 1 of 2, lab__b 1 of 1" in lines
    assert reviews.summary_lines([record("lab__c", 1, False)]) == []


def test_failure_modes_group_by_divergence_then_review_then_signals() -> None:
    modes = failure_modes.failure_modes(RUN)
    assert [(m.key, m.scenarios) for m in modes] == [
        ("missing_write:set_value", ("lab__a-t2", "lab__b-t2")),
        ("review:user:hallucination", ("lab__a-t1",)),
        ("signals:db_state_match", ("lab__c-t1",)),
    ]
    fixed = [r for r in RUN if r.folder != "lab__c-t1"]
    assert failure_modes.compare_lines(RUN, fixed) == [
        "Failure modes (A -> B), largest change first:",
        "  shrank 1 -> 0: followed the gold's writes; failed: db_state_match",
    ]
