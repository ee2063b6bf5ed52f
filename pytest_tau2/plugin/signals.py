"""SIGTERM and SIGHUP stop a run the way Ctrl-C does.

CI timeouts, ``timeout(1)``, ``docker stop`` and Kubernetes send SIGTERM first; a closed terminal
sends SIGHUP. By default either ends the process on the spot: no junit.xml, all_metrics.json,
summary or report.html, the folder's lock file left behind, and xdist workers left calling the
model. Here the first one raises :class:`Stopped` (a ``KeyboardInterrupt``) in the main thread,
so pytest ends the session as after Ctrl-C: the item in flight is an error "interrupted
(SIGTERM)", background conversations are cancelled, the run-level files are written, the lock is
removed, and the summary starts ``Interrupted after N of M scenarios: interrupted (SIGTERM)``.
On the xdist controller the workers are told at once (plugin/xdist_link.py), and stop the same
way. A second signal while the run stops ends the process as the signal would have.

Only a signal whose handler is the default is taken over: a handler of the user's, or SIGHUP
ignored under ``nohup``, is left alone.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

SIGNALS = ("SIGTERM", "SIGHUP")


class Stopped(KeyboardInterrupt):
    """The run was stopped by a signal; ``str()`` is ``interrupted (SIGTERM)``."""


class SignalStop:
    """The handlers of one process: installed at configure, the previous ones restored at the end."""

    def __init__(self, on_first: Callable[[str], None] | None = None) -> None:
        self.on_first = on_first
        """Called with the signal's name before the main thread is interrupted (tell the workers)."""
        self._previous: dict[int, Any] = {}
        self.received: str | None = None
        self._finishing = False

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signal handlers can only be set from the main thread
        for name in SIGNALS:
            number = getattr(signal, name, None)
            if number is None or signal.getsignal(number) is not signal.SIG_DFL:
                continue
            self._previous[number] = signal.signal(number, self._handle)

    def uninstall(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for number, previous in self._previous.items():
            if signal.getsignal(number) == self._handle:
                signal.signal(number, previous)
        self._previous.clear()

    def finishing(self) -> None:
        """The session is ending and writing its files: a first signal from now on is noted, not
        raised (it would cut those files short); a second still ends the process."""
        self._finishing = True

    def _handle(self, number: int, frame: FrameType | None) -> None:
        name = signal.Signals(number).name
        if self.received is not None:  # a second signal while stopping: end as the signal would have
            signal.signal(number, signal.SIG_DFL)
            os.kill(os.getpid(), number)
            return
        self.received = name
        if self._finishing:
            return
        if self.on_first is not None:
            try:
                self.on_first(name)
            except Exception:  # telling others is best effort; this process stops regardless
                pass
        raise Stopped(f"interrupted ({name})")
