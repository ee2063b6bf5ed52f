"""The canonical JSON of a working DB, from the cached text of its pristine collections.

A working DB (:func:`pytest_tau2.environment.db.fresh_db`) shares every entity it never handed
out with the pristine DB, which lives for the whole process. So the canonical text of each
pristine collection is built once (one ``"key": value`` *fragment* per entity, in sorted key
order), and a working DB is described by its *plan*: per top-level key, either how its
collection differs from the pristine one (:class:`Changes`) or, for anything else, its text.

Hashing a plan costs what changed, not the DB's size:

- the digest is remembered per change set (:func:`signature`): the gold replay and an agent
  that made the same changes, or two runs that changed nothing, share one digest;
- otherwise sha256 is fed the pristine bytes as zero-copy slices around the changed
  fragments, and starts from a saved hasher state (a *checkpoint*, every
  :data:`CHECKPOINT_BYTES` of the pristine stream) just before the first byte that differs.

Canonical text is ASCII (``ensure_ascii``), so character and byte offsets are the same.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from hashlib import _Hash as Hasher  # typeshed's name for what hashlib.sha256() returns

_V = TypeVar("_V")

CHECKPOINT_BYTES = 16 * 1024
"""Distance between saved sha256 states in a pristine stream (a state is ~200 bytes)."""
_MAX_DIGESTS = 4096
_MAX_LAYOUTS = 64


def dumps(value: object) -> str:
    """Canonical JSON of any JSON-like value: ``json.dumps(value, sort_keys=True, default=str)``."""
    return json.dumps(value, sort_keys=True, default=str)


def fragment(key: str, value: object) -> str:
    """One ``"key": value`` member of a canonical object (a str key, encoded as json.dumps does)."""
    return f"{json.dumps(key)}: {dumps(value)}"


class PristineText:
    """The canonical members of one pristine collection, in sorted key order (built once)."""

    __slots__ = ("_blob", "_starts", "collection", "fragments", "position")

    def __init__(self, collection: dict[str, _V]) -> None:
        self.collection: object = collection  # kept alive, so its id() is never reused while cached
        self.position: dict[str, int] | None = None  # None: a key that is not str (json.dumps decides)
        self.fragments: list[str] = []
        self._blob: bytes | None = None
        self._starts: list[int] = []
        if all(isinstance(key, str) for key in dict.keys(collection)):
            keys = sorted(dict.keys(collection))
            self.position = {key: index for index, key in enumerate(keys)}
            self.fragments = [fragment(key, dict.__getitem__(collection, key)) for key in keys]

    def blob(self) -> bytes:
        """The collection's canonical bytes: ``{`` fragments joined by ``, `` ``}``."""
        if self._blob is None:
            starts, at = [], 1  # after "{"; each fragment is followed by ", "
            for text in self.fragments:
                starts.append(at)
                at += len(text) + 2
            # Offsets first: a thread that sees the blob also sees its offsets.
            self._starts = starts
            self._blob = ("{" + ", ".join(self.fragments) + "}").encode()
        return self._blob

    def starts(self) -> list[int]:
        """The byte offset of each fragment in :meth:`blob`."""
        self.blob()
        return self._starts


_PRISTINE: dict[int, PristineText] = {}


def pristine_text(collection: dict[str, _V]) -> PristineText:
    """The cached text of a pristine collection (pristine DBs live for the whole process)."""
    cached = _PRISTINE.get(id(collection))
    if cached is None or cached.collection is not collection:
        cached = _PRISTINE[id(collection)] = PristineText(collection)
    return cached


@dataclass(frozen=True)
class Changes:
    """How a working collection differs from its pristine one."""

    base: PristineText
    changed: dict[str, str]
    """Key -> fragment of every member whose text differs from the pristine one, or that is new."""
    removed: tuple[str, ...]
    """Pristine keys no longer present, sorted."""

    def replaces_only(self) -> bool:
        position = self.base.position or {}
        return not self.removed and all(key in position for key in self.changed)


Part = tuple[str, "Changes | str"]
"""One top-level member of a working DB: (key, its changes) for a collection, (key, text) otherwise."""


def assemble(plan: list[Part]) -> str:
    """The canonical text of a plan."""
    members = [f"{json.dumps(key)}: {value if isinstance(value, str) else _text(value)}" for key, value in plan]
    return "{" + ", ".join(members) + "}"


