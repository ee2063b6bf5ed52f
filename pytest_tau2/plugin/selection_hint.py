"""When ``-k`` selects no scenario: say which scenario names and domains were closest.

pytest itself only reports "284 deselected", so a typo (``-k tau2_retial``) looks like an
empty suite. ``--tau2-scenarios`` already names the closest scenarios for its patterns; this
does the same for ``-k``. (A ``-k`` aimed at a domain whose data is missing selects that
domain's ``<domain>__unavailable`` item instead, which shows the reason: plugin/selection.py.)
:func:`hint` is plain text logic; :class:`SelectionHints` is the pytest plugin object that
feeds it (registered by plugin/run_state.py; hooks by name, so this module does not import pytest).
Under xdist the workers collect, so a worker hands its hint to the controller through
``workeroutput``, and the controller prints it once.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

UNAVAILABLE = "__unavailable"
OPERATORS = frozenset({"and", "or", "not"})
WORKEROUTPUT_KEY = "tau2_selection_hint"
HINTS_NAME = "tau2-selection-hints"
"""The plugin object's name in pytest's plugin manager."""


def hint(expression: str, names: Iterable[str]) -> list[str]:
    """Lines explaining why ``-k expression`` selected none of ``names`` (the collected scenarios)."""
    scenarios = sorted(n for n in set(names) if not n.endswith(UNAVAILABLE))
    domains = Counter(n.split("__", 1)[0] for n in scenarios)
    lines = [f"-k {expression!r} selected none of the {len(scenarios)} collected scenarios"]
    for word in _words(expression):
        if any(word in name for name in scenarios):
            continue  # this word matches something; another part of the expression excluded it
        suggestions = [
            f"{match} (a domain: {domains[match]} scenarios)" if match in domains else match
            for match in difflib.get_close_matches(word, [*domains, *scenarios], n=3, cutoff=0.6)
        ]
        lines.append(
            f"  no scenario name contains {word!r}" + (f"; closest: {', '.join(suggestions)}" if suggestions else "")
        )
    lines.append("  (pytest-tau2 list shows every scenario by domain)")
    return lines


def _words(expression: str) -> list[str]:
    return [w for w in re.findall(r"[^\s()]+", expression) if w.lower() not in OPERATORS]


class SelectionHints:
    """The plugin object: remembers the scenarios that were deselected, and prints the hint."""

    def __init__(self, scenario_name: Callable[[Any], str | None]) -> None:
        self.scenario_name = scenario_name
        self.deselected: list[str] = []
        self.lines: list[str] = []

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.deselected += [name for name in map(self.scenario_name, items) if name is not None]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        option = session.config.option
        expression = getattr(option, "tau2_keyword_asked", None) or option.keyword  # as typed (selection.py)
        selected = [n for n in map(self.scenario_name, session.items) if n is not None]
        if not expression or selected or not self.deselected:
            return
        self.lines = hint(expression, self.deselected)
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[WORKEROUTPUT_KEY] = self.lines

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.lines:
            terminalreporter.section("tau2: no scenario selected", sep="-", yellow=True)
            for line in self.lines:
                terminalreporter.write_line(line)


class XdistSelectionHints(SelectionHints):
    """With xdist: the controller takes the hint of the first worker that has one."""

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        lines = getattr(node, "workeroutput", {}).get(WORKEROUTPUT_KEY)
        if lines and not self.lines:
            self.lines = list(lines)
