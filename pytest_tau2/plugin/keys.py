"""What the adapter's modules share: the scenario item's parameter names, and how an item's
scenario name, results folder and id, and the kind of process, are read from pytest's objects
(public API only). The run's state is one object (plugin/run_state.py)."""

from __future__ import annotations

import re

import pytest

PARAM = "tau2_scenario_name"
TRIAL_PARAM = "tau2_trial"
SCENARIO_PROPERTY = "tau2_scenario"
"""The user property recorded on every scenario item before it can fail."""
_ITEM_ID = re.compile(r"::test_scenario\[(?P<id>.+)\]$")


def scenario_name(item: pytest.Item) -> str | None:
    """The scenario an item runs (the same for each of its trials); None for any other test."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or PARAM not in callspec.params:
        return None
    return str(callspec.params[PARAM])


def result_folder(node: pytest.Item) -> str:
    """The item's folder in the results dir: its parameter id (the scenario name, or
    ``<name>-t<k>`` for one of several trials)."""
    callspec = getattr(node, "callspec", None)
    return callspec.id if callspec is not None else node.name


def item_id(nodeid: str) -> str | None:
    """A scenario item's id from its node id: the scenario name, or ``<name>-t<k>`` for a trial."""
    match = _ITEM_ID.search(nodeid)
    return match["id"] if match is not None else None


LISTING_ONLY = ("collectonly", "setupplan", "help", "showfixtures", "markers")
"""pytest's options for invocations that only list or explain."""


def runs_scenarios(config: pytest.Config) -> bool:
    """False for invocations that only list or explain (--collect-only, --setup-plan, --help, --fixtures, --markers)."""
    return not any(getattr(config.option, name, False) for name in LISTING_ONLY)


def is_worker(config: pytest.Config) -> bool:
    """An xdist worker (local or remote): it never touches the results folder."""
    return hasattr(config, "workerinput")


def is_controller_of_workers(config: pytest.Config) -> bool:
    """The xdist controller of local (-n) or remote (-d --tx ...) workers: it runs no scenario."""
    option = config.option
    remote = getattr(option, "dist", "no") != "no" and bool(getattr(option, "tx", None))
    return (bool(getattr(option, "numprocesses", None)) or remote) and not is_worker(config)
