"""The pytest adapter (the ``pytest11`` entry point): the only package that imports pytest,
``_pytest`` or xdist (tests/unit/test_architecture.py keeps it so).

Everything here is a thin layer over the engine, reached through :mod:`pytest_tau2.run` (plus
settings, report and errors): the catalog says what to collect, a trial's participants are
built once (run/trial.py), :func:`pytest_tau2.run.pipeline.run_scenario` runs it, and
:mod:`pytest_tau2.report` writes and aggregates results. A scenario is a parametrized test
function (``test_scenario``), so ``-k``, ``--lf``, markers, IDEs and xdist work with no private API.

pytest loads this module in every project of the environment. Its hooks (below) declare the
options and markers, make the run object (``run_state``: nothing resolved yet) and watch
collection for a scenario; only then is the rest of the adapter imported and registered
(``activation``; docs/ci.md, "A project without scenarios"). Each hook here is a short
delegation to the run.

Modules, by role:

- ``run_state``: the run, one object built in phases (configure, scenarios selected, finish);
- ``activation``: when the adapter wakes up; ``adapter``: the hooks it then registers;
- ``options``: the ``--tau2-*`` options and markers; ``terminal``: pytest's terminal reporter;
- ``session``: JUnit's writes guarded;
- ``catalog`` / ``selection``: collection (parameters) and which items run;
- ``fixtures``: the scenario item's fixtures, declared at configure time (a conftest's override wins);
- ``item``: what those fixtures hand out: the item's trial, its run, sub-results and result payload;
- ``reporting``: what reports show of it (location, sub-result lines and counts, JUnit's shape);
- ``prefetching``, ``budgeting``, ``estimating``: the pytest side of ``--tau2-concurrency``,
  ``--tau2-budget`` and the estimate; ``gate``: the baseline comparison and the gates;
- ``run_report``: the run-level report on the process that owns the results folder;
- ``xdist_hooks``, ``xdist_scheduler``, ``worker_settings``: xdist;
- ``invocation``: the run's settings from pytest's invocation;
- ``gc_policy``, ``listing``, ``selection_hint``: GC, ``pytest-tau2 list``, ``-k`` hints.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

from pytest_tau2.plugin import activation, fixtures
from pytest_tau2.plugin.gc_policy import freeze_at_session_end, session_configured
from pytest_tau2.plugin.keys import is_worker, runs_scenarios
from pytest_tau2.plugin.options import add_markers, pytest_addoption
from pytest_tau2.plugin.run_state import RUN_KEY, Tau2Run

FIXTURES_NAME = "tau2-fixtures"
TERMINAL_NAME = "tau2-terminal"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    session_configured()
    run = config.stash[RUN_KEY] = Tau2Run(config)  # its presence: this configure counted a live session
    config.pluginmanager.register(run.terminal, TERMINAL_NAME)
    add_markers(config)
    # Declared now, before any conftest.py's fixtures are parsed, so that a conftest's tau2_agent
    # overrides the built-in one (plugin/fixtures.py says why this must not wait for activation).
    config.pluginmanager.register(fixtures, FIXTURES_NAME)
    if config.pluginmanager.hasplugin("xdist"):
        from pytest_tau2.plugin.keys import scenario_name
        from pytest_tau2.plugin.selection_hint import HINTS_NAME, XdistSelectionHints
        from pytest_tau2.plugin.xdist_hooks import XdistHooks

        config.pluginmanager.register(XdistHooks(run), "tau2-xdist")
        if not is_worker(config):  # a worker's -k hint reaches the controller as its worker ends
            run.hints = XdistSelectionHints(scenario_name)
            config.pluginmanager.register(run.hints, HINTS_NAME)
    if not is_worker(config) and runs_scenarios(config) and activation.resume_requested(config):
        error = activation.activate(run)  # --tau2-resume: the saved results, before workers start
        if error is not None:
            raise error


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """A model on the command line (``--tau2-agent-model``/``--tau2-user-model``) says this run
    will call one: its HTTP client's import starts on a thread now, before the conftest files and
    collection, which it then overlaps (llm/wire_import.py). Not on an xdist controller (its
    workers call the models) nor for ``--collect-only``; a model given only by ini or environment
    starts it when the run is configured (an environment variable may be set for every project)."""
    known = early_config.known_args_namespace
    wanted = getattr(known, "tau2_agent_model", None) or getattr(known, "tau2_user_model", None)
    if wanted and not getattr(known, "collectonly", False) and not getattr(known, "numprocesses", None):
        from pytest_tau2.run.early import import_model_client

        import_model_client()


def pytest_sessionstart(session: pytest.Session) -> None:
    run = session.config.stash.get(RUN_KEY, None)
    if run is not None:
        run.session_started(session)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """A test function that asks for the plugin's fixtures wakes the adapter up, before pytest
    makes its items (the fixtures and the parametrization must be there by then)."""
    run = collector.config.stash[RUN_KEY]
    if not run.active and activation.asks_for_scenarios(obj):
        activation.activate(run)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    """A usage error found while waking up is raised once collection is over; a node id of an
    unavailable domain's scenario gets its reason in pytest's "not found"."""
    run = session.config.stash[RUN_KEY]
    try:
        result = yield
    except pytest.UsageError as exc:
        if run.pending is not None:  # node ids of scenarios are "not found" when the scenarios could not be made
            raise run.pending from None
        if run.configured:
            from pytest_tau2.plugin.selection import unavailable_node_ids

            explained = unavailable_node_ids(session, exc, run.catalog.errors)
            if explained is not None:
                raise explained from None
        raise
    if run.pending is not None:
        raise run.pending
    return result


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(RUN_KEY, None)
    if run is not None:  # our configure ran (another plugin's may have failed first)
        run.unconfigure()
        # what pytest and the interpreter then collect is only what comes after; nothing to do
        # for a session that never had a scenario
        freeze_at_session_end(collect=run.active)


__all__ = [
    "pytest_addoption",
    "pytest_collection",
    "pytest_configure",
    "pytest_pycollect_makeitem",
    "pytest_sessionstart",
    "pytest_unconfigure",
]
