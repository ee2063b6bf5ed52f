"""Scenario sources for the tau2 ports: one generated class per task id, at collection time.

Collection reads only ``split_tasks.json`` (a few KB for retail and airline) after verifying
the domain's files against the pinned manifest once per process; ``tasks.json`` is parsed
the first time a scenario actually runs. On pinned data the sources vouch for their classes'
success signals (``scenario.base.SIGNALS_VOUCHED_FOR``), so collection does not resolve them:
the domain bases' properties return signal tuples by construction and read only the task,
and at the pin every task id of every split is in ``tasks.json`` (tests/unit/test_tau2_registry.py).
On unpinned data (``--tau2-allow-unpinned-data``) collection resolves them as for any class.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from pytest_tau2.domains.tau2_common.base import Tau2BaseScenario
from pytest_tau2.domains.tau2_common.tasks import tau2_pin
from pytest_tau2.scenario.base import SIGNALS_VOUCHED_FOR, Scenario
from pytest_tau2.scenario.registry import register_scenario_source

if TYPE_CHECKING:
    from pytest_tau2.settings import Settings

_GENERATED: dict[tuple[str, str, str], list[type[Tau2BaseScenario]]] = {}


def slug(task_id: str) -> str:
    """A readable, ``-k``-friendly name part for an upstream task id."""
    text = re.sub(r"[^0-9a-zA-Z]+", "_", task_id).strip("_").lower()
    return text or "task"


def generate(
    base: type[Tau2BaseScenario],
    domain: str,
    settings: Settings,
    *,
    split: str = "base",
    extra_split: str | None = None,
    vouch_signals: bool = False,
) -> list[type[Tau2BaseScenario]]:
    """One subclass of ``base`` per task id of ``split`` (cached per data root).

    ``vouch_signals``: ``base``'s success signals resolve for every task of the pinned data, so
    on pinned data the classes carry ``SIGNALS_VOUCHED_FOR`` (the built-in bases; see above).
    """
    pin = tau2_pin(settings, base.tau2_domain)
    root = pin.root
    key = (domain, str(root), split)
    if key in _GENERATED:
        return _GENERATED[key]
    splits = base.split_ids(root)
    if split not in splits:
        raise KeyError(f"split {split!r} not in {base.tau2_domain} split_tasks.json (has {sorted(splits)})")
    membership = {name: set(ids) for name, ids in splits.items() if name in ("train", "test")}
    base_ids = set(splits.get("base", []))
    classes = []
    used: set[str] = set()
    for task_id in splits[split]:
        name_part = task_id if re.fullmatch(r"[0-9A-Za-z_]+", task_id) else slug(task_id)
        if name_part in used:  # two ids with one slug: keep both, distinguishably
            name_part = f"{name_part}_{len(used)}"
        used.add(name_part)
        tags = tuple(f"tau2_split_{s}" for s, ids in membership.items() if task_id in ids)
        if extra_split and task_id not in base_ids:
            tags += (extra_split,)
        tags += base.task_tags(task_id)
        attrs: dict[str, object] = {"name": f"{domain}__{name_part}", "tau2_id": task_id, "tags": tags}
        attrs["__module__"] = base.__module__
        if vouch_signals and pin.pinned:
            attrs[SIGNALS_VOUCHED_FOR] = True
        classes.append(type(f"{base.__name__.replace('Base', '')}_{name_part}", (base,), attrs))
    _GENERATED[key] = classes
    return classes


def _source(
    loader: Callable[[], type[Tau2BaseScenario]], domain: str
) -> Callable[[Settings], Iterable[type[Scenario]]]:
    def source(settings: Settings) -> Iterable[type[Scenario]]:
        return generate(loader(), domain, settings, vouch_signals=True)

    return source


def _retail() -> type[Tau2BaseScenario]:
    from pytest_tau2.domains.tau2_retail.scenario import Tau2RetailBaseScenario

    return Tau2RetailBaseScenario


def _airline() -> type[Tau2BaseScenario]:
    from pytest_tau2.domains.tau2_airline.scenario import Tau2AirlineBaseScenario

    return Tau2AirlineBaseScenario


def _mock() -> type[Tau2BaseScenario]:
    from pytest_tau2.domains.tau2_mock.scenario import Tau2MockBaseScenario

    return Tau2MockBaseScenario


def _banking() -> type[Tau2BaseScenario]:
    from pytest_tau2.domains.tau2_banking_knowledge.scenario import Tau2BankingKnowledgeBaseScenario

    return Tau2BankingKnowledgeBaseScenario


def _telecom_source(settings: Settings) -> Iterable[type[Scenario]]:
    from pytest_tau2.domains.tau2_telecom.options import TELECOM
    from pytest_tau2.domains.tau2_telecom.scenario import Tau2TelecomBaseScenario

    split = TELECOM.of(settings).tasks
    base, extra = Tau2TelecomBaseScenario, "tau2_telecom_full"
    return generate(base, "tau2_telecom", settings, split=split, extra_split=extra, vouch_signals=True)


register_scenario_source("tau2_retail", _source(_retail, "tau2_retail"))
register_scenario_source("tau2_telecom", _telecom_source)
register_scenario_source("tau2_airline", _source(_airline, "tau2_airline"))
register_scenario_source("tau2_mock", _source(_mock, "tau2_mock"))
register_scenario_source("tau2_banking_knowledge", _source(_banking, "tau2_banking_knowledge"))
