"""The xdist controller compiles the report template a moment into the run, on a thread; the end
of the session drops that work when it has not begun and waits for it when it has."""

from __future__ import annotations

import threading
import time

import pytest

from pytest_tau2.plugin import prefetching as concurrency


def _idle() -> concurrency.IdleWork:
    return concurrency.IdleWork(is_worker=False)


def test_compiles_after_the_delay_and_the_end_waits_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    started, done = threading.Event(), []

    def compile_template() -> None:
        started.set()
        time.sleep(0.05)
        done.append(threading.current_thread() is not threading.main_thread())

    monkeypatch.setattr(concurrency, "IDLE_DELAY_S", 0.0)
    monkeypatch.setattr(concurrency, "_compile_report_template", compile_template)
    idle = _idle()
    idle.use_controller_idle_time()
    idle.use_controller_idle_time()  # once per session
    assert started.wait(5)
    idle.end_controller_idle_time()
    assert done == [True]  # ran once, off the main thread, and finished before the end went on


def test_a_short_run_drops_the_work(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(concurrency, "IDLE_DELAY_S", 60.0)
    monkeypatch.setattr(concurrency, "_compile_report_template", lambda: calls.append(1))
    idle = _idle()
    idle.use_controller_idle_time()
    idle.end_controller_idle_time()
    timer = idle.timer
    assert timer is not None
    assert not timer.is_alive() and calls == []  # cancelled and ended: the report's own step compiles it
    _idle().end_controller_idle_time()  # never started: nothing to do
