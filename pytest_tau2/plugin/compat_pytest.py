"""pytest's internals that the adapter uses, in one place (read from pytest 9.0.0 and 9.0.3).

Everything else the adapter uses is pytest's public API (``pytest.*``, hooks, ``config.stash``).
pytest offers no public handle on its ``--junitxml`` writer: the ``record_testsuite_property``
fixture reaches it only inside a test process while fixtures run, which is neither the xdist
controller (it runs no fixture) nor the end of the session, where the gate's properties are
known. So the writer is found through its stash key, ``_pytest.junitxml.xml_key``, and used
through its methods ``add_global_property``, ``pytest_sessionfinish``,
``pytest_terminal_summary`` and its ``logfile`` attribute. Nothing else in the package touches
``_pytest``.

:func:`contract_problems` lists what an installed pytest lacks (tests/unit/test_compat_contract.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from _pytest.junitxml import LogXML

TESTED = ("9.0.0", "9.0.3")
"""The pytest releases this module was read from and tested with (oldest, newest)."""

_GUARDED = "_tau2_guarded"


def junit_writer(config: pytest.Config) -> LogXML | None:
    """pytest's JUnit XML writer (``LogXML``) of this run, or None without ``--junitxml``."""
    from _pytest.junitxml import xml_key

    return config.stash.get(xml_key, None)


def add_junit_suite_properties(config: pytest.Config, properties: Iterable[tuple[str, str]]) -> None:
    """Add ``<property>`` elements to the JUnit file's ``<testsuite>`` (nothing without ``--junitxml``)."""
    xml = junit_writer(config)
    if xml is not None:
        for name, value in properties:
            xml.add_global_property(name, value)


def guard_junit_writes(config: pytest.Config, on_error: Callable[[str, OSError], None]) -> None:
    """Turn an ``OSError`` of the JUnit writer's end-of-session write into ``on_error(what, error)``
    (``what``: "the JUnit file PATH"), and leave out its "generated xml file" line then. pytest
    binds a plugin's hooks when it is registered: hence unregister, wrap, register again."""
    xml = junit_writer(config)
    if xml is None or getattr(xml, _GUARDED, False):
        return
    finish, summary = xml.pytest_sessionfinish, xml.pytest_terminal_summary
    unwritten: list[str] = []

    def pytest_sessionfinish() -> None:
        try:
            finish()
        except OSError as exc:
            unwritten.append(str(exc))
            on_error(f"the JUnit file {xml.logfile}", exc)

    def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
        if not unwritten:  # "generated xml file" only when it was
            summary(terminalreporter, config)

    config.pluginmanager.unregister(xml)
    setattr(xml, "pytest_sessionfinish", pytest_sessionfinish)  # noqa: B010  (mypy: a method)
    setattr(xml, "pytest_terminal_summary", pytest_terminal_summary)  # noqa: B010
    setattr(xml, _GUARDED, True)
    config.pluginmanager.register(xml)


def contract_problems() -> list[str]:
    """What the installed pytest lacks of the above, one line each naming it and the version."""
    where = f"pytest {pytest.__version__} (compat_pytest read {' and '.join(TESTED)})"
    try:
        from _pytest import junitxml
    except ImportError as exc:
        return [f"{where}: cannot import _pytest.junitxml: {exc}"]
    problems = []
    if not isinstance(getattr(junitxml, "xml_key", None), pytest.StashKey):
        problems.append(f"{where} lacks the stash key _pytest.junitxml.xml_key")
    writer = getattr(junitxml, "LogXML", None)
    if writer is None:
        return [*problems, f"{where} lacks _pytest.junitxml.LogXML"]
    for name in ("add_global_property", "pytest_sessionfinish", "pytest_terminal_summary"):
        if not callable(getattr(writer, name, None)):
            problems.append(f"{where} lacks the method LogXML.{name}")
    if "logfile" not in writer.__init__.__code__.co_names:
        problems.append(f"{where}: LogXML.__init__ no longer sets self.logfile")
    return problems
