"""What pytest's reporting and its consumers see of a scenario (docs/ci.md).

- **One test, its sub-results inside it.** A scenario's checks travel on its call report
  (``report.tau2_subresults``, item.py); they are never test reports of their own, so pytest's
  counts, ``-x``/``--maxfail``, VS Code's adapter (it takes the first ``call`` report of a test
  id for its outcome) and TeamCity's (one testStarted/testFinished per report) see one test per
  scenario, with its real outcome. The terminal shows them under the item with ``-v`` (as
  ``SUBPASSED[<id>]`` lines) and counts them in the count line (``12 subtests passed``) at every
  verbosity; the failure text lists them.
- **Its location is its scenario class** (file and line where the class is defined, or where
  the first of its bases is, for generated classes), not the plugin's ``test_scenario``: IDE
  "go to test", TeamCity's failure location, ``-rs`` lines and legacy JUnit ``file=``/``line=``.
- **JUnit**: ``--tau2-junit-properties`` (report/junit_shape.py), applied to the file once pytest
  has written it, on the process that writes it.

PYTEST_DONT_REWRITE: the run (plugin/run_state.py) imports this module before it registers it as a
plugin; it holds no assertions to rewrite.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.plugin.keys import SCENARIO_PROPERTY, item_id, scenario_name
from pytest_tau2.plugin.terminal import Terminal
from pytest_tau2.report import subresults
from pytest_tau2.report.junit_shape import reshape
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.run.catalog import Catalog
from pytest_tau2.settings import Settings

_PACKAGE = str(Path(__file__).resolve().parent.parent) + os.sep
_MARKUP = {"passed": {"green": True}, "failed": {"red": True}, "skipped": {"yellow": True}}


# ---- location -----------------------------------------------------------------------------------


def locate(item: pytest.Item, catalog: Catalog) -> None:
    """A scenario item reports its scenario class's file and line as its location (lazily: pytest
    asks for it when the item runs, or when an IDE's discovery reads it); called as it is collected."""
    name = scenario_name(item)
    if name is None:
        return
    cls = catalog.classes.get(name)
    if cls is not None:  # None: an unavailable domain's error item keeps the function's location
        setattr(item, "reportinfo", functools.partial(_reportinfo, item, cls))  # noqa: B010  (an instance's method)


def _reportinfo(item: pytest.Item, cls: type) -> tuple[str, int | None, str]:
    found = class_location(cls)
    if found is None:
        return type(item).reportinfo(item)  # type: ignore[return-value]
    return found[0], found[1], item.getmodpath()  # type: ignore[attr-defined]


def class_location(cls: type) -> tuple[str, int] | None:
    """The file and 0-based line where ``cls`` is defined (its first decorator's line, as pytest
    counts a test class's), or where the nearest base defined in a source file is (classes made
    with ``type()``, as the tau2 ports are); None when none is found."""
    for klass in cls.__mro__:
        if klass is object:
            break
        try:
            path = inspect.getsourcefile(klass)
        except TypeError:  # a built-in
            continue
        line = _class_lines(path).get(klass.__qualname__) if path else None
        if path and line is not None:
            return path, line
    return None


@functools.cache
def _class_lines(path: str) -> dict[str, int]:
    """Qualified class name -> 0-based first line, for every class of one source file (parsed once)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return {}
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                first = child.decorator_list[0].lineno if child.decorator_list else child.lineno
                found.setdefault(prefix + child.name, first - 1)
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, f"{prefix}{child.name}.<locals>.")

    visit(tree, "")
    return found


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """A scenario skipped by the plugin (no applicable signal, not applicable to the run) names the
    scenario's location in ``-rs`` lines, not the line of the plugin that skipped it."""
    report = yield
    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3 and scenario_name(item) is not None:
        where = os.path.abspath(str(longrepr[0]))
        if where.startswith(_PACKAGE):
            path, line = item.reportinfo()[:2]
            report.longrepr = (os.fspath(path), (line or 0) + 1, longrepr[2])
    return report


# ---- the terminal ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Counted:
    """One sub-result in the terminal's stats (the count line counts entries of a category)."""

    nodeid: str
    id: str
    count_towards_summary = True


class SubResultTerminal:
    """Shows a scenario's sub-results under its line with ``-v`` and counts them in the count line
    (pytest's own ``subtests passed/failed/skipped`` categories, so colours follow pytest's rules)."""

    def __init__(self, config: pytest.Config, terminal: Terminal) -> None:
        self.config = config
        self.terminal = terminal

    @pytest.hookimpl(trylast=True)  # after the terminal reporter has written the item's own line
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "tau2_subresults", None)
        if not data or report.when != "call" or report.outcome not in ("passed", "failed", "skipped"):
            return  # also a run that pytest-rerunfailures repeats (outcome "rerun"): its last run counts
        terminal = self.terminal.reporter
        if terminal is None:
            return
        results = subresults.from_report(data)
        for result in results:
            terminal.stats.setdefault(f"subtests {subresults.outcome(result)}", []).append(
                _Counted(report.nodeid, result.id)
            )
        if self.config.get_verbosity(pytest.Config.VERBOSITY_SUBTESTS) <= 0:
            return
        # pytest 9.2 types the argument as its NodeId NewType; 9.0 as str (Any keeps both clean).
        config: Any = self.config
        node = config.cwd_relative_nodeid(report.nodeid)
        for result in results:
            outcome = subresults.outcome(result)
            line = f"{node} SUB{outcome.upper()}[{result.id}]"
            if result.passed is not True:
                line += " - " + subresults.status(result).split(": ", 1)[-1]
            terminal.write_line(line, **_MARKUP[outcome])


# ---- JUnit ---------------------------------------------------------------------------------------------


class JUnitShape:
    """``--tau2-junit-properties``: reshapes the file pytest's junitxml wrote (report/junit_shape.py)."""

    def __init__(self, config: pytest.Config, settings: Settings, terminal: Terminal) -> None:
        self.config = config
        self.settings = settings
        self.terminal = terminal
        self.scenarios = False
        """A scenario item reported in this run (else the file is not even read)."""

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self.scenarios and item_id(report.nodeid) is not None:
            self.scenarios = True

    @pytest.hookimpl(trylast=True)  # after junitxml's own sessionfinish has written the file
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        given = getattr(self.config.option, "xmlpath", None)
        mode = self.settings.junit_properties
        if not given or not self.scenarios or mode == "testcase":
            return
        path = Path(os.path.normpath(os.path.abspath(os.path.expanduser(os.path.expandvars(given)))))
        if not path.is_file():
            return
        try:
            ours = ScenarioRecord.junit_property
            reshape(path, mode, marker=SCENARIO_PROPERTY, ours=ours, prefix=subresults.PROPERTY_PREFIX)
        except (OSError, SyntaxError) as exc:  # ET.ParseError is a SyntaxError
            self.terminal.write_line(f"warning: --tau2-junit-properties could not rewrite {path}: {exc}", yellow=True)
