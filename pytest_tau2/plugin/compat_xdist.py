"""pytest-xdist's internals that the adapter uses, in one place (read from pytest-xdist 3.6.1 and 3.8.0).

xdist's public surface is its hooks (``pytest_xdist_make_scheduler``, ``pytest_configure_node``,
...), ``workerinput`` / ``workeroutput`` and the scheduler classes the hook's documentation
names. The adapter needs a little more; nothing else in the package touches it:

- :class:`xdist.scheduler.LoadScheduling`: subclassed by ``--tau2-concurrency``'s deeper load
  scheduler (plugin/xdist_scheduler.py), which reads its undocumented attributes ``pending``,
  ``node2pending``, ``node2collection``, ``collection``, ``maxschedchunk`` and calls its private
  ``_send_tests`` and ``_check_nodes_have_same_collection`` (here: :func:`send_tests`,
  :func:`same_collection`). Present in 3.6 to 3.8.
- the worker's queue (``WorkerInteractor.torun``, ``nextitem_index``, ``steal``; the queue's
  ``lock()`` and ``put``): :class:`WorkerQueue`. ``TestQueue`` with ``lock()`` came in 3.7; on
  3.6 the queue cannot be read and a worker runs one scenario at a time (the prefetcher idles).

:func:`contract_problems` lists what an installed xdist lacks (tests/unit/test_compat_contract.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

TESTED = ("3.6.1", "3.8.0")
"""The pytest-xdist releases this module was read from and tested with (oldest, newest)."""
QUEUE_SINCE = (3, 7)
"""The first xdist whose worker queue (``TestQueue``) can be read under its lock."""


def load_scheduling() -> type[Any] | None:
    """xdist's ``LoadScheduling`` (the class ``--dist load`` uses), or None without xdist."""
    try:
        from xdist.scheduler import LoadScheduling
    except ImportError:
        return None
    return LoadScheduling  # type: ignore[no-any-return]


def send_tests(scheduler: object, node: object, count: int) -> None:
    """Move ``count`` items of the scheduler's pool to ``node`` (``LoadScheduling._send_tests``)."""
    load: Any = scheduler
    load._send_tests(node, count)


def same_collection(scheduler: object) -> bool:
    """Whether every worker collected the same items (``LoadScheduling._check_nodes_have_same_collection``)."""
    load: Any = scheduler
    return bool(load._check_nodes_have_same_collection())


class WorkerQueue:
    """The items xdist queued on this worker (``WorkerInteractor.torun``), read and watched."""

    def __init__(self, interactor: object, queue: object) -> None:
        self._interactor: Any = interactor
        self._queue: Any = queue

    @classmethod
    def find(cls, config: pytest.Config) -> WorkerQueue | None:
        """This worker's queue, or None (not a worker, or an xdist whose queue has no lock)."""
        for plugin in config.pluginmanager.get_plugins():
            if type(plugin).__name__ == "WorkerInteractor" and hasattr(plugin, "torun"):
                queue = plugin.torun
                if callable(getattr(queue, "lock", None)) and callable(getattr(queue, "put", None)):
                    return cls(plugin, queue)
                return None
        return None

    def indices(self) -> list[object]:
        """The running item's index, then the queued ones in order (other markers included)."""
        with self._queue.lock() as items:
            return [self._interactor.nextitem_index, *items]

    def queued(self) -> set[object]:
        with self._queue.lock() as items:
            return set(items)

    def on_put(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` after each item the controller adds (on execnet's receiving thread)."""
        put = self._queue.put

        def put_and_tell(item: object) -> None:
            put(item)
            callback()

        self._queue.put = put_and_tell

    def wrap_steal(self, wrapper: Callable[[Callable[[Sequence[int]], None], Sequence[int]], None]) -> None:
        """Route ``--dist worksteal``'s steals through ``wrapper(steal, indices)``; none on xdist without it."""
        steal = getattr(self._interactor, "steal", None)
        if not callable(steal):
            return

        def stealing(indices: Sequence[int]) -> None:
            wrapper(steal, indices)

        self._interactor.steal = stealing


def _version() -> str:
    from importlib.metadata import version

    return version("pytest-xdist")


def contract_problems() -> list[str]:
    """What the installed pytest-xdist lacks of the above, one line each naming it and the version."""
    from packaging.version import Version  # pytest's own dependency; only the contract check reads it

    version = _version()
    where = f"pytest-xdist {version} (compat_xdist read {' and '.join(TESTED)})"
    try:
        from xdist import remote, scheduler
    except ImportError as exc:
        return [f"{where}: cannot import xdist.scheduler / xdist.remote: {exc}"]
    problems: list[str] = []
    load = getattr(scheduler, "LoadScheduling", None)
    if load is None:
        return [f"{where} lacks xdist.scheduler.LoadScheduling"]
    for name in ("_send_tests", "_check_nodes_have_same_collection", "schedule", "check_schedule", "remove_node"):
        if not callable(getattr(load, name, None)):
            problems.append(f"{where} lacks the method LoadScheduling.{name}")
    if not isinstance(getattr(load, "collection_is_completed", None), property):
        problems.append(f"{where} lacks the property LoadScheduling.collection_is_completed")
    assigned = set(load.__init__.__code__.co_names)  # attributes its __init__ sets
    for name in ("pending", "node2pending", "node2collection", "collection", "maxschedchunk"):
        if name not in assigned:
            problems.append(f"{where}: LoadScheduling.__init__ no longer sets self.{name}")
    interactor = getattr(remote, "WorkerInteractor", None)
    if interactor is None:
        return [*problems, f"{where} lacks xdist.remote.WorkerInteractor"]
    assigned = set(interactor.__init__.__code__.co_names)
    for name in ("torun", "nextitem_index"):
        if name not in assigned:
            problems.append(f"{where}: WorkerInteractor.__init__ no longer sets self.{name}")
    if not callable(getattr(interactor, "steal", None)):
        problems.append(f"{where} lacks WorkerInteractor.steal")
    if Version(version).release >= QUEUE_SINCE:
        queue = getattr(remote, "TestQueue", None)
        if queue is None or not all(callable(getattr(queue, name, None)) for name in ("lock", "put")):
            problems.append(f"{where} lacks xdist.remote.TestQueue with lock() and put() (present since 3.7)")
    return problems
