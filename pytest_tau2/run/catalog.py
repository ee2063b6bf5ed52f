"""Every scenario of a run by name, read once; a broken domain keeps its error.

The pytest adapter turns this into parameters of ``test_scenario`` (plugin/catalog.py); the xdist
controller reads it for its scheduler's expected lengths. No pytest here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.registry import SOURCES, all_scenarios
from pytest_tau2.scenario.selection import (
    EXACT_MARK,
    exact_name_keywords,
    keyword_targets,
    node_id_domains,
    node_id_targets,
    pattern_targets,
    signal_errors,
    unavailable_domain,
)
from pytest_tau2.settings import Settings

__all__ = [  # the selection helpers travel with the catalog: the adapter reaches them here
    "EXACT_MARK",
    "Catalog",
    "Scenario",
    "exact_name_keywords",
    "keyword_targets",
    "node_id_targets",
    "pattern_targets",
    "signal_errors",
    "unavailable_domain",
]


class Catalog:
    """The run's scenario classes by name, and one error per domain that could not be read."""

    def __init__(
        self,
        settings: Settings,
        wrap_error: Callable[[Exception], Exception] | None = None,
        args: Sequence[str] = (),
    ) -> None:
        self.settings = settings
        self.wrap_error = wrap_error
        """Applied to each domain's error (an xdist worker names itself in data errors)."""
        self.args = list(args)
        """pytest's arguments: node ids of scenarios alone generate only their domains."""
        self.classes: dict[str, type[Scenario]] = {}
        self.errors: dict[str, Exception] = {}
        self._loaded = False

    def load(self) -> None:
        """Read every scenario (once): collection does, and the xdist controller for its scheduler."""
        if not self._loaded:
            found: list[tuple[str, Exception]] = []
            # A run given scenarios' node ids (an IDE, a script) generates only their domains:
            # generating the other four tau2 ports cost a retail run ~80 ms of its start.
            only = node_id_domains(self.args, SOURCES.keys())
            self.classes = all_scenarios(self.settings, found, only)
            # One item per broken domain carries the error, instead of one traceback per scenario.
            wrap = self.wrap_error or (lambda exc: exc)
            self.errors = {f"{domain}__unavailable": wrap(exc) for domain, exc in found}
            self._loaded = True

    def tags(self, name: str) -> tuple[str, ...]:
        """The scenario's markers (``tau2_split_test``, ...); none for a domain's error item."""
        cls = self.classes.get(name)
        return tuple(cls.tags) if cls is not None else ()

    def get(self, name: str) -> type[Scenario]:
        self.load()
        if name in self.errors:
            raise self.errors[name]
        return self.classes[name]

    def instance(self, name: str) -> Scenario:
        """A fresh scenario object, bound to the run's settings."""
        return self.get(name)().bind(self.settings)
