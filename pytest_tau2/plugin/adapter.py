"""The adapter's hooks, registered once a scenario appeared in the session (plugin/activation.py):
parametrization (catalog), selection, the results folder and header once a scenario is selected,
the session's end. The scenario item's fixtures and test function (item.py), the run report and
the selection hints are registered beside it by :func:`configure`."""

from pytest_tau2.plugin.catalog import pytest_generate_tests
from pytest_tau2.plugin.selection import pytest_collection_modifyitems, pytest_itemcollected
from pytest_tau2.plugin.session import (
    configure,
    pytest_collection_finish,
    pytest_report_collectionfinish,
    pytest_sessionfinish,
    pytest_unconfigure,
    session_started,
)

__all__ = [
    "configure",
    "pytest_collection_finish",
    "pytest_collection_modifyitems",
    "pytest_generate_tests",
    "pytest_itemcollected",
    "pytest_report_collectionfinish",
    "pytest_sessionfinish",
    "pytest_unconfigure",
    "session_started",
]
