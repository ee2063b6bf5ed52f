"""The scenario registry: ``@register_eval_scenario`` and lazily generated scenario sources.

Explicit classes register at import time. Data-derived domains (the tau2 ports) register a
*source*: a function called once, at collection, that yields classes for every task. An
explicitly registered class with the same name wins over a generated one, which is how a user
overrides a single tau2 scenario by subclassing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any, TypeVar

from pytest_tau2.errors import ScenarioDefinitionError
from pytest_tau2.extension.registry import Registry
from pytest_tau2.scenario.base import Scenario

S = TypeVar("S", bound=type[Scenario])

REGISTRY: Registry[str, type[Scenario]] = Registry("scenario", describe=lambda cls: _qualified(cls))
"""Scenario classes by name (extension/registry.py), filled by :func:`register_eval_scenario`."""
ScenarioSource = Callable[[Any], Iterable[type[Scenario]]]
SOURCES: Registry[str, ScenarioSource] = Registry("scenario source")
"""Functions that generate a domain's scenario classes (the tau2 ports), by domain."""


def register_eval_scenario(cls: S) -> S:
    """Class decorator: make ``cls`` a collected scenario. Duplicate names are an error."""
    if not (isinstance(cls, type) and issubclass(cls, Scenario)):
        raise ScenarioDefinitionError(f"@register_eval_scenario expects a Scenario subclass, got {cls!r}")
    if "name" not in cls.__dict__ and not cls.name:
        raise ScenarioDefinitionError(f"scenario class {_qualified(cls)} has no name")
    existing = REGISTRY.get(cls.name)
    if existing is not None and _qualified(existing) != _qualified(cls):
        raise ScenarioDefinitionError(
            f"duplicate scenario name {cls.name!r}: {_qualified(existing)} and {_qualified(cls)}; "
            "scenario names must be unique"
        )
    REGISTRY.register(cls.name, cls, replace=True)  # the same class imported again (by its path) replaces itself
    return cls


def register_scenario_source(domain: str, source: ScenarioSource) -> None:
    """Register a function ``source(settings) -> iterable of Scenario classes`` for a domain."""
    SOURCES.register(domain, source, replace=True)


def all_scenarios(
    settings: Any, errors: list[tuple[str, Exception]] | None = None, only: Collection[str] | None = None
) -> dict[str, type[Scenario]]:
    """Every scenario by name (sorted), explicit classes first, then generated ones (of the
    sources in ``only``, when given: scenario.selection.node_id_domains).

    A source that fails is reported through ``errors`` (domain, exception) and contributes
    nothing, so one broken domain never hides the others.
    """
    found = dict(REGISTRY)
    for domain, source in SOURCES.items():
        if only is not None and domain not in only:
            continue
        try:
            generated = list(source(settings))
        except Exception as exc:  # reported by the caller as a collection error
            if errors is None:
                raise
            errors.append((domain, exc))
            continue
        for cls in generated:
            found.setdefault(cls.name, cls)
    return dict(sorted(found.items()))


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"
