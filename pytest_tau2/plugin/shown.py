"""What leaves the process through pytest: every report of a scenario item, with its credentials
masked and its control characters escaped, however its text was made.

The result files are redacted where they are made (run/trial.py); what pytest prints and writes
(the failure text of a scenario, a skip reason, captured output, the sub-results its call report
carries, the JUnit properties and failure text) is redacted here, once, on its way out: in
``pytest_runtest_logreport``, before the terminal reporter and the junitxml plugin see the
report (and, under xdist, on the worker before the report travels, and again on the controller).
The same mask as the files' (the configured credentials, provider-key environment values, key
shapes, URL credentials), and control characters shown as escapes (``\\x1b[2J``), so a model's reply quoted in a message
cannot clear, retitle or recolour the terminal. Reports with nothing to change are left as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from pytest_tau2.plugin.keys import item_id
from pytest_tau2.run.session import terminal_text
from pytest_tau2.settings import Settings


class ShownText:
    """Registered at configure time on every process (controller and workers)."""

    def __init__(self, settings: Settings) -> None:
        self.secrets = tuple(settings.secrets())
        self._show: Callable[[str], str] | None = None

    def show(self, text: str) -> str:
        if self._show is None:  # the environment's keys are read once, when a first text is shown
            self._show = terminal_text(self.secrets)
        return self._show(text)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if item_id(report.nodeid) is not None:
            clean_report(report, self.show)


def clean_report(report: pytest.TestReport, show: Callable[[str], str]) -> None:
    """Apply ``show`` to every text of ``report``: the failure or skip text, captured output, and
    (on the teardown report, the one junitxml reads them from) the JUnit properties."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, reason)
        path, line, reason = longrepr
        report.longrepr = (path, line, show(reason))
    elif isinstance(longrepr, str):
        report.longrepr = show(longrepr)
    elif longrepr is not None:
        text = str(longrepr)
        if show(text) != text:  # walk pytest's repr objects only when something is to change
            _walk(longrepr, show)
    if report.sections:
        report.sections = [(name, show(content)) for name, content in report.sections]
    subresults = getattr(report, "tau2_subresults", None)  # the call report's sub-results (item.py)
    if subresults:
        shown = [
            {**sub, "message": show(sub["message"])} if isinstance(sub.get("message"), str) else sub
            for sub in subresults
        ]
        setattr(report, "tau2_subresults", shown)  # noqa: B010  (an attribute pytest's report does not declare)
    if report.when == "teardown" and report.user_properties:  # the report junitxml reads them from
        joined = "\n".join(value for _, value in report.user_properties if isinstance(value, str))
        if show(joined) != joined:  # one look at all of them (~20 us), each only when one changes
            report.user_properties = [
                (name, show(value) if isinstance(value, str) else value) for name, value in report.user_properties
            ]


def _walk(value: Any, show: Callable[[str], str]) -> Any:
    """``value`` with ``show`` applied to each string in it; pytest's repr objects (dataclasses:
    ``ExceptionChainRepr``, ``ReprEntry``, ``ReprFileLocation``, ...) are changed in place."""
    if isinstance(value, str):
        return show(value)
    if isinstance(value, list):
        return [_walk(item, show) for item in value]
    if isinstance(value, tuple):
        return tuple(_walk(item, show) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            object.__setattr__(value, field.name, _walk(getattr(value, field.name), show))
    return value
