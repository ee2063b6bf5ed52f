"""The pytest adapter (the ``pytest11`` entry point): the only package that imports pytest,
``_pytest`` or xdist (tests/unit/test_architecture.py keeps it so).

Everything here is a thin layer over the engine, reached through :mod:`pytest_tau2.run` (plus
settings, report and errors): the catalog says what to collect, a trial's participants are
built once (run/trial.py), :func:`pytest_tau2.run.pipeline.run_scenario` runs it, and
:mod:`pytest_tau2.report` writes and aggregates results. A scenario is a parametrized test
function (``test_scenario``), so ``-k``, ``--lf``, markers, IDEs and xdist work with no private API.

Modules, by role:

- ``options``: the ``--tau2-*`` options, markers, the run header;
- ``session``: configure, session start and end (results folder, JUnit, model clients, GC);
- ``catalog`` / ``selection``: collection (parameters) and which items run;
- ``item``: the scenario item's fixtures, its run, sub-results and result payload;
- ``reporting``: what reports show of it (location, sub-result lines and counts, JUnit's shape);
- ``prefetching``: the pytest side of ``--tau2-concurrency``;
- ``run_report``: the run-level report on the process that owns the results folder;
- ``xdist_hooks``, ``xdist_scheduler``, ``worker_settings``: xdist;
- ``invocation``: the run's settings from pytest's invocation;
- ``gc_policy``, ``listing``, ``selection_hint``: GC, ``pytest-tau2 list``, ``-k`` hints.

The hooks of this package's modules are re-exported here: pytest registers this one module.
"""

from pytest_tau2.plugin.catalog import pytest_generate_tests
from pytest_tau2.plugin.options import pytest_addoption, pytest_report_header
from pytest_tau2.plugin.selection import (
    pytest_collection,
    pytest_collection_finish,
    pytest_collection_modifyitems,
    pytest_itemcollected,
)
from pytest_tau2.plugin.session import (
    pytest_configure,
    pytest_sessionfinish,
    pytest_sessionstart,
    pytest_unconfigure,
)

pytest_plugins = ["pytest_tau2.plugin.item", "pytest_tau2.plugin.reporting"]
"""The scenario item's fixtures, test function and report hook, and what reporting tools see of
it (its location, sub-result lines and counts, JUnit's shape), registered with this plugin."""

__all__ = [
    "pytest_addoption",
    "pytest_collection",
    "pytest_collection_finish",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_generate_tests",
    "pytest_itemcollected",
    "pytest_report_header",
    "pytest_sessionfinish",
    "pytest_sessionstart",
    "pytest_unconfigure",
]
