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
from dataclasses import dataclass
from typing import Any

JSONDict = dict[str, Any]


def canonical_json(db: Any) -> str:
    """The canonical JSON text of ``db`` (see the module docstring).

    A DB made by :func:`fresh_db` is assembled from the cached text of its pristine
    collections, re-encoding only the entities the run took a private copy of (2.8 MB retail
    DB: ~25 ms with plain ``json.dumps``, ~1 ms this way; see bench/results/offline.md).
    """
    plan = _plan(db)
    return _dumps(db) if plan is None else _assemble(plan)


def db_hash(db: Any) -> str:
    """sha256 hex digest of the canonical JSON of ``db``.

    For a DB made by :func:`fresh_db` the digest is remembered per *change set* (which
    entities differ from the pristine DB, and their text): the gold replay and an agent that
    made the same changes share one digest, and a run that changed nothing reuses the
    pristine DB's. Equal change sets over the same pristine collections mean equal text.
    """
    plan = _plan(db)
    if plan is None:
        return _sha256(_dumps(db))
    signature = tuple(_signature(part) for part in plan)
    digest = _DIGESTS.get(signature)
    if digest is None:
        if len(_DIGESTS) >= _MAX_DIGESTS:
            _DIGESTS.clear()
        digest = _DIGESTS[signature] = _sha256(_assemble(plan))
    return digest


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _fragment(key: str, value: Any) -> str:
    """One ``"key": value`` member of a canonical object (keys are str: encoded like json.dumps does)."""
    return f"{json.dumps(key)}: {_dumps(value)}"


class _PristineText:
    """The canonical members of one pristine collection, in sorted key order (built once)."""

    __slots__ = ("collection", "fragments", "joined", "position")

    def __init__(self, collection: dict[str, Any]) -> None:
        self.collection = collection  # kept alive, so its id() is never reused while cached
        self.position: dict[str, int] | None = None  # None: a key that is not str (json.dumps decides)
        self.fragments: list[str] = []
        self.joined: str | None = None
        if all(isinstance(key, str) for key in dict.keys(collection)):
            keys = sorted(dict.keys(collection))
            self.position = {key: index for index, key in enumerate(keys)}
            self.fragments = [_fragment(key, dict.__getitem__(collection, key)) for key in keys]

    def text(self) -> str:
        if self.joined is None:
            self.joined = "{" + ", ".join(self.fragments) + "}"
        return self.joined


# id(pristine collection) -> its text; pristine DBs live for the whole process (tasks.cached_db).
_PRISTINE: dict[int, _PristineText] = {}
# change-set signature -> digest (see db_hash); bounded, a sweep needs about two per scenario.
_DIGESTS: dict[tuple[Any, ...], str] = {}
_MAX_DIGESTS = 4096


def _pristine_text(collection: dict[str, Any]) -> _PristineText:
    cached = _PRISTINE.get(id(collection))
    if cached is None or cached.collection is not collection:
        cached = _PristineText(collection)
        _PRISTINE[id(collection)] = cached
    return cached


@dataclass(frozen=True)
class _Changes:
    """How one working collection differs from its pristine one: changed/added members, removed keys."""

    base: _PristineText
    changed: dict[str, str]
    removed: tuple[str, ...]


# One top-level member of a DB: (key, its changes) for a working collection, (key, text) otherwise.
_Part = tuple[str, "_Changes | str"]


def _plan(db: Any) -> list[_Part] | None:
    """The top-level members of a :func:`fresh_db` DB in sorted order, or None for any other value."""
    if not isinstance(db, dict) or not any(isinstance(v, CowDict) for v in dict.values(db)):
        return None
    if not all(isinstance(key, str) for key in dict.keys(db)):
        return None  # json.dumps sorts non-str keys after converting them: leave it to json.dumps
    plan: list[_Part] = []
    for key in sorted(dict.keys(db)):
        value = dict.__getitem__(db, key)
        if isinstance(value, CowDict):
            changes = value._changes()
            if changes is None:
                return None
            plan.append((key, changes))
        else:
            plan.append((key, _dumps(value)))
    return plan


