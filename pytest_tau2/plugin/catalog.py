"""Collection: the run's scenarios (run/catalog.py) as the parameters of ``test_scenario``.

A scenario is a parametrized test function (``test_scenario[<name>]``, ``[<name>-t<k>]`` for one
of several trials), so ``-k``, ``--lf``, markers, IDEs and xdist need no private API.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_tau2.plugin.keys import PARAM, TRIAL_PARAM
from pytest_tau2.run import trial_id
from pytest_tau2.run.catalog import Catalog


def parametrize(metafunc: pytest.Metafunc, catalog: Catalog) -> None:
    """``pytest_generate_tests`` (plugin/adapter.py): a test that takes the scenario's name gets
    one item per scenario (per trial)."""
    if PARAM in metafunc.fixturenames:
        trials = catalog.settings.trials
        if trials > 1 and TRIAL_PARAM in metafunc.fixturenames:  # --tau2-trials K: K items per scenario
            metafunc.parametrize((PARAM, TRIAL_PARAM), trial_params(params(catalog), set(catalog.errors), trials))
        else:
            metafunc.parametrize(PARAM, params(catalog))


def params(catalog: Catalog) -> list[Any]:
    """One parameter per scenario, marked ``tau2`` and with its tags; one per unavailable domain."""
    catalog.load()
    found = [
        pytest.param(name, id=name, marks=[getattr(pytest.mark, m) for m in ("tau2", *catalog.tags(name))])
        for name in catalog.classes
    ]
    found += [pytest.param(name, id=name, marks=[pytest.mark.tau2]) for name in catalog.errors]
    return found


def trial_params(names: list[Any], errors: set[str], trials: int) -> list[Any]:
    """``(scenario, trial)`` parameters for ``--tau2-trials`` > 1, ids ``<scenario>-t<k>``, the
    trials of a scenario next to each other. ``names`` are the one-trial parameters (pytest.param
    of the scenario name); an unavailable domain's error item stays a single trial-1 item."""
    out = []
    for param in names:
        name = str(param.values[0])
        count = 1 if name in errors else trials
        ids = [param.id] if name in errors else [trial_id(name, k, trials) for k in range(1, count + 1)]
        out += [pytest.param(name, k, id=ids[k - 1], marks=param.marks) for k in range(1, count + 1)]
    return out
