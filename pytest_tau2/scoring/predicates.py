"""DB-state predicates: named, pure checks over a scenario's final DB, and their verdicts.

A predicate is a function ``(db: dict, **arguments) -> bool``: deterministic, no I/O, no
randomness, never mutating ``db``. It is registered under ``(domain, function name)``; the
function name is the ``func_name`` of upstream's ``env_assertions`` records, which this
plugin calls *db-state assertions*. Predicates do not know which side's DB they read: the
caller picks it from the assertion record (``side`` or upstream's ``env_type``:
``"agent"``/``"assistant"`` -> the agent DB, ``"user"`` -> the user DB).

:func:`evaluate_db_state_assertion` never raises: every failure mode becomes a verdict with
``passed: False``, ``actual: None`` and ``error`` starting with the mode's name
(``missing_predicate``, ``missing_db``, ``bad_assertion``, ``predicate_raised``,
``non_bool_result``). See ``docs/db-state-predicates.md``.

A domain may name the module that registers its predicates (:func:`register_predicate_module`):
the first evaluation for that domain, or a listing, imports it. The shipped domains name theirs in
``pytest_tau2.domains.predicate_modules`` (scoring never imports a domain).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pytest_tau2.extension.registry import Registry

Predicate = Callable[..., bool]

DB_STATE_PREDICATES: Registry[tuple[str, str], Predicate] = Registry(
    "db-state predicate", describe=lambda fn: _qualified(fn)
)
"""Every predicate by ``(domain, func_name)`` (extension/registry.py), filled by
:func:`register_db_state_predicate`."""

PREDICATE_MODULES: Registry[str, str] = Registry("db-state predicate module")
"""The module that registers a domain's predicates, by domain: imported when first needed."""


def register_predicate_module(domain: str, module: str) -> None:
    """Name the module (``package.module``) whose import registers ``domain``'s predicates."""
    PREDICATE_MODULES.register(domain, module, replace=True)


class _ByDomain(Mapping[str, Mapping[str, Predicate]]):
    """``{domain: {func_name: predicate}}``: a read-only view of :data:`DB_STATE_PREDICATES`."""

    def _grouped(self) -> dict[str, dict[str, Predicate]]:
        grouped: dict[str, dict[str, Predicate]] = {}
        for (domain, name), fn in DB_STATE_PREDICATES.items():
            grouped.setdefault(domain, {})[name] = fn
        return grouped

    def __getitem__(self, domain: str) -> Mapping[str, Predicate]:
        return self._grouped()[domain]

    def __iter__(self) -> Iterator[str]:
        return iter(self._grouped())

    def __len__(self) -> int:
        return len(self._grouped())


ALL_DB_STATE_PREDICATES: Mapping[str, Mapping[str, Predicate]] = _ByDomain()
"""``{domain: {func_name: predicate}}`` (read-only; register with :func:`register_db_state_predicate`)."""

AGENT_SIDES = ("agent", "assistant")
USER_SIDES = ("user",)


def register_db_state_predicate(domain: str) -> Callable[[Predicate], Predicate]:
    """Decorator: register a predicate under ``(domain, fn.__name__)`` and return it unchanged.

    The function name is the key the assertion records use, so keep upstream's name.
    Registering a second, different function with the same name in the same domain raises
    :class:`ValueError` naming both functions.
    """

    def register(fn: Predicate) -> Predicate:
        name = fn.__name__
        existing = DB_STATE_PREDICATES.get((domain, name))
        if existing is not None and existing is not fn:
            raise ValueError(
                f"db-state predicate {name!r} is registered twice in domain {domain!r}: "
                f"{_qualified(existing)} and {_qualified(fn)}; rename one of them"
            )
        DB_STATE_PREDICATES.register((domain, name), fn)
        return fn

    return register


