"""The prefetcher's warm-up (run/prefetch.py): once the first runs have sent their first requests,
the loop replays their gold actions, in start order, one per loop pass, then those of the runs that
start next until a first run has its first reply, so their scoring later finds them cached; a
replay that fails is left for that run's own scoring to report."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from pytest_tau2.run.prefetch import Prefetched, Prefetcher
from pytest_tau2.settings import Settings


class Usage:
    def __init__(self, replied: threading.Event) -> None:
        self.replied = replied

    def any_calls(self) -> bool:
        return self.replied.is_set()


class FakeTrial:
    def __init__(self, name: str, log: list[tuple[str, str]], fail: bool, replied: threading.Event) -> None:
        self.name, self.log, self.fail = name, log, fail
        self.view = type("View", (), {"usage": Usage(replied)})()

    def warm_gold(self) -> None:
        self.log.append((self.name, threading.current_thread().name))
        if self.fail:
            raise ValueError("a gold action names no tool")


class Runs(Prefetcher):
    """Runs that last until ``done`` is set; their trials record the warm-up."""

    def __init__(self, names: list[str], width: int, fail: frozenset[str] = frozenset(), replied: bool = True) -> None:
        self.log: list[tuple[str, str]] = []
        self.done = threading.Event()
        self.fail = fail
        self.replied = threading.Event()
        if replied:  # the first replies are in before the warm-up: no upcoming run is warmed
            self.replied.set()
        super().__init__(names, width, Settings(), lambda name: None)  # type: ignore[arg-type,return-value]

    def _launch(self, name: str) -> Prefetched:
        done = self.done

        async def run() -> Any:
            while not done.is_set():
                await asyncio.sleep(0.002)
            return name

        prefetched = Prefetched(name, FakeTrial(name, self.log, name in self.fail, self.replied))  # type: ignore[arg-type]
        prefetched.future = asyncio.run_coroutine_threadsafe(self._then_after(run(), prefetched), self._loop)
        return prefetched

    def _warm_gold(self, name: str) -> None:
        self.log.append((f"upcoming {name}", threading.current_thread().name))
        if len([n for n, _ in self.log if n.startswith("upcoming")]) == 2:
            self.replied.set()  # a first run's first reply arrives: the warm-up stops after this one


def _wait_for(condition: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return False


def test_the_first_runs_gold_is_replayed_on_the_loop_in_start_order_after_the_first_take() -> None:
    runs = Runs(["a", "b", "c", "d", "e"], width=3, fail=frozenset({"a"}))
    try:
        runs.take("a")
        assert _wait_for(lambda: len(runs.log) == 3)
        assert [name for name, _ in runs.log] == ["a", "b", "c"]  # the first wave only; "a" failing stops nothing
        assert {thread for _, thread in runs.log} == {"tau2-prefetch"}
        runs.done.set()
        runs.take("b")
        time.sleep(0.2)
        assert len(runs.log) == 3  # once per process: later runs replay theirs when scored
    finally:
        runs.done.set()
        runs.close()


def test_no_warm_up_before_an_item_takes_its_run() -> None:
    runs = Runs(["a", "b"], width=2)
    try:
        time.sleep(0.2)
        assert runs.log == []
    finally:
        runs.done.set()
        runs.close()


def test_until_a_first_reply_the_runs_that_start_next_are_warmed_too() -> None:
    runs = Runs(["a", "b", "c", "d", "e", "f"], width=2, replied=False)
    try:
        runs.take("a")
        assert _wait_for(lambda: len(runs.log) == 4)
        time.sleep(0.2)
        assert [name for name, _ in runs.log] == ["a", "b", "upcoming c", "upcoming d"]  # then stopped
    finally:
        runs.done.set()
        runs.close()
