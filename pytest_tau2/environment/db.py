"""Domain databases as plain JSON-like dicts: fast copy, canonical hash, path-level diff.

A DB is the dict a domain's tools read and mutate. The *canonical JSON* of a DB is
``json.dumps(db, sort_keys=True, default=str)`` with Python's default separators
(``", "`` and ``": "``), ``ensure_ascii=True`` and floats written by ``repr``. This is the
exact recipe upstream tau2 hashes (over its pydantic dump), so for a DB whose dict mirrors
that dump (optional fields present as ``null``) our sha256 equals upstream's.
Key order never matters; list order and number types (``0`` vs ``0.0``) do.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import TypeVar, cast

from pytest_tau2.environment.canonical import Changes, Part, assemble, digest, dumps, fragment, pristine_text
from pytest_tau2.environment.imports import import_whole

_T = TypeVar("_T")
_V = TypeVar("_V")


def canonical_json(db: object) -> str:
    """The canonical JSON text of ``db`` (see the module docstring).

    A DB made by :func:`fresh_db` is assembled from the cached text of its pristine
    collections, re-encoding only the entities the run took a private copy of (2.8 MB retail
    DB: ~25 ms with plain ``json.dumps``, ~1 ms this way; see bench/results/offline.md).
    """
    plan = _plan(db)
    return dumps(db) if plan is None else assemble(plan)


def db_hash(db: object) -> str:
    """sha256 hex digest of the canonical JSON of ``db``.

    For a DB made by :func:`fresh_db` this costs what the run changed, not the DB's size:
    digests are remembered per change set and the pristine bytes are hashed from saved states
    (:mod:`pytest_tau2.environment.canonical`).
    """
    plan = _plan(db)
    if plan is None:
        return hashlib.sha256(dumps(db).encode()).hexdigest()
    return digest(plan)


def _plan(db: object) -> list[Part] | None:
    """The top-level members of a :func:`fresh_db` DB in sorted order, or None for any other value."""
    if not isinstance(db, dict) or not any(isinstance(v, CowDict) for v in dict.values(db)):
        return None
    if not all(isinstance(key, str) for key in dict.keys(db)):
        return None  # json.dumps sorts non-str keys after converting them: leave it to json.dumps
    plan: list[Part] = []
    for key in sorted(dict.keys(db)):
        value = dict.__getitem__(db, key)
        if isinstance(value, CowDict):
            changes = value._changes()
            if changes is None:
                return None
            plan.append((key, changes))
        else:
            plan.append((key, dumps(value)))
    return plan


class CowDict(dict[str, _V]):
    """A collection (``orders``, ``users``...) whose entities are copied on first access.

    It starts as a shallow copy of the pristine collection, sharing every entity. The first
    ``[key]``, ``get``, ``values()`` or ``items()`` access to an entity replaces it by a private
    deep copy, so tools may mutate what they read. Code that bypasses these methods (``==``,
    orjson, ``dict.items(collection)``) sees the right values too: shared entities are exactly
    the untouched ones. ``json.dumps`` does not bypass them: on a dict subclass it calls
    ``items()``, a private copy of every entity (``db_diff`` reads around it). Never mutate a
    value obtained by other means, and never store into it with ``dict.__setitem__``: hashing
    trusts that every entity not handed out or stored through these methods is still the
    pristine one.
    """

    __slots__ = ("_owned", "_pristine")

    def __init__(self, pristine: dict[str, _V]) -> None:
        super().__init__(pristine)
        self._pristine = pristine
        self._owned: set[str] = set()

    def _changes(self) -> Changes | None:
        """What differs from the pristine collection (None: keys that are not all str)."""
        if not all(isinstance(key, str) for key in self._owned):
            return None
        base = pristine_text(self._pristine)
        if base.position is None:
            return None
        position, fragments = base.position, base.fragments
        changed: dict[str, str] = {}
        added = 0
        for key in self._owned:
            text = fragment(key, dict.__getitem__(self, key))
            index = position.get(key)
            if index is None:
                added += 1
                changed[key] = text
            elif fragments[index] != text:
                changed[key] = text
        removed: tuple[str, ...] = ()
        if len(self) != len(position) + added:  # pristine members were deleted
            removed = tuple(sorted(key for key in position if not dict.__contains__(self, key)))
            if len(self) != len(position) + added - len(removed):
                return None  # stored into behind our back: let json.dumps read the dict itself
        return Changes(base, changed, removed)

    def __getitem__(self, key: str) -> _V:
        value = dict.__getitem__(self, key)
        if key not in self._owned:
            value = copy_db(value)
            dict.__setitem__(self, key, value)
            self._owned.add(key)
        return value

    def __setitem__(self, key: str, value: _V) -> None:
        dict.__setitem__(self, key, value)
        self._owned.add(key)

    def get(self, key: str, default: _V | None = None) -> _V | None:  # type: ignore[override]
        return self[key] if key in self else default

    def values(self) -> list[_V]:  # type: ignore[override]
        return [self[key] for key in self]

    def items(self) -> list[tuple[str, _V]]:  # type: ignore[override]
        return [(key, self[key]) for key in self]

    def setdefault(self, key: str, default: _V = None) -> _V:  # type: ignore[assignment]
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: str, *default: _V) -> _V:  # type: ignore[override]
        if key in self:
            value = self[key]
            dict.__delitem__(self, key)
            self._owned.discard(key)
            return value
        if default:
            return default[0]
        raise KeyError(key)

    def __delitem__(self, key: str) -> None:
        dict.__delitem__(self, key)
        self._owned.discard(key)

    def update(self, *args: Mapping[str, _V] | Iterable[tuple[str, _V]], **kwargs: _V) -> None:  # type: ignore[override]
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __ior__(self, other: Mapping[str, _V]) -> CowDict[_V]:  # type: ignore[misc,override]
        self.update(other)
        return self

    def clear(self) -> None:
        dict.clear(self)
        self._owned.clear()

    def copy(self) -> dict[str, _V]:
        """A plain, independent deep copy (never the shared pristine entities)."""
        return {key: copy_db(value) for key, value in dict.items(self)}

    def popitem(self) -> tuple[str, _V]:
        key = next(reversed(dict.keys(self)))
        return key, self.pop(key)

    def __reduce__(self) -> tuple[type[dict[str, _V]], tuple[dict[str, _V]]]:
        return (dict, (dict(self.items()),))


def peek(collection: Mapping[str, _V], key: str) -> _V:
    """The entity stored under ``key`` *without* taking a private copy of it.

    For tools that only read what they look up (lookups, searches, details returned as JSON):
    the entity may be shared with the pristine DB, so it must never be mutated. A run that only
    reads keeps its working DB as cheap to hash as the pristine one.
    """
    return dict.__getitem__(collection, key) if isinstance(collection, dict) else collection[key]


def peek_items(collection: Mapping[str, _V]) -> Iterable[tuple[str, _V]]:
    """``(key, entity)`` pairs without private copies (see :func:`peek`: read, never mutate)."""
    return dict.items(collection) if isinstance(collection, dict) else collection.items()


def peek_values(collection: Mapping[str, _V]) -> Iterable[_V]:
    """The entities without private copies (see :func:`peek`: read, never mutate)."""
    return dict.values(collection) if isinstance(collection, dict) else collection.values()


def fresh_db(pristine: _T) -> _T:
    """A private working copy of a pristine DB, cheap to make and cheap to hash.

    Top-level dict-of-dict collections become :class:`CowDict` (entities copied on access);
    anything else is deep-copied. The pristine DB is never mutated through the result.
    """
    if not isinstance(pristine, dict):
        return copy_db(pristine)
    out: dict[object, object] = {}
    for key, value in pristine.items():
        out[key] = CowDict(value) if _is_collection(value) else copy_db(value)
    return cast(_T, out)  # the same tree: a CowDict is a dict holding the same entities


# id(pristine value) -> (the value, whether it is a collection of entities); a pristine DB never
# changes, and scanning a 1,000-entity collection on every fresh_db cost ~0.2 ms.
_COLLECTIONS: dict[int, tuple[object, bool]] = {}


def _is_collection(value: object) -> bool:
    if not isinstance(value, dict) or not value:
        return False
    cached = _COLLECTIONS.get(id(value))
    if cached is None or cached[0] is not value:
        cached = _COLLECTIONS[id(value)] = (value, all(isinstance(v, dict) for v in dict.values(value)))
    return cached[1]


def copy_db(db: _T) -> _T:
    """Deep copy of a JSON-like tree (dict, list, str, int, float, bool, None, date...).

    About 10x faster than ``copy.deepcopy`` on the 2.8 MB retail DB because it skips the
    memo bookkeeping: a DB tree never shares or cycles nodes. Leaves are immutable.
    """
    # No cast() here: this recursion runs once per node of a multi-megabyte tree.
    if isinstance(db, dict):
        return {k: copy_db(v) for k, v in db.items()}  # type: ignore[return-value]  # a dict like db
    if isinstance(db, list):
        return [copy_db(v) for v in db]  # type: ignore[return-value]  # a list like db
    return db


def db_diff(expected: object, actual: object, *, max_lines: int = 60) -> str:
    """A path-level, human-readable diff of two DBs (expected first), via deepdiff.

    Type changes (``0`` vs ``0.0``) are reported because they change the hash. Equal subtrees
    are pruned first (two levels down: collections, then entities): deepdiff walks a whole
    2.8 MB retail DB in ~15 s, the changed entities in milliseconds, with the same paths.
    """
    DeepDiff = import_whole("deepdiff").DeepDiff  # deferred: only a failing comparison pays for it

    expected, actual = _prune_equal(expected, actual, 2)
    diff = DeepDiff(expected, actual, ignore_order=False, verbose_level=2)
    if not diff:
        return "no difference"
    lines: list[str] = []
    for kind, changes in diff.items():
        if isinstance(changes, dict):
            for path, change in changes.items():
                lines.append(f"{kind}: {path}: {_short(change)}")
        else:  # sets of paths (e.g. iterable_item_added with verbose_level 0)
            for path in changes:
                lines.append(f"{kind}: {path}")
    lines.sort()
    if len(lines) > max_lines:
        hidden = len(lines) - max_lines
        lines = [*lines[:max_lines], f"... and {hidden} more differences"]
    return "\n".join(lines)


def _prune_equal(old: object, new: object, levels: int) -> tuple[object, object]:
    """Both trees without the dict entries whose canonical text is equal (``levels`` deep).

    Two collections are compared entity by entity, never as one text: entities a run never
    touched are the same pristine object on both sides (:class:`CowDict`), so only the changed
    ones are encoded. Read through ``dict``'s own methods: a CowDict's ``items()``, which
    ``json.dumps`` calls on a dict subclass, would take a private copy of every entity (~0.1 s
    for a failed retail check, on the event loop every conversation shares).
    """
    if levels == 0 or not (isinstance(old, dict) and isinstance(new, dict)):
        return old, new
    kept_old: dict[object, object] = {}
    kept_new: dict[object, object] = {}
    for key in dict.keys(old) | dict.keys(new):
        if key in old and key in new:
            a, b = dict.__getitem__(old, key), dict.__getitem__(new, key)
            if a is b:
                continue
            if levels > 1 and isinstance(a, dict) and isinstance(b, dict):
                pruned_a, pruned_b = _prune_equal(a, b, levels - 1)
                if not pruned_a and not pruned_b:  # every entry on both sides, each with equal text
                    continue
                kept_old[key], kept_new[key] = pruned_a, pruned_b
                continue
            if _text(a) != _text(b):
                kept_old[key], kept_new[key] = a, b
        elif key in old:
            kept_old[key] = dict.__getitem__(old, key)
        else:
            kept_new[key] = dict.__getitem__(new, key)
    return kept_old, kept_new


def _text(value: object) -> str:
    """Canonical text of a value, a :class:`CowDict` read without copying its entities."""
    return dumps(dict(peek_items(value)) if isinstance(value, CowDict) else value)


def _short(value: object, limit: int = 300) -> str:
    text = json.dumps(value, default=str, sort_keys=True) if not isinstance(value, str) else repr(value)
    if isinstance(value, dict) and set(value) >= {"old_value", "new_value"}:
        text = f"expected {_short(value['old_value'], limit)} but found {_short(value['new_value'], limit)}"
        if "old_type" in value:
            text += f" (type {value['old_type'].__name__} -> {value['new_type'].__name__})"
    return text if len(text) <= limit else text[: limit - 3] + "..."