def _text(changes: Changes) -> str:
    base = changes.base
    position = base.position or {}  # never None in a plan: such a collection has no Changes
    if changes.replaces_only():
        fragments = base.fragments.copy()
        for key, text in changes.changed.items():
            fragments[position[key]] = text
    else:  # members added or removed: merge in sorted key order
        gone = set(changes.removed)
        keys = sorted([key for key in position if key not in gone] + [k for k in changes.changed if k not in position])
        fragments = [changes.changed.get(key) or base.fragments[position[key]] for key in keys]
    return "{" + ", ".join(fragments) + "}"


Signature = tuple[tuple[Hashable, ...], ...]
"""A plan's identity: its keys, the pristine collections (by id) and the changed fragments."""


def signature(plan: list[Part]) -> Signature:
    """Equal signatures mean equal canonical text (same pristine collections, same changes)."""
    return tuple(_part_signature(key, value) for key, value in plan)


def _part_signature(key: str, value: Changes | str) -> tuple[Hashable, ...]:
    if isinstance(value, str):
        return (key, value)
    return (key, id(value.base), tuple(sorted(value.changed.items())), value.removed)


_DIGESTS: dict[Signature, str] = {}
# layout (the plan with its changes dropped) -> (checkpoint offsets, hasher states at them)
_CHECKPOINTS: dict[tuple[tuple[str, str | int], ...], tuple[list[int], list[Hasher]]] = {}


def digest(plan: list[Part]) -> str:
    """sha256 hex digest of the plan's canonical text (see the module docstring)."""
    key = signature(plan)
    found = _DIGESTS.get(key)
    if found is not None:
        return found
    chunks, divergence = _chunks(plan)
    offsets, states = _checkpoints(plan)
    index = bisect.bisect_right(offsets, divergence) - 1
    hasher = states[index].copy()
    skip = offsets[index]  # bytes already in the state: identical to the pristine stream there
    for chunk in chunks:
        if skip >= len(chunk):
            skip -= len(chunk)
            continue
        hasher.update(memoryview(chunk)[skip:] if skip else chunk)
        skip = 0
    if len(_DIGESTS) >= _MAX_DIGESTS:
        _DIGESTS.clear()
    text: str = hasher.hexdigest()
    _DIGESTS[key] = text
    return text


def _chunks(plan: list[Part]) -> tuple[list[bytes | memoryview], int]:
    """The plan's canonical bytes as chunks (pristine bytes as slices), and the offset of the
    first byte that may differ from the plan's pristine layout (its total length if none)."""
    chunks: list[bytes | memoryview] = [b"{"]
    at, divergence = 1, -1
    for number, (key, value) in enumerate(plan):
        head = f"{', ' if number else ''}{json.dumps(key)}: ".encode()
        chunks.append(head)
        if isinstance(value, str):
            data = value.encode()
        elif not value.changed and not value.removed:
            data = value.base.blob()
        elif not value.replaces_only():
            data = _text(value).encode()
            divergence = at + len(head) if divergence < 0 else divergence
        else:
            base, position = value.base, value.base.position or {}
            blob, starts, view = base.blob(), base.starts(), memoryview(base.blob())
            changed = sorted((position[k], text) for k, text in value.changed.items())
            divergence = at + len(head) + starts[changed[0][0]] if divergence < 0 else divergence
            previous = 0
            for index, text in changed:
                chunks += [view[previous : starts[index]], text.encode()]
                previous = starts[index] + len(base.fragments[index])
            chunks.append(view[previous:])
            at += len(head) + len(blob)  # only read before the divergence is known
            continue
        chunks.append(data)
        at += len(head) + len(data)
    chunks.append(b"}")
    return chunks, (at + 1 if divergence < 0 else divergence)


def _checkpoints(plan: list[Part]) -> tuple[list[int], list[Hasher]]:
    """Hasher states along the pristine stream of the plan's layout (built on first use)."""
    layout = tuple((key, value) if isinstance(value, str) else (key, id(value.base)) for key, value in plan)
    found = _CHECKPOINTS.get(layout)
    if found is not None:
        return found
    pristine: list[Part] = [
        (key, value if isinstance(value, str) else Changes(value.base, {}, ())) for key, value in plan
    ]
    hasher = hashlib.sha256()
    offsets, states = [0], [hasher.copy()]
    at = 0
    for chunk in _chunks(pristine)[0]:
        view = memoryview(chunk)
        while at + len(view) >= offsets[-1] + CHECKPOINT_BYTES:
            cut = offsets[-1] + CHECKPOINT_BYTES - at
            hasher.update(view[:cut])
            view, at = view[cut:], at + cut
            offsets.append(at)
            states.append(hasher.copy())
        hasher.update(view)
        at += len(view)
    if len(_CHECKPOINTS) >= _MAX_LAYOUTS:
        _CHECKPOINTS.clear()
    found = _CHECKPOINTS[layout] = (offsets, states)
    return found
