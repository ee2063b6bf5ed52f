"""The pytest adapter (the ``pytest11`` entry point): the only package that imports pytest,
``_pytest`` or xdist (tests/unit/test_architecture.py keeps it so).

Everything here is a thin layer over the engine, reached through :mod:`pytest_tau2.run` (plus
settings, report and errors): the catalog says what to collect, a trial's participants are
built once (run/trial.py), :func:`pytest_tau2.run.pipeline.run_scenario` runs it, and
:mod:`pytest_tau2.report` writes and aggregates results. A scenario is a parametrized test
function (``test_scenario``), so ``-k``, ``--lf``, markers, IDEs and xdist work with no private API.

pytest loads this module in every project of the environment. Its hooks (below) declare the
options and markers and watch collection for a scenario; only then is the rest of the adapter
imported and registered (``activation``; docs/ci.md, "A project without scenarios").

Modules, by role:

- ``activation``: when the adapter wakes up; ``adapter``: the hooks it then registers;
- ``options``: the ``--tau2-*`` options and markers;
- ``session``: configure, scenarios selected (results folder, header, JUnit, model clients), session end;
- ``catalog`` / ``selection``: collection (parameters) and which items run;
- ``fixtures``: the scenario item's fixtures, declared at configure time (a conftest's override wins);
- ``item``: what those fixtures hand out: the item's trial, its run, sub-results and result payload;
- ``reporting``: what reports show of it (location, sub-result lines and counts, JUnit's shape);
- ``prefetching``: the pytest side of ``--tau2-concurrency``;
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
from pytest_tau2.plugin.keys import is_worker
from pytest_tau2.plugin.options import add_markers, pytest_addoption

SESSION_COUNTED_KEY = pytest.StashKey[bool]()
"""This config's pytest_configure counted a live session (gc_policy.session_configured)."""
FIXTURES_NAME = "tau2-fixtures"
LISTING_ONLY = ("collectonly", "setupplan", "help", "showfixtures", "markers")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    session_configured()
    config.stash[SESSION_COUNTED_KEY] = True
    add_markers(config)
    # Declared now, before any conftest.py's fixtures are parsed, so that a conftest's tau2_agent
    # overrides the built-in one (plugin/fixtures.py says why this must not wait for activation).
    config.pluginmanager.register(fixtures, FIXTURES_NAME)
    if config.pluginmanager.hasplugin("xdist"):
        from pytest_tau2.plugin.keys import scenario_name
        from pytest_tau2.plugin.selection_hint import HINTS_NAME, XdistSelectionHints
        from pytest_tau2.plugin.xdist_hooks import XdistHooks

        config.pluginmanager.register(XdistHooks(), "tau2-xdist")
        if not is_worker(config):  # a worker's -k hint reaches the controller as its worker ends
            config.pluginmanager.register(XdistSelectionHints(scenario_name), HINTS_NAME)
    listing = any(getattr(config.option, name, False) for name in LISTING_ONLY)
    if not is_worker(config) and not listing and activation.resume_requested(config):
        error = activation.activate(config)  # --tau2-resume: the saved results, before workers start
        if error is not None:
            raise error


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[activation.SESSION_KEY] = session


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """A test function that asks for the plugin's fixtures wakes the adapter up, before pytest
    makes its items (the fixtures and the parametrization must be there by then)."""
    if not activation.is_active(collector.config) and activation.asks_for_scenarios(obj):
        activation.activate(collector.config)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    """A usage error found while waking up is raised once collection is over; a node id of an
    unavailable domain's scenario gets its reason in pytest's "not found"."""
    try:
        result = yield
    except pytest.UsageError as exc:
        pending = session.config.stash.get(activation.PENDING_KEY, None)
        if pending is not None:  # node ids of scenarios are "not found" when the scenarios could not be made
            raise pending from None
        if activation.is_active(session.config):
            from pytest_tau2.plugin.selection import unavailable_node_ids

            explained = unavailable_node_ids(session, exc)
            if explained is not None:
                raise explained from None
        raise
    pending = session.config.stash.get(activation.PENDING_KEY, None)
    if pending is not None:
        raise pending
    return result


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if config.stash.get(SESSION_COUNTED_KEY, False):  # our configure ran (another plugin's may have failed first)
        # what pytest and the interpreter then collect is only what comes after; nothing to do
        # for a session that never had a scenario
        freeze_at_session_end(collect=activation.is_active(config))


__all__ = [
    "pytest_addoption",
    "pytest_collection",
    "pytest_configure",
    "pytest_pycollect_makeitem",
    "pytest_sessionstart",
    "pytest_unconfigure",
]
