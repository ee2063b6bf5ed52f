"""What the adapter's modules share: stash keys, the scenario item's parameter names, and how an
item's scenario name, results folder and id are read from pytest's objects (public API only)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # this module is read at every pytest start: it imports no engine module
    from pytest_tau2.run.catalog import Catalog  # noqa: F401  (named in the stash keys below)
    from pytest_tau2.settings import Settings  # noqa: F401

SETTINGS_KEY = pytest.StashKey["Settings"]()
"""The run's resolved ``--tau2-*`` settings."""
CATALOG_KEY = pytest.StashKey["Catalog"]()
"""Every scenario of the run (run/catalog.py)."""
RESULT_KEY = pytest.StashKey[dict[str, Any]]()
"""The item's result payload (files + metrics), attached to its setup report."""
SAVED_KEY = pytest.StashKey[dict[str, dict[str, Any]]]()
"""``--tau2-resume``: the complete saved results by result folder, as record documents (plain
values: they travel to xdist workers); read through the record where they stand in for a run."""
FOLDER_NOTES_KEY = pytest.StashKey[list[str]]()
"""What the results folder's check found worth telling (a model server that moved since the saved run)."""
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


def is_worker(config: pytest.Config) -> bool:
    """An xdist worker (local or remote): it never touches the results folder."""
    return hasattr(config, "workerinput")


def is_controller_of_workers(config: pytest.Config) -> bool:
    """The xdist controller of local (-n) or remote (-d --tx ...) workers: it runs no scenario."""
    option = config.option
    remote = getattr(option, "dist", "no") != "no" and bool(getattr(option, "tx", None))
    return (bool(getattr(option, "numprocesses", None)) or remote) and not is_worker(config)
