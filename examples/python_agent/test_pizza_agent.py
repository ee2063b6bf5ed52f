"""Collects every registered scenario as one test item: ``test_scenario[<scenario name>]``."""

from pytest_tau2 import test_scenario  # noqa: F401  (pytest collects it from here)
