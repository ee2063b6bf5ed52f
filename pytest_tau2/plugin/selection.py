"""Which scenario items run: ``--tau2-scenarios`` (names, globs, ``<name>-t<k>``), ``--tau2-shard``,
``-k``/node ids aimed at an unavailable domain (its error item is selected, so the reason shows),
and success signals resolved for every selected scenario before anything runs."""

from __future__ import annotations

import difflib
import fnmatch

import pytest

from pytest_tau2.plugin.gc_policy import freeze_collected
from pytest_tau2.plugin.keys import TRIAL_PARAM, scenario_name
from pytest_tau2.run import split_trial_id
from pytest_tau2.run.catalog import (
    EXACT_MARK,
    Catalog,
    exact_name_keywords,
    keyword_targets,
    node_id_targets,
    pattern_targets,
    signal_errors,
    unavailable_domain,
)
from pytest_tau2.settings import Settings
from pytest_tau2.settings.shards import Shard, select


def _matches(name: str, pattern: str) -> bool:
    """A --tau2-scenarios pattern selects a scenario, or the error item of an unavailable domain it aims at."""
    domain = unavailable_domain(name)
    return fnmatch.fnmatchcase(name, pattern) or (domain is not None and pattern_targets(pattern, domain))


def aim_keywords(item: pytest.Item) -> None:
    """``-k`` aimed at scenarios of an unavailable domain selects its error item, so the reason shows."""
    name = scenario_name(item)
    domain = unavailable_domain(name) if name is not None else None
    if domain is not None:
        item.extra_keyword_matches.update(keyword_targets(item.config.option.keyword, domain))


def exact_keywords(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``-k`` words that are a scenario's full name select that scenario only (scenario/selection.py:
    :func:`~pytest_tau2.scenario.selection.exact_name_keywords`); runs before pytest's ``-k``."""
    names = {item: scenario_name(item) for item in items}
    expression, exact = exact_name_keywords(config.option.keyword, {n for n in names.values() if n is not None})
    if not exact:
        return
    config.option.tau2_keyword_asked = config.option.keyword  # what the hints show (selection_hint.py)
    config.option.keyword = expression
    for item, name in names.items():
        if name in exact:
            item.extra_keyword_matches.add(name + EXACT_MARK)


def unavailable_node_ids(
    session: pytest.Session, exc: pytest.UsageError, errors: dict[str, Exception]
) -> pytest.UsageError | None:
    """A node id of an unavailable domain's scenario: pytest's "not found" names the domain's error
    (``errors``: the catalog's, by error item name; the entry point's ``pytest_collection`` wrapper
    asks, plugin/__init__.py)."""
    aimed = node_id_targets(session.config.args, [unavailable_domain(n) or n for n in errors])
    if not aimed:
        return None
    lines = [
        f"{', '.join(ids)}: not collected because {domain} is unavailable: {errors[domain + '__unavailable']}"
        for domain, ids in aimed.items()
    ]
    return pytest.UsageError(*exc.args, *lines)


def resolve_signals(session: pytest.Session, catalog: Catalog) -> None:
    """Success signals of every selected scenario, resolved now: a bad one is a collection error naming the class."""
    named = [(item, scenario_name(item)) for item in session.items]
    errors = signal_errors([n for _, n in named if n is not None], catalog.classes, catalog.settings)
    for item, name in named:
        if name in errors:
            report = pytest.CollectReport(item.nodeid, "failed", str(errors[name]), [])
            session.config.hook.pytest_collectreport(report=report)  # counted: the run stops before any item
    session.items[:] = [item for item, name in named if name not in errors]
    if catalog.classes:  # scenario items were collected (deselected ones live on in the terminal's stats)
        freeze_collected()  # items, classes, tasks live until the end: no full GC re-scans them (gc_policy.py)


def select_scenarios(config: pytest.Config, items: list[pytest.Item], settings: Settings) -> None:
    """``--tau2-scenarios``: keep exactly the named scenarios (names or glob patterns)."""
    wanted = settings.scenarios
    if not wanted:
        return
    given = [p.strip() for p in wanted.split(",") if p.strip()]
    patterns = selection_patterns(given, settings.trials)  # <name>-t<k>: one trial
    names = {item: scenario_name(item) for item in items}
    known = sorted({n for n in names.values() if n is not None})
    unmatched = [p for p in patterns if not any(_matches(n, p) for n in known)]
    if unmatched:
        hints = {p: difflib.get_close_matches(p, known, n=3) for p in unmatched}
        text = "; ".join(f"{p!r}" + (f" (did you mean {', '.join(h)}?)" if h else "") for p, h in hints.items())
        raise pytest.UsageError(f"--tau2-scenarios: no collected scenario matches {text}")
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        name = names[item]
        selected = name is None or any(_matches(name, p) for p in patterns)
        (keep if selected else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    narrow_to_trials(config, items, given, settings.trials)


class ShardSelection:
    """``--tau2-shard I/N``: keep this shard's items, after every other selection (-k, -m,
    --tau2-scenarios), so the shards split exactly what an unsharded run would run."""

    def __init__(self, shard: Shard) -> None:
        self.shard = shard

    def _key(self, item: pytest.Item) -> tuple[str, str]:
        name = scenario_name(item)  # the scenario's name, the same for each of its trials
        return ("other", item.nodeid) if name is None else ("scenario", name)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        keep, drop = select(items, self._key, self.shard)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep


# ---- trials -------------------------------------------------------------------------------------


def selection_patterns(patterns: list[str], trials: int) -> list[str]:
    """``--tau2-scenarios`` patterns as scenario selectors: ``<name>-t<k>`` selects ``<name>``
    (:func:`narrow_to_trials` then keeps the named trial)."""
    plain, narrowed = split_trial_patterns(patterns, trials)
    return plain + [name for name, _ in narrowed]


def split_trial_patterns(patterns: list[str], trials: int) -> tuple[list[str], list[tuple[str, int]]]:
    """The plain patterns, and the ``(name pattern, trial)`` pairs of ``<name>-t<k>`` patterns."""
    if trials <= 1:
        return patterns, []
    plain: list[str] = []
    narrowed: list[tuple[str, int]] = []
    for pattern in patterns:
        name, trial = split_trial_id(pattern)
        if trial is None:
            plain.append(pattern)
        elif trial > trials:
            raise pytest.UsageError(f"--tau2-scenarios: {pattern!r} names trial {trial}, but --tau2-trials is {trials}")
        else:
            narrowed.append((name, trial))
    return plain, narrowed


def narrow_to_trials(config: pytest.Config, items: list[pytest.Item], patterns: list[str], trials: int) -> None:
    """Keep only the named trials of scenarios that ``--tau2-scenarios`` selected by a trial pattern alone."""
    plain, narrowed = split_trial_patterns(patterns, trials)
    if not narrowed:
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        name = scenario_name(item)
        trial = item.callspec.params.get(TRIAL_PARAM) if name is not None else None  # type: ignore[attr-defined]
        wanted = (
            name is None
            or trial is None
            or any(fnmatch.fnmatchcase(name, p) for p in plain)
            or any(fnmatch.fnmatchcase(name, p) and trial == k for p, k in narrowed)
        )
        (keep if wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
