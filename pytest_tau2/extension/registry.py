"""One registry type for every extension point, and the entry-point group that feeds them all.

A leaf: it imports nothing of pytest_tau2 (except errors), so every layer can hold a registry.
The package's own extensions that live above the registry they fill (the WebSocket and MCP
participant kinds, the replay kinds, tau2_format's report view) register the way another
package's do: :data:`BUILTINS` names their modules, imported by the same load step, first. The
built-in domains' option sections (:data:`BUILTIN_EXTENSIONS`) are imported at pytest start,
without the entry-point scan (``pytest --help`` shows them).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Hashable, ItemsView, Iterator, KeysView, Mapping, ValuesView
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Generic, TypeVar

from pytest_tau2.errors import SettingsError

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

ENTRY_POINT_GROUP = "pytest_tau2"
"""``[project.entry-points.pytest_tau2]``: ``name = "package.module"`` (imported) or
``name = "package.module:setup"`` (called with no arguments)."""

BUILTINS = (
    "pytest_tau2.run.replay_kinds",  # --tau2-agent replay:PATH, --tau2-user replay
    "pytest_tau2.bot.kind",  # --tau2-agent websocket
    "pytest_tau2.mcp.kind",  # --tau2-agent mcp:COMMAND
    "pytest_tau2.run.null_kind",  # --tau2-agent null (after the others: the order errors list kinds in)
    "pytest_tau2.tau2_format.upstream_diff",  # upstream_differences.json and its summary line
    "pytest_tau2.domains.predicate_modules",  # where each shipped domain's DB-state predicates live
)
"""The package's own extension modules, imported (in this order) before the entry points: the
built-ins a lower package's registry holds although that package never imports them
(docs/architecture.md, "Layers"). Each module only registers; what it builds is imported when used."""

BUILTIN_EXTENSIONS = ("pytest_tau2.domains.tau2_telecom.options", "pytest_tau2.domains.tau2_banking_knowledge.options")
"""Modules of pytest-tau2's own packages that register extensions the way an entry point's module
does (imported by name, as an entry point's is): the built-in domains' option sections. Each is
cheap to import (``pytest --help`` shows their options at every pytest start)."""

_loaded = False
_builtin_loaded = False
_loading = threading.RLock()


def load_builtin_extensions() -> None:
    """Import :data:`BUILTIN_EXTENSIONS`, once per process (no scan of installed packages)."""
    global _builtin_loaded
    if _builtin_loaded:
        return
    with _loading:
        if _builtin_loaded:
            return
        _builtin_loaded = True
        for name in BUILTIN_EXTENSIONS:
            importlib.import_module(name)


_other_groups: dict[str, Callable[[object, EntryPoint], None]] = {}


def load_entry_points() -> None:
    """Load every extension of the ``pytest_tau2`` entry-point group, once per process."""
    global _loaded
    if _loaded:
        return
    with _loading:
        if _loaded:
            return
        _loaded = True  # before loading: an extension that reads a registry must not load again
        load_builtin_extensions()
        for module in BUILTINS:
            importlib.import_module(module)
        found = entry_points()  # one scan of the installed distributions for every group
        for point in found.select(group=ENTRY_POINT_GROUP):
            target = _load(point)
            if not isinstance(target, ModuleType):
                if not callable(target):
                    raise SettingsError(
                        f"entry point {point.name} = {point.value} (group {point.group}) is a "
                        f"{type(target).__name__}: name a module or a function that registers extensions"
                    )
                target()
        for group, handle in _other_groups.items():
            for point in found.select(group=group):
                handle(_load(point), point)


def _load(point: EntryPoint) -> object:
    try:
        return point.load()
    except Exception as exc:
        raise SettingsError(
            f"entry point {point.name} = {point.value} (group {point.group}) failed to load: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def add_group(group: str, handle: Callable[[object, EntryPoint], None]) -> None:
    """Also load ``group`` with the others, each object handed to ``handle`` (an older group of
    one extension point, whose entry points name the extension object itself)."""
    _other_groups[group] = handle


class Registry(Mapping[K, V], Generic[K, V]):
    """Entries of one extension point by key, in registration order; read as a mapping.

    ``describe`` names an entry in error messages (default: ``repr``).
    """

    def __init__(self, what: str, describe: Callable[[V], str] = repr) -> None:
        self.what = what
        self.describe = describe
        self._entries: dict[K, V] = {}

    def register(self, key: K, entry: V, *, replace: bool = False) -> V:
        """Add ``entry`` under ``key``; the same entry again is a no-op, another one is refused."""
        existing = self._entries.get(key)
        if existing is not None and existing is not entry and existing != entry and not replace:
            raise ValueError(
                f"a {self.what} {key!r} is already registered ({self.describe(existing)}); "
                f"not replacing it with {self.describe(entry)} (pass replace=True)"
            )
        self._entries[key] = entry
        return entry

    def registered(self) -> list[V]:
        """The entries registered so far, without loading the entry points (for checks made
        while an extension registers)."""
        return list(self._entries.values())

    def unregister(self, key: K) -> V | None:
        """Remove the entry under ``key`` (tests and plugins that add one for a while)."""
        return self._entries.pop(key, None)

    def snapshot(self) -> dict[K, V]:
        """Every entry as registered now (a test saves this, and puts it back with :meth:`restore`)."""
        return dict(self._entries)

    def restore(self, entries: Mapping[K, V]) -> None:
        """Make the entries exactly ``entries`` again."""
        self._entries = dict(entries)

    def __getitem__(self, key: K) -> V:
        load_entry_points()
        return self._entries[key]

    def __iter__(self) -> Iterator[K]:
        load_entry_points()
        return iter(list(self._entries))

    def __len__(self) -> int:
        load_entry_points()
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        load_entry_points()
        return key in self._entries

    # Mapping's own views walk the keys through __getitem__; these read the dict at once (the
    # signal table is read several times per scenario).

    def keys(self) -> KeysView[K]:
        load_entry_points()
        return self._entries.keys()

    def values(self) -> ValuesView[V]:
        load_entry_points()
        return self._entries.values()

    def items(self) -> ItemsView[K, V]:
        load_entry_points()
        return self._entries.items()

    def get(self, key: K, default: V | None = None) -> V | None:  # type: ignore[override]
        load_entry_points()
        return self._entries.get(key, default)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {len(self._entries)} entries)"
