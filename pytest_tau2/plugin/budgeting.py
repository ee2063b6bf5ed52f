"""The pytest side of ``--tau2-budget`` (run/budget.py): this process's share of the budget (made
when collection has finished: plugin/run_state.py), the item that runs its own conversation
within it, and the summary's line about it (a :class:`~pytest_tau2.plugin.run_report.SummarySection`).

Under xdist the budget is split evenly between the workers (each keeps ``budget / workers``):
no worker waits for the controller before it starts a conversation, and the run's spend can
pass the budget only by what the conversations in flight cost beyond their expectation, as in
one process. A scenario the budget leaves unstarted is *skipped* with a reason naming the budget:
it was not run, so it is neither a failure of the agent (failed) nor an error of the run
(errors stop CI for the wrong reason); ``-rs``, JUnit's ``<skipped message>`` and the summary's
"budget reached after N of M scenarios" line say why, and ``--tau2-resume`` runs them later.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from pytest_tau2.plugin.run_report import RunReport
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.run.budget import BudgetReached, RunBudget
from pytest_tau2.run.trial import Trial
from pytest_tau2.settings import Settings

if TYPE_CHECKING:
    from pytest_tau2.run.catalog import Catalog

T = TypeVar("T")


def share(settings: Settings, workers: int, catalog: Catalog) -> RunBudget | None:
    """This process's share of ``--tau2-budget`` (one of ``workers`` xdist workers, or the whole of
    it), with the cost estimate of each conversation as its first expectation; None without one."""
    if settings.budget is None:
        return None
    from pytest_tau2.run.estimate import expected_cost

    return RunBudget(settings.budget / workers, expected_cost(settings, catalog.instance))


def run_within_budget(budget: RunBudget | None, name: str, trial: Trial, run: Callable[[], T]) -> T:
    """``run()`` (the item's own conversation) once the budget admits it, its spend settled after;
    :class:`BudgetReached` (the item is skipped) when it does not."""
    if budget is None:
        return run()
    # None (not yet: the prefetcher's conversations are in flight) counts as no: this item runs now or never.
    if not budget.admit(name):
        raise BudgetReached(budget.reason())
    try:
        return run()
    finally:
        budget.settle(name, trial.context.usage.spent())


def budget_line(records: Iterable[ScenarioRecord], not_started: int, selected: int) -> str:
    """``Budget reached after N of M scenarios ($X spent); ...``: the summary's line."""
    ran = [r for r in records if not r.resumed]
    spent = sum(u.cost_usd or 0.0 for r in ran for u in r.token_usage.values() if u.calls > u.replayed_calls)
    return (
        f"Budget reached after {len(ran)} of {selected} scenarios (${spent:.4f} spent in this run): {not_started} "
        "not started, reported as skipped; --tau2-resume DIR --tau2-budget USD runs them"
    )


class BudgetSection:
    """The summary's first line when the budget left scenarios unstarted; registered on the process
    that owns the results folder, where it counts their skips as the reports arrive."""

    top = True

    def __init__(self, report: RunReport) -> None:
        self.report = report

    def lines(self) -> list[str]:
        skipped = self.report.budget_skipped  # counted by the report as the skips arrive
        if not skipped:
            return []
        metrics, errors = self.report.entries()
        done = len(metrics) + len(errors)
        return [budget_line(metrics, skipped, max(self.report.selected, done))]
