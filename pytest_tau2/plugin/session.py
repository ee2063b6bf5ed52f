"""What the run does to pytest's own session plugins once a scenario is selected
(plugin/run_state.py): JUnit's writes guarded, so an unwritable file is one line at the end."""

from __future__ import annotations

import pytest

from pytest_tau2.plugin.run_report import RunReport
from pytest_tau2.report.files import describe_os_error


def guard_junit_writes(config: pytest.Config, report: RunReport) -> None:
    """An unwritable JUnit file (``/dev/full``, a full disk) is one line at the end, not a raw
    OSError that keeps every later end-of-session hook, the results folder's files among them,
    from running. pytest exposes no handle on its junitxml plugin object but its stash key, and
    binds a plugin's hooks when it is registered: hence unregister, wrap, register again."""
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is None or getattr(xml, "_tau2_guarded", False):
        return
    finish, summary = xml.pytest_sessionfinish, xml.pytest_terminal_summary
    unwritten: list[str] = []

    def pytest_sessionfinish() -> None:
        try:
            finish()
        except OSError as exc:
            why = f"{type(exc).__name__}: {describe_os_error(exc)}"
            unwritten.append(why)
            report.file_failed(f"the JUnit file {xml.logfile}", why, required=True)

    def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
        if not unwritten:  # "generated xml file" only when it was
            summary(terminalreporter, config)

    config.pluginmanager.unregister(xml)
    setattr(xml, "pytest_sessionfinish", pytest_sessionfinish)  # noqa: B010  (mypy: a method)
    setattr(xml, "pytest_terminal_summary", pytest_terminal_summary)  # noqa: B010
    setattr(xml, "_tau2_guarded", True)  # noqa: B010
    config.pluginmanager.register(xml)
