"""``--tau2-concurrency N`` under xdist: N conversations in flight in each worker.

pytest-xdist hands a worker the indices of the items it will run in batches; the worker keeps
them in a queue (``WorkerInteractor.torun``) and runs them one by one. Two pieces make the
prefetcher work there:

- on the worker, :func:`pending_source` reads that queue, so the prefetcher starts the
  conversations of exactly the items this worker has been given, in the order it will run them;
  a ``--dist worksteal`` steal of items whose conversation already started cancels those runs
  here (the worker that receives them runs them again, so no verdict depends on the cancelled
  run);
- on the controller, :func:`make_scheduler` (``--dist load``, xdist's default with ``-n``) keeps
  up to 2N + 1 items queued per worker (the running item plus 2N upcoming), fairly shared while
  items remain. Items report in order, so a long conversation at the head of the queue holds
  back the top-up while the N behind it finish; the second N keeps the worker N deep meanwhile.
  xdist's own load scheduler tops a worker up only when its queue runs low, and not
  at all while tests take over 0.1 s, which would leave a worker 1-2 conversations deep.
  When the items outnumber the slots of all workers, they go out longest expected first.

Both read xdist internals that are stable across its 3.x releases (the queue, its lock, the
scheduler's pending lists), through plugin/compat_xdist.py. When the queue cannot be read, the
worker runs one scenario at a time, as before; without xdist's scheduler, the scheduler is
xdist's own.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import pytest

from pytest_tau2.plugin import compat_xdist


def pending_source(
    config: pytest.Config,
    ids: Sequence[str | None],
    lock: AbstractContextManager[Any],
    on_steal: Callable[[list[str]], None],
    on_queued: Callable[[], None],
) -> Callable[[], list[str]] | None:
    """A function giving the ids of the items queued on this worker, next first; None when the
    queue cannot be read. ``ids[i]`` is the id of ``session.items[i]`` (None: not a scenario).
    ``on_steal`` is called with the ids a steal takes away, after they left the queue; ``lock``
    (the prefetcher's) is held around both, so no stolen item starts in between. ``on_queued``
    is called (on execnet's receiving thread) after each item the controller adds: the controller
    sends a worker its items in several batches, and a batch that arrives while every started
    conversation is still talking would otherwise wait for one of them to end (at 64 in flight
    the retail sweep's five longest conversations started 2 s late in some runs)."""
    queue = compat_xdist.WorkerQueue.find(config)
    if queue is None:
        return None
    queue.on_put(on_queued)

    def pending() -> list[str]:
        indices = queue.indices()
        return [name for i in indices if isinstance(i, int) and 0 <= i < len(ids) and (name := ids[i]) is not None]

    def steal_and_cancel(steal: Callable[[Sequence[int]], None], indices: Sequence[int]) -> None:
        with lock:
            queued = queue.queued()
            steal(indices)
            left = queue.queued()
            gone = [ids[i] for i in indices if i in queued and i not in left and 0 <= i < len(ids)]
            on_steal([name for name in gone if name is not None])

    queue.wrap_steal(steal_and_cancel)
    return pending


def make_scheduler(
    config: pytest.Config,
    log: Any,
    concurrency: int,
    expected_length: Callable[[str], int] | None = None,
    preload: Callable[[], None] | None = None,
) -> Any | None:
    """A load scheduler that keeps 2 x ``concurrency`` + 1 items queued per worker, or None (xdist's
    own) when the run does not use ``--dist load`` or xdist's scheduler cannot be extended.

    With ``expected_length`` (a node id's expected conversation length, e.g. its gold actions;
    ``preload`` reads what it needs, on a thread, once a worker's collection shows more items than slots)
    and more items than conversation slots in all workers together, the items go out longest
    first: the first ones dealt to the workers in turn (0, 1, 1, 0, 0, 1, ... for two), the rest
    as workers report. Handed out in session order, one worker's share could hold more long
    conversations than another's: at ``-n 2 --tau2-concurrency 32`` on retail one worker ended
    1.2 s after the other."""
    if concurrency <= 1 or getattr(config.option, "dist", "load") != "load":
        return None
    LoadScheduling = compat_xdist.load_scheduling()
    if LoadScheduling is None:
        return None
    # The controller collects nothing: it reads the scenarios (~0.1 s of CPU) on a thread, not a
    # daemon (the process never exits in the middle of it), once the first worker's collection
    # shows more items than slots, the only case that deals them longest first. Started with the
    # workers, it took that CPU from their start-up on every run (at -n 2 --tau2-concurrency 64
    # the 114 retail items fit the 128 slots and it was never used); the workers' collections
    # arrive within a few ms of each other, so the first distribution still rarely waits for it.
    loading: threading.Thread | None = None

    def start_loading() -> None:
        nonlocal loading
        if loading is None and preload is not None:
            loading = threading.Thread(target=preload, name="tau2-scenario-lengths")
            loading.start()

    class DeepLoadScheduling(LoadScheduling):  # type: ignore[misc,valid-type]
        """xdist's load scheduling, with each worker's queue kept 2 x ``concurrency`` + 1 deep."""

        _rank: list[tuple[int, int]] | None = None  # per item, once dealt longest first: (module rank, -length)

        def add_node_collection(self, node: Any, collection: Sequence[str]) -> None:
            super().add_node_collection(node, collection)
            workers = max(len(self.nodes), getattr(self, "numnodes", 0) or 0)
            if expected_length is not None and len(collection) > workers * concurrency:
                start_loading()

        def schedule(self) -> None:
            if self.collection is None and expected_length is not None and self._deal_longest_first():
                return
            super().schedule()
            for node in self.nodes:
                self._top_up(node)

        def check_schedule(self, node: Any, duration: float = 0) -> None:
            self._top_up(node)
            super().check_schedule(node, duration=duration)

        def remove_node(self, node: Any) -> Any:
            """A crashed worker's items go back to the pool (xdist appends them): longest first again."""
            crashed = super().remove_node(node)
            if self._rank is not None:
                self.pending.sort(key=self._rank.__getitem__)
            return crashed

        def _depth(self) -> int:
            remaining = len(self.pending) + sum(len(p) for p in self.node2pending.values())
            fair = max(2, math.ceil(remaining / max(1, len(self.node2pending))))
            return min(2 * concurrency + 1, fair)

        def _top_up(self, node: Any) -> None:
            if node.shutting_down or not self.pending or node not in self.node2pending:
                return
            missing = self._depth() - len(self.node2pending[node])
            if missing > 0:
                compat_xdist.send_tests(self, node, missing)

        def _deal_longest_first(self) -> bool:
            """The first distribution, longest expected first; False leaves it to xdist (fewer
            items than slots: every conversation starts at once wherever it goes)."""
            assert expected_length is not None
            if not self.collection_is_completed or not self.node2collection:
                return False
            if not compat_xdist.same_collection(self):
                self.log("**Different tests collected, aborting run**")
                return True
            collection = next(iter(self.node2collection.values()))
            if len(collection) <= len(self.nodes) * concurrency:
                return False
            self.collection = collection
            if getattr(self, "maxschedchunk", None) is None:  # as xdist's own first schedule() does
                setattr(self, "maxschedchunk", len(collection))  # noqa: B010  (mypy cannot type xdist's attribute)
            start_loading()  # normally started by the first worker's collection already
            if loading is not None:
                loading.join()
            lengths = [expected_length(nodeid) for nodeid in collection]
            modules: dict[str, int] = {}  # module -> its rank in session order
            for nodeid in collection:
                modules.setdefault(nodeid.split("::", 1)[0], len(modules))
            # Longest first within each module, modules in session order: tests of one module stay
            # together (its module-scoped fixtures are set up once per worker, as xdist intends).
            self._rank = [
                (modules[nodeid.split("::", 1)[0]], -length) for nodeid, length in zip(collection, lengths, strict=True)
            ]
            self.pending[:] = sorted(range(len(collection)), key=self._rank.__getitem__)  # stable
            nodes = [node for node in self.nodes if not node.shutting_down]
            room = {node: self._depth() - len(self.node2pending[node]) for node in nodes}
            dealt: dict[Any, list[int]] = {node: [] for node in nodes}
            order = nodes + nodes[::-1]  # snake order: each pair of rounds evens out
            turn = taken = 0
            while taken < len(self.pending) and any(len(dealt[n]) < room[n] for n in nodes):
                node = order[turn % len(order)]
                turn += 1
                if len(dealt[node]) < room[node]:
                    dealt[node].append(self.pending[taken])
                    taken += 1
            del self.pending[:taken]
            for node, indices in dealt.items():
                if indices:
                    self.node2pending[node].extend(indices)
                    node.send_runtest_some(indices)
            if not self.pending:
                for node in nodes:
                    node.shutdown()
            return True

    return DeepLoadScheduling(config, log)
