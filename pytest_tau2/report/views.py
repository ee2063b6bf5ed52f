"""Run-level report views: the files a results folder gets once every scenario is in.

A view is a :class:`RunView` in the :data:`VIEWS` registry (extension/registry.py): a name (the
file it writes) and a function of the run's :class:`RunFiles`. The run's end on the process that
owns the results folder (plugin/run_report.py) and ``pytest-tau2 merge`` (report/merge.py) both
write every registered view through :func:`write_views`, in registration order. The built-ins are
all_metrics.json and all_summary.txt (required), report.html, failure_modes.json and
all_latencies.csv (optional, the last two only when there is something to write); tau2_format adds
upstream_differences.json (tau2_format/upstream_diff.py). Each view is written
on its own: one that fails never keeps the others from being written; the failures come back to
the caller (a run reports each in one line, ``pytest-tau2 merge`` refuses a failed required one).
A package adds a view with :func:`register_report_view`, say a CSV for a dashboard.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_tau2.extension.registry import Registry
from pytest_tau2.report import files
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.run_record import ErrorEntry, RunMetrics


@dataclass(frozen=True)
class RunFiles:
    """What a view is written from: the folder, this run's records, and the run-level documents."""

    results_dir: Path
    records: Sequence[ScenarioRecord]
    errors: Sequence[ErrorEntry]
    metrics: RunMetrics
    """all_metrics.json's document."""
    summary: str
    """all_summary.txt's text (also what the terminal summary prints)."""


@dataclass(frozen=True)
class RunView:
    name: str
    """The view's file (relative to the results folder); also its key in :data:`VIEWS`."""
    write: Callable[[RunFiles], None]
    required: bool = False
    """A required view's failure is raised; an optional one's is returned as a warning."""


VIEWS: Registry[str, RunView] = Registry("report view", describe=lambda view: f"{view.write!r}")
"""Every run-level view by file name, in the order they are written."""


def register_report_view(view: RunView, *, replace: bool = False) -> RunView:
    """Add a run-level view (written at the end of every run and by ``pytest-tau2 merge``)."""
    return VIEWS.register(view.name, view, replace=replace)


def write_views(run: RunFiles) -> list[tuple[str, Exception]]:
    """Write every registered view, each on its own (a full disk or an unwritable file loses only
    that file, never the others); the views that failed, with their error, in order. The caller
    decides what a failed ``required`` view means (``merge`` refuses; a run reports it)."""
    failed: list[tuple[str, Exception]] = []
    for view in VIEWS.values():
        try:
            view.write(run)
        except Exception as exc:
            failed.append((view.name, exc))
    return failed


def _all_metrics(run: RunFiles) -> None:
    files.write_json(run.results_dir / "all_metrics.json", run.metrics.document())


def _summary(run: RunFiles) -> None:
    files.write_text(run.results_dir / "all_summary.txt", run.summary)


def _html(run: RunFiles) -> None:
    from pytest_tau2.report.html import run_of, write_runs

    # From what the run holds: the same page as ``pytest-tau2 report`` builds from the folder.
    write_runs([run_of(run.results_dir, run.metrics, run.summary)], run.results_dir / "report.html")


def _failure_modes(run: RunFiles) -> None:
    from pytest_tau2.report import failure_modes  # written when some trial failed on the agent

    found = failure_modes.document(run.records)
    if found["failed_trials"]:
        files.write_json(run.results_dir / "failure_modes.json", found)


def _latencies(run: RunFiles) -> None:
    from pytest_tau2.report import calls  # written when some scenario was a phone call

    text = calls.latencies_csv(run.records)
    if text is not None:
        files.write_text(run.results_dir / calls.CSV_NAME, text)


for _view in (
    RunView("all_metrics.json", _all_metrics, required=True),
    RunView("all_summary.txt", _summary, required=True),
    RunView("report.html", _html),
    RunView("failure_modes.json", _failure_modes),
    RunView("all_latencies.csv", _latencies),
):
    register_report_view(_view)
