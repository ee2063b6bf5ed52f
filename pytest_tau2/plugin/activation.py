"""When the adapter wakes up.

pytest loads this plugin in every project of the environment, and most have no scenario. Until
one appears the plugin only declares its options and markers: it resolves no settings, prints no
header, opens no results folder and imports no engine module (docs/ci.md, "A project without
scenarios"; tests/plugin/test_no_scenarios.py).

- A scenario *appears* when pytest collects a test function that asks for one of the plugin's
  fixtures (``from pytest_tau2 import test_scenario`` is one): :func:`activate` then configures
  the run (plugin/run_state.py: the settings, where a bad ``--tau2-*`` value is a usage error
  after collection; the catalog, the run report, the fixtures) and registers the adapter's hooks
  (plugin/adapter.py: parametrization, selection, the session's end).
- The run header shows and the results folder opens once collection has *selected* a scenario
  item (run_state.py:Tau2Run.scenarios_selected): ``-k`` or ``--tau2-scenarios`` that deselect
  them all leave nothing behind.
- An xdist controller collects nothing: it wakes when a worker reports that it collected
  scenario items, before any of them runs (plugin/xdist_hooks.py).
- ``--tau2-resume DIR`` wakes it at configure time: the saved results travel to the workers as
  they start.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_tau2.plugin.run_state import Tau2Run

ADAPTER_NAME = "tau2-adapter"
"""The adapter's name in pytest's plugin manager (only once a scenario appeared)."""
ITEM_MODULE = "pytest_tau2.plugin.item"
FIXTURE_PREFIX = "tau2_"


def asks_for_scenarios(obj: object) -> bool:
    """Whether a collected object is a scenario test: ``test_scenario`` itself, or a function that
    takes a ``tau2_*`` fixture. Cheap: pytest asks this of every name in every test module."""
    item_module = sys.modules.get(ITEM_MODULE)
    if item_module is not None and obj is getattr(item_module, "test_scenario", None):
        return True
    code = getattr(obj, "__code__", None)
    if code is None or not callable(obj):
        return False
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    return any(isinstance(name, str) and name.startswith(FIXTURE_PREFIX) for name in names)


def resume_requested(config: pytest.Config) -> bool:
    """``--tau2-resume`` given (flag, ini key or environment): this run means to run scenarios."""
    from pytest_tau2.settings import OPTIONS

    option = next(o for o in OPTIONS if o.name == "resume")
    return bool(
        config.getoption(f"tau2_{option.name}", None)
        or config.getini(option.ini)
        or (option.env is not None and os.environ.get(option.env))
    )


def activate(run: Tau2Run) -> pytest.UsageError | None:
    """Wake the adapter up (once per session); returns the usage error that stopped it, if any."""
    if run.active:
        return run.pending
    run.active = True
    try:
        run.configure()
    except pytest.UsageError as exc:
        run.pending = exc
        return exc
    from pytest_tau2.plugin.adapter import AdapterHooks

    run.config.pluginmanager.register(AdapterHooks(run), ADAPTER_NAME)
    return None
