"""The prefetcher's start order: longest expected conversation first, the item pytest waits for
before any other, and never more than ``width`` runs in flight.

The runs here are stand-ins that last until the test releases them (``_launch`` is replaced),
so every step is deterministic: which runs are in flight is checked between releases.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_tau2.run.prefetch import Prefetched, Prefetcher
from pytest_tau2.settings import Settings

# name -> gold actions (the expected length)
GOLD = {"a": 1, "b": 5, "c": 3, "d": 0, "e": 4, "f": 2}


@dataclass
class FakeScenario:
    gold: int | None

    def gold_actions(self) -> list[dict[str, Any]] | None:
        return None if self.gold is None else [{"name": "act"}] * self.gold


class HeldRuns(Prefetcher):
    """A Prefetcher whose runs wait for :meth:`release` instead of talking to models."""

    def __init__(self, names: list[str], width: int, gold: dict[str, int | None] = GOLD, trials: int = 1) -> None:
        self.order: list[str] = []
        self.peak = 0
        self.gates: dict[str, threading.Event] = {}
        self.freed: dict[Any, threading.Event] = {}  # in launch order, as ``order``
        super().__init__(names, width, Settings(trials=trials), lambda name: self._scenario(name, gold))

    @staticmethod
    def _scenario(name: str, gold: dict[str, int | None]) -> FakeScenario:
        if name == "broken":
            raise ValueError("bad scenario file")
        return FakeScenario(gold[name])

    def _launch(self, name: str) -> Prefetched:
        self.scenario_for(name.split("-t")[0])  # a broken scenario raises here, as a real one would
        gate = self.gates[name] = threading.Event()
        self.order.append(name)
        self.peak = max(self.peak, self._in_flight + 1)

        async def run() -> Any:
            while not gate.is_set():
                await asyncio.sleep(0.002)
            return name

        prefetched = Prefetched(name, None)  # type: ignore[arg-type]
        future = asyncio.run_coroutine_threadsafe(self._then_after(run(), prefetched), self._loop)
        prefetched.future = future
        self.freed[future] = threading.Event()
        return prefetched

    def _finished(self, future: Any) -> None:
        super()._finished(future)
        self.freed[future].set()  # the slot is handed on by now

    def release(self, name: str) -> None:
        """End ``name``'s run and wait until its slot has gone to the next one."""
        future = next(f for f, n in zip(self.freed, self.order, strict=True) if n == name)
        self.gates[name].set()
        assert self.freed[future].wait(timeout=5), f"{name} did not finish"


@pytest.fixture
def close_after() -> Any:
    made: list[HeldRuns] = []
    yield made.append
    for prefetcher in made:
        while pending := [f for f in list(prefetcher.freed) if not f.done()]:  # ending one starts the next
            for gate in list(prefetcher.gates.values()):
                gate.set()
            pending[0].result(timeout=5)
        prefetcher.close()


def test_the_free_slots_go_to_the_longest_expected_conversations(close_after: Any) -> None:
    p = HeldRuns(list(GOLD), width=3)
    close_after(p)
    first = p.take("a")  # pytest's first item starts at once; the two longest fill the other slots
    assert p.order == ["a", "b", "e"]
    p.release("b")
    assert p.order == ["a", "b", "e", "c"]  # then the longest of those left (c: 3 gold actions)
    p.release("a")
    assert first.future.result(timeout=5) == "a"
    assert p.order == ["a", "b", "e", "c", "f"]
    assert p.peak == 3


def test_the_item_pytest_waits_for_takes_the_next_free_slot(close_after: Any) -> None:
    p = HeldRuns(list(GOLD), width=2)
    close_after(p)
    p.take("a")
    assert p.order == ["a", "b"]
    taken: list[Prefetched] = []
    waiter = threading.Thread(target=lambda: taken.append(p.take("d")))
    waiter.start()
    time.sleep(0.05)
    assert taken == [] and "d" not in p.order  # every slot busy: it waits, nothing is squeezed in
    p.release("a")
    waiter.join(timeout=5)
    assert taken and p.order == ["a", "b", "d"]  # d jumped ahead of e, c and f, longer as they are
    assert p.peak == 2


def test_without_gold_actions_the_session_order_stands(close_after: Any) -> None:
    names = ["s1", "s2", "s3", "s4"]
    p = HeldRuns(names, width=2, gold=dict.fromkeys(names, None))
    close_after(p)
    p.take("s1")
    p.release("s1")
    p.take("s2")
    assert p.order[:3] == ["s1", "s2", "s3"]


def test_a_scenario_that_cannot_be_built_fails_in_its_own_item_only(close_after: Any) -> None:
    p = HeldRuns(["a", "broken", "b"], width=4, gold={"a": 1, "b": 2})
    close_after(p)
    p.take("a")
    with pytest.raises(ValueError, match="bad scenario file"):
        p.take("broken")
    assert p.order == ["a", "b"]


def test_trials_of_one_scenario_share_its_expected_length(close_after: Any) -> None:
    names = ["a-t1", "a-t2", "b-t1", "b-t2"]
    p = HeldRuns(names, width=3, trials=2)
    close_after(p)
    p.take("a-t1")
    assert p.order == ["a-t1", "b-t1", "b-t2"]


def test_an_unreadable_worker_queue_still_lets_each_item_start(close_after: Any) -> None:
    calls = 0

    def queued() -> list[str]:  # an xdist worker's queue that cannot be read after the first look
        nonlocal calls
        calls += 1
        if calls > 1:
            raise RuntimeError("queue gone")
        return ["a", "b", "c"]

    p = HeldRuns([], width=1)
    p.names = queued
    close_after(p)
    p.take("a")
    taken: list[Prefetched] = []
    waiter = threading.Thread(target=lambda: taken.append(p.take("c")))
    waiter.start()
    time.sleep(0.05)
    assert taken == []
    p.gates["a"].set()  # its slot frees; the queue cannot be read to refill it
    waiter.join(timeout=5)
    assert taken and p.order == ["a", "c"]


