"""A channel of pytest-tau2's own between the xdist controller and each worker.

xdist carries a worker's results to the controller only in its items' reports, so a
conversation that finished ahead of its item (``--tau2-concurrency``) waited on the worker until
the item ran: a ``kill -9`` lost it, and a resume paid for it again. Through this link a worker
hands each result to the controller as soon as it is made; the controller, which owns the
results folder, writes it and answers (saved, or why not), and it can tell every worker to stop
starting conversations (a result could not be saved) or to stop at once (SIGTERM/SIGHUP).
Workers still never touch the folder, whatever machine they run on.

The channel is an execnet channel of the worker's gateway, made by the controller when it
configures the node and sent in ``workerinput`` (execnet carries channels inside messages): no
second ``remote_exec``, nothing xdist itself reads. Messages are plain tuples:

- worker -> controller: ``("save", ticket, payload)``;
- controller -> worker: ``("saved", ticket, error-or-None)``, ``("stop", reason)``,
  ``("interrupt", signal name)``.

Without the link (a worker of another plugin's making), results travel in reports as before.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_tau2.plugin import compat_execnet

if TYPE_CHECKING:  # imported when a result is sent: xdist_hooks.py, which makes the links, loads at every start
    from pytest_tau2.report.saving import ResultWriter, SaveTicket

WORKERINPUT_KEY = "tau2_results_link"
WATCH_S = 0.05
"""How often a worker looks at its parent: a controller gone is seen within this."""
ORPHAN_EXIT_S = 0.5
"""A worker whose controller is gone is stopped as by SIGTERM, and ends at the latest this long after."""
ACK_TIMEOUT_S = 120.0
"""How long a worker's item waits for the controller to say its result is saved; past it the
result travels in the item's report instead (as without the link)."""


# ---- the controller's side -----------------------------------------------------------------------


class ControllerLinks:
    """The controller's ends of every worker's link: saves results, tells workers to stop."""

    def __init__(self, writer: ResultWriter | None = None) -> None:
        self.writer = writer
        """Set when the adapter wakes up on the controller (plugin/run_state.py); workers send
        results only after that (the controller wakes at their collection report)."""
        self._channels: list[Any] = []
        self._lock = threading.Lock()

    def open(self, node: Any) -> None:
        """Before the worker starts: a channel on its gateway, sent to it in ``workerinput``."""
        gateway = getattr(node, "gateway", None)
        newchannel = getattr(gateway, "newchannel", None)
        if not callable(newchannel):
            return
        channel = newchannel()
        channel.setcallback(lambda message: self._received(channel, message), endmarker=None)
        node.workerinput[WORKERINPUT_KEY] = channel
        with self._lock:
            self._channels.append(channel)

    def _received(self, channel: Any, message: Any) -> None:
        # On execnet's receiving thread: one result's files (a few ms), then the answer.
        if not (isinstance(message, tuple) and len(message) == 3 and message[0] == "save"):
            return  # the end marker (None) or something this version does not know
        _, ticket, payload = message
        try:
            if self.writer is None:  # not awake: the result travels in its item's report instead
                raise RuntimeError("the controller has no results folder yet")
            error = self.writer.save(payload)
        except Exception as exc:  # a payload that is not one: say so, never kill the receiver thread
            error = f"{type(exc).__name__}: {exc}"
        _send(channel, ("saved", ticket, error))

    def tell(self, message: tuple[Any, ...]) -> None:
        """Send ``message`` to every worker still linked (any thread)."""
        with self._lock:
            channels = list(self._channels)
        for channel in channels:
            _send(channel, message)


def _send(channel: Any, message: tuple[Any, ...]) -> None:
    try:
        channel.send(message)
    except Exception:  # the worker is gone (or going): nothing to tell it
        pass


# ---- a worker's side -----------------------------------------------------------------------------


class WorkerLink:
    """A worker's end of its link: hands results to the controller and waits for its answers."""

    def __init__(self, channel: Any, on_stop: Callable[[str], None]) -> None:
        self.channel = channel
        self.on_stop = on_stop
        self._tickets: dict[int, SaveTicket] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        compat_execnet.serialize_writes(channel)
        channel.setcallback(self._received, endmarker=None)
        self._parent = os.getppid()
        self._orphaned = threading.Event()
        threading.Thread(target=self._watch_controller, name="tau2-controller-watch", daemon=True).start()

    def submit(self, payload: dict[str, Any]) -> SaveTicket:
        """Send one result to be saved (any thread); its ticket is settled by the answer."""
        from pytest_tau2.report.saving import SaveTicket

        ticket = SaveTicket()
        with self._lock:
            number = next(self._ids)
            self._tickets[number] = ticket
        try:
            self.channel.send(("save", number, payload))
        except Exception:  # the link is gone: the result travels in the item's report instead
            with self._lock:
                self._tickets.pop(number, None)
        return ticket

    def _received(self, message: Any) -> None:
        if not isinstance(message, tuple) or not message:
            return
        kind = message[0]
        if kind == "saved" and len(message) == 3:
            with self._lock:
                ticket = self._tickets.pop(message[1], None)
            if ticket is not None:
                ticket.settle(message[2])
        elif kind == "stop" and len(message) == 2:
            self.on_stop(str(message[1]))
        elif kind == "interrupt" and len(message) == 2:
            name = str(message[1])
            number = getattr(signal, name, signal.SIGTERM)
            os.kill(os.getpid(), number)  # this worker's handler (plugin/signals.py) interrupts its main thread

    def _watch_controller(self) -> None:
        """A controller killed outright (SIGKILL, the OOM killer) tells its workers nothing, and
        execnet lets a worker run on for 5 s and more once its connection drops: it went on calling
        the model. A worker whose parent changed (re-parented: the controller is gone) stops."""
        while not self._orphaned.wait(WATCH_S):
            if os.getppid() != self._parent:
                self.controller_lost()

    def controller_lost(self) -> None:
        """The controller is gone: no model call starts from now on, the run stops as on SIGTERM
        (agents' processes stopped), and the process ends within :data:`ORPHAN_EXIT_S` regardless;
        nothing is lost that could still be saved, the controller owned the folder."""
        if self._orphaned.is_set():
            return
        self._orphaned.set()
        from pytest_tau2.run.session import stop_model_calls

        reason = "the xdist controller is gone: this worker stops"
        stop_model_calls(reason)
        with contextlib.suppress(Exception):
            self.on_stop(reason)
        timer = threading.Timer(ORPHAN_EXIT_S, os._exit, (3,))
        timer.daemon = True  # a worker that ends sooner by itself is not held for it
        timer.start()
        with contextlib.suppress(OSError):
            os.kill(os.getpid(), signal.SIGTERM)  # this worker's handler (plugin/signals.py) interrupts it


def worker_link(config: pytest.Config, on_stop: Callable[[str], None]) -> WorkerLink | None:
    """This worker's link, when the controller made one."""
    channel = (getattr(config, "workerinput", None) or {}).get(WORKERINPUT_KEY)
    if channel is None or not callable(getattr(channel, "send", None)):
        return None
    return WorkerLink(channel, on_stop)
