"""The run-level report: which scenarios ran, then all_metrics.json, all_summary.txt and the
terminal summary, written once per run (by the xdist controller when there are workers).

A plugin object registered per pytest config, so no state lives in module globals. The
scenario names come from report properties, which xdist ships from the workers; the metrics
themselves are read back from each scenario's metrics.json in the shared results folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.report import files
from pytest_tau2.report.summary import render

SCENARIO_PROPERTY = "tau2_scenario"


class RunReport:
    def __init__(self, results_dir: Path, *, is_worker: bool) -> None:
        self.results_dir = results_dir
        self.is_worker = is_worker
        self.names: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when not in ("setup", "call"):
            return
        if report.when == "setup" and report.skipped:
            return  # skipped before running (e.g. not in the replay file): not part of the results
        for key, value in report.user_properties:
            if key == SCENARIO_PROPERTY and str(value) not in self.names:
                self.names.append(str(value))

    def collected(self) -> tuple[list[dict[str, Any]], list[str]]:
        """Metrics of every scenario reported in this run, and the names that left none (errors)."""
        out, missing = [], []
        for name in sorted(set(self.names)):
            path = self.results_dir / name / "metrics.json"
            if path.exists():
                out.append(json.loads(path.read_text("utf-8")))
            else:
                missing.append(name)
        return out, missing

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.is_worker or not self.names:
            return
        metrics, missing = self.collected()
        files.write_json(
            self.results_dir / "all_metrics.json", {"scenarios": metrics, "errors_without_result": missing}
        )
        files.write_text(self.results_dir / "all_summary.txt", render(metrics, missing))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.is_worker or not self.names:
            return
        metrics, missing = self.collected()
        terminalreporter.section("tau2 summary")
        for line in render(metrics, missing).rstrip().splitlines():
            terminalreporter.write_line(line)
        terminalreporter.write_line(f"results: {self.results_dir}")
