"""pytest's terminal reporter, as pytest announces it: the adapter writes its lines through this
object, and never looks the reporter up by name.

``pytest_plugin_registered`` is a historic hook: registered at any time, this object also hears
of a reporter registered before it. A plugin that puts its own reporter in pytest's place
(pytest-sugar) registers it under the same name, and the latest one wins, as it does for pytest.
"""

from __future__ import annotations

from typing import cast

import pytest

REPORTER_NAME = "terminalreporter"
"""The name pytest registers its terminal reporter under (``-p no:terminal``: none)."""


class Terminal:
    """Registered at every pytest start (the entry point's ``pytest_configure``)."""

    def __init__(self) -> None:
        self.reporter: pytest.TerminalReporter | None = None

    def pytest_plugin_registered(self, plugin: object, plugin_name: str) -> None:
        if plugin_name == REPORTER_NAME:
            self.reporter = cast(pytest.TerminalReporter, plugin)

    def write_line(self, line: str, **markup: bool) -> None:
        """A line on the terminal, after whatever pytest wrote last on it; nothing without a terminal."""
        if self.reporter is not None:
            self.reporter.write_line(line, **markup)
