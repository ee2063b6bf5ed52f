"""The run's gates and intervals at session end, before JUnit is written: the JUnit suite
properties, the baseline comparison (``--tau2-baseline``) and the exit status of
``--tau2-fail-on-regression`` / ``--tau2-fail-under`` (report/gate.py decides; this applies).

The run applies it (:meth:`RunGate.apply`) in its ``tryfirst`` ``pytest_sessionfinish``
(plugin/run_state.py): pytest's junitxml writes its file in its own ``pytest_sessionfinish``, and
pytest returns ``session.exitstatus`` as it stands after that hook. Its lines are a section of the
summary (run_report.SummarySection).

With a gate on (``--tau2-fail-on-regression`` with a baseline, or ``--tau2-fail-under``) the gate
decides what the scenario items mean for the exit status: a run whose only failures are scenario
items exits 0 when the gates pass and 1 when one fails. A failure of any other test of the
session, an interrupt, an internal or usage error keeps pytest's own status.
"""

from __future__ import annotations

import pytest

from pytest_tau2.plugin import compat_pytest
from pytest_tau2.plugin.keys import item_id
from pytest_tau2.plugin.run_report import RunReport
from pytest_tau2.report import files
from pytest_tau2.report.gate import BASELINE_FILE, evaluate
from pytest_tau2.settings import Settings


class RunGate:
    top = False

    def __init__(self, report: RunReport, settings: Settings) -> None:
        self.report = report
        self.settings = settings
        self.other_failures = 0
        """Failed reports of items that are not scenarios (a user's own tests in the same session)."""
        self._lines: list[str] = []
        """The baseline comparison and the gates' lines, for the summary."""

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed and item_id(report.nodeid) is None:
            self.other_failures += 1

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.other_failures += 1

    @property
    def gating(self) -> bool:
        settings = self.settings
        return bool(settings.baseline and settings.fail_on_regression) or settings.fail_under is not None

    def lines(self) -> list[str]:
        return self._lines

    def apply(self, session: pytest.Session) -> None:
        """Evaluate the gates on this run's results, before JUnit is written."""
        report = self.report
        if report.is_worker or not report.started:
            return
        records, errors = report.entries()
        outcome = evaluate(records, [e.scenario for e in errors], self.settings)
        compat_pytest.add_junit_suite_properties(session.config, outcome.properties)
        self._lines = outcome.lines
        if outcome.comparison is not None:
            try:
                files.write_json(report.results_dir / BASELINE_FILE, outcome.comparison)
            except OSError as exc:
                report.write_failures.append(f"{BASELINE_FILE}: {exc}")
        if not self.gating or self.other_failures:
            return
        if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED if outcome.failures else pytest.ExitCode.OK
