"""Saving scenario results the moment they are made, on the process that owns the results folder.

A conversation paid for is saved as soon as its scoring ends, not when pytest reaches its item:
under ``--tau2-concurrency`` conversations finish in any order, and one that waited in memory
for its item was lost to a ``kill -9`` and paid for again by ``--tau2-resume``.

:class:`ResultWriter` writes payloads (report/files.py: metrics.json last) from any thread, one
at a time, and remembers what it wrote, so that the item's own report later does not write it
twice. A :class:`SaveTicket` is the answer to one save, given at once on the folder's process
and over the xdist link (plugin/xdist_link.py) on a worker. The first failed save calls
``on_failure`` (the adapter stops the run: every later result would be lost the same way).

:meth:`ResultWriter.submit` hands the files to the writer's own thread and answers when they are
on disk: creating a scenario's folders and files costs a few milliseconds of system calls (~3.6 ms
on an ext4 disk, bench/results/lean.md), which the event loop that ran the conversation (run/prefetch.py)
spent there while every other conversation waited for it. The system calls release the GIL, so
the writes run beside the loop on another core. :meth:`ResultWriter.save` still writes on the
caller's thread (an item's own report, resume, merge).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from pytest_tau2.report import files


class SaveTicket:
    """The answer to one save: ``saved`` (on disk), or ``error`` (one line), once :meth:`wait` is True."""

    def __init__(self) -> None:
        self._settled = threading.Event()
        self.error: str | None = None

    def settle(self, error: str | None) -> None:
        self.error = error
        self._settled.set()

    def wait(self, timeout: float | None = None) -> bool:
        """True once the save has an answer (within ``timeout`` seconds)."""
        return self._settled.wait(timeout)

    @property
    def saved(self) -> bool:
        return self._settled.is_set() and self.error is None

    @classmethod
    def settled(cls, error: str | None) -> SaveTicket:
        ticket = cls()
        ticket.settle(error)
        return ticket


class Saver(Protocol):
    """Where a process hands a result to be saved: the folder's writer, or a worker's link to it."""

    def submit(self, payload: dict[str, Any]) -> SaveTicket: ...


PENDING_SAVES = 8
"""Results handed to the writer's thread and not yet written, at most: beyond it ``submit`` waits."""


class ResultWriter:
    """Writes scenario payloads into ``results_dir``, thread-safe; the folder's one writer."""

    def __init__(self, results_dir: Path, on_failure: Callable[[str], None] | None = None) -> None:
        self.results_dir = results_dir
        self.on_failure = on_failure
        """Called once, with the first failure's line, on the thread that met it."""
        self.failures: list[str] = []
        """One line per result that could not be saved: ``<folder>/<file>: <reason>``."""
        self._saved: dict[str, Any] = {}  # folder -> the metrics document written there
        self._lock = threading.Lock()  # what was saved and what failed: never held during a write
        self._writing = threading.Lock()  # one payload on disk at a time (a folder is never written twice at once)
        self._told = 0
        # Bounded: a payload holds its files' texts (a transcript, the prompts, the tool schemas), and
        # when conversations end faster than the disk takes them (456 trials in flight at once), the
        # submitter waits for room as it waited for the write before, instead of holding them all.
        self._queue: queue.Queue[tuple[dict[str, Any], SaveTicket]] = queue.Queue(maxsize=PENDING_SAVES)
        self._pending = 0  # submitted, not yet answered
        self._idle = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None

    def save(self, payload: dict[str, Any]) -> str | None:
        """Write one payload; None when it is on disk, else the failure's line."""
        folder = str(payload["folder"])
        with self._writing:
            try:
                files.write_payload(self.results_dir, payload)
            except OSError as exc:
                line = (
                    str(exc) if isinstance(exc, files.ResultFileError) else f"{folder}: {files.describe_os_error(exc)}"
                )
                with self._lock:
                    self._saved.pop(folder, None)
            else:
                with self._lock:
                    self._saved[folder] = payload["metrics"]
                return None
        return self._failed(line)

    def _failed(self, line: str) -> str:
        """Note one result that could not be saved; the first is told to ``on_failure``."""
        with self._lock:
            self.failures.append(line)
            first = len(self.failures) == 1
        if first and self.on_failure is not None:
            self.on_failure(line)
        return line

    def submit(self, payload: dict[str, Any]) -> SaveTicket:
        """:meth:`save` on the writer's thread, in the order submitted; the ticket answers once the
        files are on disk (or could not be written). Waits while :data:`PENDING_SAVES` are pending."""
        ticket = SaveTicket()
        with self._idle:
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._write_submitted, name="tau2-result-writer", daemon=True)
                self._thread.start()
        self._queue.put((payload, ticket))
        return ticket

    def _write_submitted(self) -> None:
        while True:
            payload, ticket = self._queue.get()
            try:
                error = self.save(payload)
            except Exception as exc:  # not a file error: a payload it cannot write, told like a failed save
                error = self._failed(f"{payload.get('folder')}: {type(exc).__name__}: {exc}")
            ticket.settle(error)
            with self._idle:
                self._pending -= 1
                if not self._pending:
                    self._idle.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every submitted payload has its answer; False if ``timeout`` passed first."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._pending, timeout)

    def holds(self, payload: Mapping[str, object]) -> bool:
        """Whether this payload's result is what its folder holds now (written by this writer,
        submitted ones included: they are waited for)."""
        self.flush()
        with self._lock:
            return bool(self._saved.get(str(payload["folder"]), None) == payload["metrics"])

    def saved_folders(self) -> list[str]:
        self.flush()
        with self._lock:
            return list(self._saved)

    def metrics_of(self, folder: str) -> Any:
        """The metrics document saved in ``folder`` by this writer, or None."""
        self.flush()
        with self._lock:
            return self._saved.get(folder)

    def failures_to_tell(self) -> list[str]:
        """The failures not yet returned by an earlier call (for the terminal, as they happen)."""
        with self._lock:
            new = self.failures[self._told :]
            self._told = len(self.failures)
        return new