def test_after_run_builds_on_the_loop_thread_and_a_failure_leaves_it_to_the_item(close_after: Any) -> None:
    threads: dict[str, str] = {}

    def after(outcome: Any, prefetched: Prefetched) -> str:
        threads[prefetched.name] = threading.current_thread().name
        if prefetched.name == "b":
            raise OSError("disk full")
        return f"files of {outcome}"

    p = HeldRuns(["a", "b"], width=2)
    p.after_run = after
    close_after(p)
    a, b = p.take("a"), p.take("b")
    p.release("a")
    p.release("b")
    assert a.future.result(timeout=5) == "a" and a.after == "files of a"
    assert b.future.result(timeout=5) == "b" and b.after is None  # the item builds it again, and fails there
    assert threads == {"a": "tau2-prefetch", "b": "tau2-prefetch"}


def test_closing_cancels_what_runs_and_starts_nothing_more() -> None:
    p = HeldRuns(list(GOLD), width=2)
    p.take("a")
    assert p.order == ["a", "b"]
    p.close()  # cancelling a and b frees their slots: the others must not start (and be abandoned)
    assert p.order == ["a", "b"]
    assert all(future.cancelled() for future in p.freed)


def test_an_item_stolen_away_and_given_back_starts_anew(close_after: Any) -> None:
    queue = ["a", "b", "c"]
    p = HeldRuns([], width=3)
    p.names = lambda: list(queue)
    close_after(p)
    p.take("a")
    assert p.order == ["a", "b", "c"]
    queue.remove("b")
    p.cancel(["b"])  # xdist's work stealing took it to another worker ...
    queue.append("b")  # ... and it came back
    again = p.take("b")
    assert p.order == ["a", "b", "c", "b"]
    p.gates["b"].set()
    assert again.future.result(timeout=5) == "b"


def test_runs_finished_ahead_of_pytest_are_bounded(close_after: Any) -> None:
    p = HeldRuns(list(GOLD), width=2)
    p.ahead = 3  # runs started and not yet taken by pytest
    close_after(p)
    p.take("a")
    assert p.order == ["a", "b"]
    p.release("b")  # b finished, untaken; e starts in its slot
    p.release("e")  # b and e untaken; c starts
    assert p.order == ["a", "b", "e", "c"]
    p.release("c")  # b, e and c untaken: the slot that frees stays empty
    assert p.order == ["a", "b", "e", "c"]
    p.take("b")  # pytest takes one: room for the next
    assert p.order == ["a", "b", "e", "c", "f"]
    assert p.take("e").future.result(timeout=5) == "e"


def test_the_loop_warms_up_once_after_the_first_requests(close_after: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the first tool calls import is imported on the loop while the first runs wait for their models."""
    import pytest_tau2.run.prefetch as prefetch

    threads: list[str] = []
    monkeypatch.setattr(prefetch, "WARM_UP_AFTER_S", 0.0)
    monkeypatch.setattr(prefetch, "warm_up", lambda: threads.append(threading.current_thread().name))
    p = HeldRuns(list(GOLD), width=2)
    close_after(p)
    p.take("a")
    p.release("a")
    p.take("b")
    deadline = time.monotonic() + 5
    while not threads and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.02)
    assert threads == ["tau2-prefetch"]  # once, on the loop thread


def test_items_queued_later_start_without_waiting_for_a_run_to_end(close_after: Any) -> None:
    """An xdist worker's queue grows while its first items run: the new items take the free slots
    at once, not when a running conversation ends."""
    queued = ["a", "b"]
    p = HeldRuns(list(GOLD), width=4)
    p.names = lambda: list(queued)  # as worker_queue.pending_source gives them
    close_after(p)
    p.take("a")
    assert p.order == ["a", "b"]
    queued.extend(["c", "e", "f"])  # the controller's next batch
    p.refill_soon()
    deadline = time.monotonic() + 5
    while len(p.order) < 4 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert p.order == ["a", "b", "e", "c"]  # the longest of the newcomers, up to the width; nothing ended
    assert p.peak == 4


def test_the_worker_queue_tells_the_prefetcher_of_each_item_the_controller_adds() -> None:
    from types import SimpleNamespace

    from execnet.gateway_base import get_execmodel
    from xdist import remote

    TestQueue = getattr(remote, "TestQueue", None)
    if TestQueue is None:  # xdist 3.6: a plain queue, which compat_xdist.WorkerQueue does not read
        pytest.skip("this pytest-xdist has no TestQueue (it came in 3.7): the worker queue is not read")

    from pytest_tau2.plugin.xdist_scheduler import pending_source

    class WorkerInteractor:  # xdist's, as far as pending_source reads it
        def __init__(self) -> None:
            self.torun = TestQueue(get_execmodel("thread"))
            self.nextitem_index = 0

    interactor = WorkerInteractor()
    config = SimpleNamespace(pluginmanager=SimpleNamespace(get_plugins=lambda: [interactor]))
    told: list[int] = []
    pending = pending_source(
        config,  # type: ignore[arg-type]
        ["s0", "s1", "s2"],
        threading.RLock(),
        lambda names: None,
        lambda: told.append(len(interactor.torun._items)),
    )
    assert pending is not None
    for index in (1, 2):  # what xdist's handle_command does with a "runtests" command
        interactor.torun.put(index)
    assert told == [1, 2]  # after each item is in the queue
    assert pending() == ["s0", "s1", "s2"]
