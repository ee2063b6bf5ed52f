"""What the run does to pytest's own session plugins once a scenario is selected
(plugin/run_state.py): JUnit's writes guarded, so an unwritable file is one line at the end."""

from __future__ import annotations

import pytest

from pytest_tau2.plugin import compat_pytest
from pytest_tau2.plugin.run_report import RunReport
from pytest_tau2.report.files import describe_os_error


def guard_junit_writes(config: pytest.Config, report: RunReport) -> None:
    """An unwritable JUnit file (``/dev/full``, a full disk) is one line at the end, not a raw
    OSError that keeps every later end-of-session hook, the results folder's files among them,
    from running (plugin/compat_pytest.py wraps pytest's writer)."""

    def unwritten(what: str, exc: OSError) -> None:
        report.file_failed(what, f"{type(exc).__name__}: {describe_os_error(exc)}", required=True)

    compat_pytest.guard_junit_writes(config, unwritten)
