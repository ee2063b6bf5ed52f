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
from typing import Any

JSONDict = dict[str, Any]


def canonical_json(db: Any) -> str:
    """The canonical JSON text of ``db`` (see the module docstring).

    Collections handed out by :func:`fresh_db` reuse the cached text of every entity the run
    never touched, so hashing a final DB costs only what changed (2.8 MB retail DB: ~50 ms
    with plain ``json.dumps``, a few ms this way; see bench/).
    """
    if (
        isinstance(db, dict)
        and any(isinstance(v, CowDict) for v in dict.values(db))
        and _str_keys(db)
        and all(_str_keys(v) for v in dict.values(db) if isinstance(v, CowDict))
    ):
        return _join(db, lambda key, value: _cow_canonical(value) if isinstance(value, CowDict) else _dumps(value))
    return _dumps(db)


def _str_keys(mapping: dict[Any, Any]) -> bool:
    # json.dumps turns non-str keys into strings before sorting; the fast path assumes str keys.
    return all(isinstance(key, str) for key in dict.keys(mapping))


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _join(mapping: dict[str, Any], encode: Any) -> str:
    if not mapping:
        return "{}"
    parts = [f"{json.dumps(key)}: {encode(key, dict.__getitem__(mapping, key))}" for key in sorted(mapping)]
    return "{" + ", ".join(parts) + "}"


# id(pristine entity) -> (entity, its canonical JSON); the entity is kept so the id stays valid.
_ENTITY_TEXT: dict[int, tuple[Any, str]] = {}


def _entity_text(value: Any) -> str:
    cached = _ENTITY_TEXT.get(id(value))
    if cached is not None and cached[0] is value:
        return cached[1]
    text = _dumps(value)
    _ENTITY_TEXT[id(value)] = (value, text)
    return text


def _cow_canonical(cow: CowDict) -> str:
    owned = cow._owned
    return _join(cow, lambda key, value: _dumps(value) if key in owned else _entity_text(value))


class CowDict(dict):  # type: ignore[type-arg]
    """A collection (``orders``, ``users``...) whose entities are copied on first access.

    It starts as a shallow copy of the pristine collection, sharing every entity. The first
    ``[key]``, ``get``, ``values()`` or ``items()`` access to an entity replaces it by a private
    deep copy, so tools may mutate what they read. Code that bypasses these methods (C-level
    readers such as ``json.dumps`` or ``==``) sees the right values too: shared entities are
    exactly the untouched ones. Never mutate a value obtained by other means.
    """

    __slots__ = ("_owned",)

    def __init__(self, pristine: dict[str, Any]) -> None:
        super().__init__(pristine)
        self._owned: set[str] = set()

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

    def copy(self) -> dict[str, Any]:
        """A plain, independent deep copy (never the shared pristine entities)."""
        return {key: copy_db(value) for key, value in self.items()}

    def popitem(self) -> tuple[str, Any]:
        key = next(reversed(dict.keys(self)))
        return key, self.pop(key)

    def __reduce__(self) -> Any:
        return (dict, (dict(self.items()),))


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


def db_hash(db: Any) -> str:
    """sha256 hex digest of the canonical JSON of ``db``."""
    return hashlib.sha256(canonical_json(db).encode()).hexdigest()


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