def _signature(part: _Part) -> tuple[Any, ...]:
    key, value = part
    if isinstance(value, str):
        return (key, value)
    return (key, id(value.base), tuple(sorted(value.changed.items())), value.removed)


def _assemble(plan: list[_Part]) -> str:
    members = [
        f"{json.dumps(key)}: {value if isinstance(value, str) else _collection_text(value)}" for key, value in plan
    ]
    return "{" + ", ".join(members) + "}"


def _collection_text(changes: _Changes) -> str:
    base = changes.base
    if not changes.changed and not changes.removed:
        return base.text()
    position = base.position or {}  # never None here: _changes refused such a collection
    if not changes.removed and all(key in position for key in changes.changed):
        fragments = base.fragments.copy()
        for key, fragment in changes.changed.items():
            fragments[position[key]] = fragment
    else:  # members added or removed: merge in sorted key order
        gone = set(changes.removed)
        keys = sorted([key for key in position if key not in gone] + [k for k in changes.changed if k not in position])
        fragments = [changes.changed.get(key) or base.fragments[position[key]] for key in keys]
    return "{" + ", ".join(fragments) + "}"


class CowDict(dict):  # type: ignore[type-arg]
    """A collection (``orders``, ``users``...) whose entities are copied on first access.

    It starts as a shallow copy of the pristine collection, sharing every entity. The first
    ``[key]``, ``get``, ``values()`` or ``items()`` access to an entity replaces it by a private
    deep copy, so tools may mutate what they read. Code that bypasses these methods (C-level
    readers such as ``json.dumps`` or ``==``) sees the right values too: shared entities are
    exactly the untouched ones. Never mutate a value obtained by other means, and never store
    into it with ``dict.__setitem__``: hashing trusts that every entity not handed out or
    stored through these methods is still the pristine one.
    """

    __slots__ = ("_owned", "_pristine")

    def __init__(self, pristine: dict[str, Any]) -> None:
        super().__init__(pristine)
        self._pristine = pristine
        self._owned: set[str] = set()

    def _changes(self) -> _Changes | None:
        """What differs from the pristine collection (None: keys that are not all str)."""
        if not all(isinstance(key, str) for key in self._owned):
            return None
        base = _pristine_text(self._pristine)
        if base.position is None:
            return None
        position, fragments = base.position, base.fragments
        changed: dict[str, str] = {}
        added = 0
        for key in self._owned:
            fragment = _fragment(key, dict.__getitem__(self, key))
            index = position.get(key)
            if index is None:
                added += 1
                changed[key] = fragment
            elif fragments[index] != fragment:
                changed[key] = fragment
        removed: tuple[str, ...] = ()
        if len(self) != len(position) + added:  # pristine members were deleted
            removed = tuple(sorted(key for key in position if not dict.__contains__(self, key)))
            if len(self) != len(position) + added - len(removed):
                return None  # stored into behind our back: let json.dumps read the dict itself
        return _Changes(base, changed, removed)

    def __getitem__(self, key: str) -> Any:
        value = dict.__getitem__(self, key)
        if key not in self._owned:
            value = copy_db(value)
            dict.__setitem__(self, key, value)
            self._owned.add(key)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        dict.__setitem__(self, key, value)
        self._owned.add(key)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def values(self) -> list[Any]:  # type: ignore[override]
        return [self[key] for key in self]

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        return [(key, self[key]) for key in self]

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key: str, *default: Any) -> Any:
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

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __ior__(self, other: Any) -> CowDict:  # type: ignore[misc]
        self.update(other)
        return self

    def clear(self) -> None:
        dict.clear(self)
        self._owned.clear()

    def copy(self) -> dict[str, Any]:
        """A plain, independent deep copy (never the shared pristine entities)."""
        return {key: copy_db(value) for key, value in dict.items(self)}

    def popitem(self) -> tuple[str, Any]:
        key = next(reversed(dict.keys(self)))
        return key, self.pop(key)

    def __reduce__(self) -> Any:
        return (dict, (dict(self.items()),))