def _qualified(fn: Callable[..., object]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def list_registered_predicates(domain: str | None = None) -> dict[str, list[str]]:
    """``{domain: [func_names]}`` (sorted) for every domain, or only for ``domain``.

    A domain with nothing registered maps to ``[]``. The predicates shipped with the built-in
    domains are always listed (their modules are imported first); other packages' predicates
    are listed once their modules are imported.
    """
    if domain is not None:
        _load_module(domain)
        return {domain: sorted(ALL_DB_STATE_PREDICATES.get(domain, {}))}
    for name in list(PREDICATE_MODULES):
        _load_module(name)
    return {name: sorted(bucket) for name, bucket in sorted(ALL_DB_STATE_PREDICATES.items())}


def _load_module(domain: str) -> None:
    """Import the module named for ``domain`` (:data:`PREDICATE_MODULES`), if any: it registers itself."""
    module = PREDICATE_MODULES.get(domain)
    if module is not None:
        importlib.import_module(module)


def _verdict(func_name: Any, side: Any, expected: Any, message: Any, **outcome: Any) -> dict[str, Any]:
    return {
        "func_name": func_name,
        "side": side,
        "passed": outcome.get("passed", False),
        "expected": expected,
        "actual": outcome.get("actual"),
        "message": message,
        "error": outcome.get("error"),
    }


def evaluate_db_state_assertion(
    domain: str,
    assertion: dict[str, Any],
    db: dict[str, Any] | None,
    user_db: dict[str, Any] | None,
) -> dict[str, Any]:
    """Run one db-state assertion against the final DBs and return its verdict (never raises).

    ``assertion`` holds ``func_name``, ``arguments`` (default ``{}``), ``side`` or
    ``env_type``, ``assert_value`` (default ``True``) and optionally ``message``. The verdict
    is ``{func_name, side, passed, expected, actual, message, error}``: ``passed`` is
    ``predicate(db, **arguments) == assert_value``, ``expected`` the assert_value,
    ``actual`` the predicate's bool (None on any failure), ``side`` as the record spells it,
    ``error`` None or the failure mode and its cause.
    """
    if not isinstance(assertion, dict):
        return _verdict(None, None, True, None, error=f"bad_assertion: expected a dict, got {type(assertion).__name__}")
    func_name = assertion.get("func_name")
    side = assertion.get("side", assertion.get("env_type"))
    expected = assertion.get("assert_value", True)
    message = assertion.get("message")

    def failed(error: str) -> dict[str, Any]:
        return _verdict(func_name, side, expected, message, error=error)

    if not isinstance(func_name, str) or not func_name:
        return failed(f"bad_assertion: 'func_name' must be a non-empty string, got {func_name!r}")
    arguments = assertion.get("arguments")
    arguments = {} if arguments is None else arguments
    if not isinstance(arguments, dict):
        return failed(f"bad_assertion: 'arguments' must be a dict, got {type(arguments).__name__}")

    if (domain, func_name) not in DB_STATE_PREDICATES:
        try:
            _load_module(domain)
        except Exception as exc:  # a broken predicates module is reported, not raised
            return failed(f"missing_predicate: importing the predicates of domain {domain!r} failed: {exc!r}")
    predicate = DB_STATE_PREDICATES.get((domain, func_name))
    if predicate is None:
        known = ", ".join(sorted(ALL_DB_STATE_PREDICATES.get(domain, {}))) or "(none)"
        return failed(
            f"missing_predicate: no db-state predicate {func_name!r} in domain {domain!r}; registered there: {known}"
        )

    if side in AGENT_SIDES:
        target, which = db, "agent"
    elif side in USER_SIDES:
        target, which = user_db, "user"
    else:
        return failed(f"bad_assertion: unknown side {side!r}; expected 'agent', 'assistant' or 'user'")
    if target is None:
        return failed(f"missing_db: the assertion reads the {which} DB (side {side!r}) but none was given")

    try:
        result = predicate(target, **arguments)
    except Exception as exc:
        return failed(f"predicate_raised: {func_name} raised {type(exc).__name__}: {exc}")
    if not isinstance(result, bool):
        shown = repr(result)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        return failed(f"non_bool_result: {func_name} returned {type(result).__name__} {shown} instead of bool")
    return _verdict(func_name, side, expected, message, passed=result == expected, actual=result)
