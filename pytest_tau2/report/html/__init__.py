"""The HTML run report: one self-contained ``report.html`` per results folder, or a comparison.

``write_report([results_dir], results_dir / "report.html")`` is what the end of a run calls;
``pytest-tau2 report DIR [DIR ...] [-o FILE]`` builds it from saved results (docs/report.md).
"""

from __future__ import annotations

from pytest_tau2.report.html.loader import ReportInputError, load_run, run_of
from pytest_tau2.report.html.render import write_report, write_runs

__all__ = ["ReportInputError", "load_run", "run_of", "write_report", "write_runs"]