def peek(collection: Mapping[str, Any], key: str) -> Any:
    """The entity stored under ``key`` *without* taking a private copy of it.

    For tools that only read what they look up (lookups, searches, details returned as JSON):
    the entity may be shared with the pristine DB, so it must never be mutated. A run that only
    reads keeps its working DB as cheap to hash as the pristine one.
    """
    return dict.__getitem__(collection, key) if isinstance(collection, dict) else collection[key]


def peek_items(collection: Mapping[str, Any]) -> Iterable[tuple[str, Any]]:
    """``(key, entity)`` pairs without private copies (see :func:`peek`: read, never mutate)."""
    return dict.items(collection) if isinstance(collection, dict) else collection.items()


def peek_values(collection: Mapping[str, Any]) -> Iterable[Any]:
    """The entities without private copies (see :func:`peek`: read, never mutate)."""
    return dict.values(collection) if isinstance(collection, dict) else collection.values()


def fresh_db(pristine: Any) -> Any:
    """A private working copy of a pristine DB, cheap to make and cheap to hash.

    Top-level dict-of-dict collections become :class:`CowDict` (entities copied on access);
    anything else is deep-copied. The pristine DB is never mutated through the result.
    """
    if not isinstance(pristine, dict):
        return copy_db(pristine)
    out: dict[str, Any] = {}
    for key, value in pristine.items():
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            out[key] = CowDict(value)
        else:
            out[key] = copy_db(value)
    return out


def copy_db(db: Any) -> Any:
    """Deep copy of a JSON-like tree (dict, list, str, int, float, bool, None, date...).

    About 10x faster than ``copy.deepcopy`` on the 2.8 MB retail DB because it skips the
    memo bookkeeping: a DB tree never shares or cycles nodes. Leaves are immutable.
    """
    if isinstance(db, dict):
        return {k: copy_db(v) for k, v in db.items()}
    if isinstance(db, list):
        return [copy_db(v) for v in db]
    return db


def db_diff(expected: Any, actual: Any, *, max_lines: int = 60) -> str:
    """A path-level, human-readable diff of two DBs (expected first), via deepdiff.

    Type changes (``0`` vs ``0.0``) are reported because they change the hash. Equal subtrees
    are pruned first (two levels down: collections, then entities): deepdiff walks a whole
    2.8 MB retail DB in ~15 s, the changed entities in milliseconds, with the same paths.
    """
    from deepdiff import DeepDiff  # deferred: only a failing comparison pays for it

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


def _prune_equal(old: Any, new: Any, levels: int) -> tuple[Any, Any]:
    """Both trees without the dict entries whose canonical text is equal (``levels`` deep)."""
    if levels == 0 or not (isinstance(old, dict) and isinstance(new, dict)):
        return old, new
    kept_old: dict[str, Any] = {}
    kept_new: dict[str, Any] = {}
    for key in dict.keys(old) | dict.keys(new):
        if key in old and key in new:
            a, b = dict.__getitem__(old, key), dict.__getitem__(new, key)
            if a is b or _dumps(a) == _dumps(b):
                continue
            kept_old[key], kept_new[key] = _prune_equal(a, b, levels - 1)
        elif key in old:
            kept_old[key] = dict.__getitem__(old, key)
        else:
            kept_new[key] = dict.__getitem__(new, key)
    return kept_old, kept_new


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, default=str, sort_keys=True) if not isinstance(value, str) else repr(value)
    if isinstance(value, dict) and set(value) >= {"old_value", "new_value"}:
        text = f"expected {_short(value['old_value'], limit)} but found {_short(value['new_value'], limit)}"
        if "old_type" in value:
            text += f" (type {value['old_type'].__name__} -> {value['new_type'].__name__})"
    return text if len(text) <= limit else text[: limit - 3] + "..."
