"""plugin/signals.py: SIGTERM and SIGHUP raise a KeyboardInterrupt that names them (pytest then
ends the session as after Ctrl-C); a handler of the user's, or an ignored signal, is left alone."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pytest

from pytest_tau2.plugin.signals import SignalStop, Stopped


@pytest.fixture
def restore_handlers() -> Iterator[None]:
    saved = {n: signal.getsignal(n) for n in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)


def _deliver(number: int) -> None:
    os.kill(os.getpid(), number)
    time.sleep(0.5)  # the handler runs in the main thread at the next bytecode; never reached when it raises


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_signal_stops_like_ctrl_c_and_names_itself(restore_handlers: None, name: str) -> None:
    number = getattr(signal, name)
    signal.signal(number, signal.SIG_DFL)
    told: list[str] = []
    stop = SignalStop(on_first=told.append)
    stop.install()
    with pytest.raises(Stopped, match=rf"^interrupted \({name}\)$") as raised:
        _deliver(number)
    assert isinstance(raised.value, KeyboardInterrupt) and told == [name]
    stop.uninstall()
    assert signal.getsignal(number) is signal.SIG_DFL


def test_a_handler_of_the_users_and_an_ignored_hangup_are_left_alone(restore_handlers: None) -> None:
    def mine(number: int, frame: object) -> None:
        pass

    signal.signal(signal.SIGTERM, mine)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # nohup
    stop = SignalStop()
    stop.install()
    assert signal.getsignal(signal.SIGTERM) is mine and signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    stop.uninstall()


def test_a_signal_while_the_session_writes_its_files_is_noted_not_raised(restore_handlers: None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    stop = SignalStop()
    stop.install()
    stop.finishing()
    _deliver(signal.SIGTERM)  # does not raise
    assert stop.received == "SIGTERM"
    stop.uninstall()
