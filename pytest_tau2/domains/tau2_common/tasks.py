"""Reading the pinned tau2 data: verified data root, split ids (cheap), tasks (parsed once)."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from pytest_tau2.data.parsing import parsed, read_json
from pytest_tau2.data.resolve import DataPin, resolve_data_dir, verify
from pytest_tau2.domains.tau2_common.task_types import Tau2Task
from pytest_tau2.environment.jsontypes import JSONValue

if TYPE_CHECKING:
    from pytest_tau2.settings import Settings

_T = TypeVar("_T")

_PINS: dict[tuple[Path | None, str, bool], DataPin] = {}


def tau2_pin(settings: Settings, domain: str) -> DataPin:
    """The verified data pin for ``domain`` (checksums checked once per process).

    Remembered per configured root, domain and ``allow_unpinned``: collection asks once per
    scenario (2,452 times for the telecom full split), and ``verify`` resolves the path on every
    call (an ``lstat`` per path component) before its own cache lookup; that was ~80 ms of a
    2,285-item collection (bench/results/collection.md). Like ``verify``'s cache, a root verified
    once stays verified for the process; a failure is not remembered (the next call raises again).
    """
    root = resolve_data_dir(settings.data_dir)
    key = (root, domain, bool(settings.allow_unpinned_data))
    pin = _PINS.get(key)
    if pin is None:
        pin = _PINS.setdefault(key, verify(root, domain, allow_unpinned=key[2]))
    return pin


def tau2_data_root(settings: Settings, domain: str) -> Path:
    # The pin's own Path object: it caches its hash, which load_tasks' cache key needs per scenario.
    return tau2_pin(settings, domain).root


@functools.cache
def _read_json(path: Path) -> JSONValue:
    return read_json(path)  # a DataError naming the file and line when it does not parse


def load_split_ids(root: Path, domain: str) -> dict[str, list[str]]:
    """``{split: [task ids]}`` from split_tasks.json: all collection needs (no tasks.json parse)."""
    data = cast("dict[str, list[JSONValue]]", _read_json(root / "tau2" / "domains" / domain / "split_tasks.json"))
    return {name: [str(i) for i in ids] for name, ids in data.items()}


@functools.cache
def load_tasks(root: Path, domain: str) -> dict[str, Tau2Task]:
    """Every task of ``domain`` by id, in file order, parsed once per process.

    Parsed when the first scenario of the domain runs (collection does not read tasks.json,
    see tau2_sources), after its DB: frozen like the DBs (``cached_db``), or every later full
    garbage collection would re-scan them (about 55,000 containers for telecom's 2,285 tasks).
    """
    tasks = cast("list[Tau2Task]", _read_json(root / "tau2" / "domains" / domain / "tasks.json"))
    by_id = {str(task["id"]): task for task in tasks}
    gc.collect()
    gc.freeze()
    return by_id


_DBS: dict[Path, object] = {}


def cached_db(path: Path, reader: Callable[[Path], _T]) -> _T:
    """The pristine DB at ``path``, parsed once per process (callers work on ``fresh_db`` copies).

    The parsed tree is moved out of the garbage collector's reach (``gc.freeze``): it lives for
    the whole process and would otherwise be re-scanned by every collection.
    """
    if path not in _DBS:
        _DBS[path] = parsed(path, reader)  # a DataError naming the file and line when it does not parse
        gc.collect()
        gc.freeze()
    return cast(_T, _DBS[path])  # the reader's result for this path (one reader per DB file)


@functools.cache
def read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")
