"""Selections that aim at an unavailable domain, and success signals resolved at collection.

A tau2 domain whose data is missing or broken is collected as one ``<domain>__unavailable``
item carrying the reason, instead of its scenarios. A selection written for the scenarios
(``-k tau2_retail__1``, ``--tau2-scenarios tau2_retail__1``, a node id
``...::test_scenario[tau2_retail__1]``) would otherwise select nothing and hide the reason
(pytest exits 5 without a word). The functions here tell which selections aim at a domain, so
the plugin keeps that domain's item, or names its error. Plain logic: the plugin feeds it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_tau2.errors import DataError, ScenarioDefinitionError
from pytest_tau2.scenario.base import Scenario, check_success_signals, signals_vouched_for

__all__ = [
    "UNAVAILABLE",
    "keyword_targets",
    "node_id_domains",
    "node_id_targets",
    "pattern_targets",
    "signal_errors",
    "unavailable_domain",
]

UNAVAILABLE = "__unavailable"
# The words of a -k expression: pytest's identifier characters, less its operators.
_KEYWORD_WORD = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")
_OPERATORS = frozenset({"and", "or", "not", "True", "False", "None"})
_PARAM_ID = re.compile(r"\[(?P<id>[^\]]+)\]$")


def unavailable_domain(name: str) -> str | None:
    """``tau2_retail`` for ``tau2_retail__unavailable``; None for a real scenario name."""
    return name.removesuffix(UNAVAILABLE) if name.endswith(UNAVAILABLE) else None


def _could_name(word: str, domain: str) -> bool:
    """Whether ``word``, matched as a substring of item names, could match a scenario of ``domain``."""
    word = word.rsplit("[", 1)[-1].rstrip("]")  # test_scenario[tau2_retail__1] -> tau2_retail__1
    if "__" not in word:
        return False  # a bare word ("24", "retail") may match anything; it does not aim at the domain
    head = word.split("__", 1)[0]
    return domain.endswith(head)


def keyword_targets(expression: str | None, domain: str) -> list[str]:
    """The words of a ``-k`` expression that aim at scenarios of ``domain`` (``tau2_retail__1``, ``retail__1``).

    The plugin adds them to the keywords of the domain's unavailable item, so ``-k`` selects that
    item (and shows its error) wherever it would have selected one of the domain's scenarios.
    """
    if not expression:
        return []
    words = [w for w in _KEYWORD_WORD.findall(expression) if w not in _OPERATORS]
    return [w for w in dict.fromkeys(words) if _could_name(w, domain)]


EXACT_MARK = "]"
"""Appended to a ``-k`` word that names a scenario exactly (and to that scenario's keywords)."""


def exact_name_keywords(expression: str | None, names: Iterable[str]) -> tuple[str | None, set[str]]:
    """``-k`` words that are a scenario's full name select that scenario, not the longer names
    that contain it (``tau2_retail__5`` is not ``tau2_retail__50``): pytest matches substrings,
    so each such word becomes ``<name>]``, a keyword only that scenario's items carry (the item
    name ends ``[<name>]``; the plugin adds it to trial items too). Returns the expression to use
    and the names made exact (none: the expression as it was)."""
    known = set(names)
    if not expression:
        return expression, set()
    words = {w for w in _KEYWORD_WORD.findall(expression) if w in known}
    exact = {w for w in words if any(w != n and w in n for n in known)}
    if not exact:
        return expression, set()
    rewritten = _KEYWORD_WORD.sub(lambda m: m[0] + EXACT_MARK if m[0] in exact else m[0], expression)
    return rewritten, exact


def pattern_targets(pattern: str, domain: str) -> bool:
    """Whether a ``--tau2-scenarios`` name or glob could match a scenario of ``domain``."""
    literal = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
    prefix = f"{domain}__"
    return prefix.startswith(literal) or literal.startswith(prefix)


def node_id_targets(args: Iterable[str], domains: Iterable[str]) -> dict[str, list[str]]:
    """``{domain: [scenario ids]}`` for node-id arguments (``...::test_scenario[<id>]``) that aim at ``domains``."""
    found: dict[str, list[str]] = {}
    wanted = list(domains)
    for arg in args:
        match = _PARAM_ID.search(str(arg))
        if match is None:
            continue
        for domain in wanted:
            if match.group("id").startswith(f"{domain}__"):
                found.setdefault(domain, []).append(match.group("id"))
    return found


def node_id_domains(args: Sequence[str], domains: Iterable[str]) -> set[str] | None:
    """The scenario sources a run's arguments can reach, when every argument is a scenario's node
    id (``...::test_scenario[tau2_retail__1]``, as IDEs and scripts pass them) naming a source's
    ``<domain>__`` scenario (:func:`node_id_targets`): only those domains need generating (the
    others' items would all be left out by pytest). None, meaning every domain, for any other
    argument (a folder, a file, a test without parameters) or an id no source names (a typo keeps
    every name for the hints)."""
    ids = [match.group("id") for arg in args if (match := _PARAM_ID.search(str(arg)))]
    if not args or len(ids) < len(args):
        return None
    aimed = node_id_targets(args, domains)
    named = {name for names in aimed.values() for name in names}
    return set(aimed) if all(name in named for name in ids) else None


def signal_errors(
    names: Sequence[str], classes: Mapping[str, type[Scenario]], settings: Any
) -> dict[str, ScenarioDefinitionError]:
    """For each selected scenario name whose success signals do not resolve to a valid value: the error.

    Each class is checked once (trial items share it). A data problem met while resolving is left
    to the item, which reports it without a traceback. A class whose source vouched for its
    signals (``scenario.base.SIGNALS_VOUCHED_FOR``: the tau2 ports on checksum-verified data) is
    not resolved: that would parse its domain's tasks.json here, for nothing.
    """
    errors: dict[str, ScenarioDefinitionError] = {}
    checked: dict[type[Scenario], ScenarioDefinitionError | None] = {}
    for name in names:
        cls = classes.get(name)
        if cls is None:
            continue
        if cls not in checked:
            checked[cls] = _check(cls, settings)
        error = checked[cls]
        if error is not None:
            errors[name] = error
    return errors


def _check(cls: type[Scenario], settings: Any) -> ScenarioDefinitionError | None:
    if signals_vouched_for(cls):
        return None
    try:
        scenario = cls().bind(settings)
    except DataError:
        return None
    except Exception as exc:  # the item would fail the same way: name the class now
        return ScenarioDefinitionError(
            f"scenario class {cls.__module__}.{cls.__qualname__} (name {cls.name!r}) cannot be created: "
            f"{type(exc).__name__}: {exc}"
        )
    try:
        check_success_signals(scenario)
    except ScenarioDefinitionError as exc:
        return exc
    except DataError:
        return None
    return None
