"""The adapter's hooks, registered once a scenario appeared in the session (plugin/activation.py):
each hands its work to the run (plugin/run_state.py) or to the module that does it, with what the
run holds: parametrization (catalog), selection, the results folder and header once a scenario is
selected, the session's end."""

from __future__ import annotations

import pytest

from pytest_tau2.plugin import catalog, reporting, selection
from pytest_tau2.plugin.run_state import Tau2Run


class AdapterHooks:
    def __init__(self, run: Tau2Run) -> None:
        self.run = run

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        catalog.parametrize(metafunc, self.run.catalog)

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        selection.aim_keywords(item)  # -k aimed at an unavailable domain selects its error item
        reporting.locate(item, self.run.catalog)  # the scenario class's file and line

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        selection.select_scenarios(config, items, self.run.settings)
        selection.exact_keywords(config, items)  # before pytest's -k: a full scenario name is exact

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.run.collection_finished(session)

    def pytest_report_collectionfinish(self, config: pytest.Config) -> list[str]:
        """The ``tau2:`` header lines, after "collected N items", when a scenario was selected."""
        quiet = config.option.verbose < 0 or getattr(config.option, "no_header", False)  # as pytest's own header
        return self.run.header_lines() if self.run.selected and not quiet else []

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
        self.run.finish_started(session, exitstatus)  # before JUnit is written

    # pytest reads only methods named pytest_*: a second implementation of a hook is named after it
    @pytest.hookimpl(trylast=True, specname="pytest_sessionfinish")
    def pytest_sessionfinish_last(self, session: pytest.Session) -> None:
        self.run.finish(session)  # the run's files and the summary, after JUnit's
