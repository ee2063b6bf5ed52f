"""Live progress of a sweep: scenarios done / in flight / total, pass rate, cost, calls per second
and an ETA (docs/campaigns.md, "Live progress").

On a terminal the line sits at the end of pytest's current line and is redrawn in place: it is
erased (backspaces, blanks, backspaces) before pytest writes anything and drawn again after, so
pytest's dots, ``-v`` lines, percentages and xdist's lines stay exactly as they would be. It is
written to a duplicate of the terminal's file descriptor taken while pytest's capture is
suspended, so a line drawn while an item waits for its conversation (inside its setup, where
capture is on) reaches the terminal and never an item's captured output. Where stdout is no
terminal or ``CI`` is set, the same text is a plain line every ``--tau2-progress-interval``
seconds (default 30 under CI, none elsewhere); nothing under ``-q`` unless that option asks.

Counts come from the process that reports results (the xdist controller under ``-n``): done,
passed, cost and calls from the finished scenarios' records (plugin/run_report.py); in flight
from the prefetcher (run/prefetch.py), or under xdist what the workers can hold.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_tau2.plugin.keys import is_worker, item_id
from pytest_tau2.plugin.run_report import RunReport
from pytest_tau2.plugin.terminal import Terminal
from pytest_tau2.settings import Settings

if TYPE_CHECKING:
    from pytest_tau2.run.prefetch import Prefetcher

NAME = "tau2-progress"
REDRAW_S = 0.5
"""How often the line on a terminal is recomputed."""
CI_INTERVAL_S = 30.0
"""Seconds between plain lines where ``CI`` is set and no interval was given."""
MIN_WIDTH = 24
"""Columns the line needs at the end of pytest's current line; fewer: it waits for more room."""


def mode_of(settings: Settings, *, tty: bool, quiet: bool, environ: dict[str, str]) -> tuple[str | None, float]:
    """``("live", s)`` (one line redrawn in place), ``("lines", s)`` (a plain line every s) or
    ``(None, 0)``: the terminal's, -q's and CI's say, and --tau2-progress-interval's."""
    interval = settings.progress_interval
    ci = environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    if interval == 0:
        return None, 0.0
    if tty and not ci and not quiet:
        return "live", REDRAW_S
    if interval is not None:
        return "lines", interval
    if ci and not quiet:
        return "lines", CI_INTERVAL_S
    return None, 0.0


def progress_text(
    *, done: int, total: int, in_flight: int, passed: int, cost: float | None, calls: int, elapsed: float
) -> str:
    """``tau2: 40/114 done, 12 in flight | 35 passed (88%) | $0.4210 | 12.3 calls/s | ETA 1m20s``."""
    parts = [f"tau2: {done}/{total} done, {in_flight} in flight"]
    parts.append(f"{passed} passed ({passed / done:.0%})" if done else "0 passed")
    parts.append(f"${cost:.4f}" if cost is not None else "$ unpriced")
    parts.append(f"{calls / elapsed:.1f} calls/s" if elapsed > 0 else "0.0 calls/s")
    if done and total > done:
        parts.append(f"ETA {_duration(elapsed / done * (total - done))}")
    elif total and done >= total:
        parts.append(f"{_duration(elapsed)} elapsed")
    return " | ".join(parts)


def fitted(text: str, room: int) -> str:
    """`` `` + as many of the line's `` | ``-separated parts, from the first, as fit in ``room``
    columns ("" when not even the first does): a narrow terminal shows fewer parts, never a cut word."""
    parts = text.split(" | ")
    while parts and len(" " + " | ".join(parts)) > room:
        parts.pop()
    return " " + " | ".join(parts) if parts else ""


def _duration(seconds: float) -> str:
    whole = round(seconds)
    if whole >= 3600:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


class Progress:
    """The pytest plugin object that shows the line (registered on the reporting process only,
    once a scenario is selected; the run closes it as the session ends)."""

    def __init__(
        self, config: pytest.Config, report: RunReport, settings: Settings, prefetcher: Prefetcher | None
    ) -> None:
        self.config = config
        self.report = report
        self.settings = settings
        self.prefetcher = prefetcher
        """This process's conversations in flight (--tau2-concurrency without xdist)."""
        self.mode: str | None = None
        self.interval = 0.0
        self._lock = threading.RLock()
        self._fd: int | None = None
        self._shown = 0  # columns of the line now on the terminal (live mode)
        self._line_ended = False  # a plain line was the last thing written (lines mode)
        self._text = ""
        self._started: float | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._write: Callable[..., None] | None = None  # the terminal writer's own write

    # ---- pytest hooks ------------------------------------------------------------------------

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        # The first scenario starts: pytest's capture is suspended here, so fd 1 is the terminal.
        if self._started is None and item_id(nodeid) is not None:
            self._start()

    # ---- the line ------------------------------------------------------------------------------

    def _start(self) -> None:
        # Decided here, not at configure: during collection pytest's capture stands in for stdout.
        self._started = time.monotonic()
        writer = self.config.get_terminal_writer()
        try:
            fd = sys.stdout.fileno()
            tty = os.isatty(fd)
        except (OSError, ValueError, AttributeError):  # no descriptor to write to: no progress
            return
        quiet = self.config.option.verbose < 0
        self.mode, self.interval = mode_of(self.settings, tty=tty, quiet=quiet, environ=dict(os.environ))
        if self.mode is None:
            return
        self._fd = os.dup(fd)
        original = writer.write
        self._write = original

        def write(msg: str, **markup: Any) -> None:
            with self._lock:
                self._erase()
                self._line_ended = False
                original(msg, **markup)
                if self.mode == "live" and self._text:
                    self._draw()

        setattr(writer, "write", write)  # noqa: B010  (an instance attribute over the method)
        self._thread = threading.Thread(target=self._tick, name="tau2-progress", daemon=True)
        self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                text = self.snapshot()
            except Exception:  # counts read while another thread changes them: try again next tick
                continue
            with self._lock:
                if self._stop.is_set():
                    return
                self._text = text
                if self.mode == "live":
                    self._erase()
                    self._draw()
                else:
                    self._line(text)

    def snapshot(self) -> str:
        report = self.report
        records = list(report.results.values())
        done = len(records) + len(report.errors)
        passed = sum(1 for r in records if r.is_successful)
        costs: list[float] = []
        calls = 0
        for record in records:
            sides = {k: v for k, v in record.token_usage.items() if k != "total"}
            calls += sum(u.calls for u in sides.values())
            costs += [float(u.cost_usd) for u in sides.values() if u.calls and u.cost_usd is not None]
        total = max(report.selected, done)
        elapsed = time.monotonic() - (self._started or time.monotonic())
        return progress_text(
            done=done,
            total=total,
            in_flight=self._in_flight(done, total),
            passed=passed,
            cost=sum(costs) if costs else None,
            calls=calls,
            elapsed=elapsed,
        )

    def _in_flight(self, done: int, total: int) -> int:
        left = max(0, total - done)
        prefetcher = self.prefetcher
        if prefetcher is not None:
            return min(left, prefetcher.in_flight)
        workers = getattr(self.config.option, "numprocesses", None)
        if isinstance(workers, int) and workers > 0:  # xdist: what the workers hold, at most what is left
            return min(left, workers * self.settings.concurrency)
        return min(left, max(0, len(self.report.started) - done))

    def _room(self) -> int:
        writer = self.config.get_terminal_writer()
        return int(writer.fullwidth) - int(writer.width_of_current_line) - 2

    def _draw(self) -> None:
        # under the lock; the line follows pytest's text: flush that first
        room = self._room()
        if self._fd is None or room < MIN_WIDTH:
            return
        text = fitted(self._text, room)
        if not text:
            return
        self.config.get_terminal_writer().flush()
        self._raw(text)
        self._shown = len(text)

    def _erase(self) -> None:
        if self._shown:
            width, self._shown = self._shown, 0
            self._raw("\b" * width + " " * width + "\b" * width)

    def _line(self, text: str) -> None:
        # a plain line (not a terminal): on a line of its own, pytest's current line left as it was
        writer = self.config.get_terminal_writer()
        writer.flush()
        mid_line = writer.width_of_current_line and not self._line_ended
        self._raw(("\n" if mid_line else "") + text + "\n")
        self._line_ended = True

    def _raw(self, text: str) -> None:
        if self._fd is None:
            return
        try:
            os.write(self._fd, text.encode("ascii", "replace"))
        except OSError:  # the terminal went away: no more progress
            self._fd = None

    def close(self) -> None:
        """End of session: stop the ticks, erase the line, give the terminal writer its own write."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            self._erase()
            if self._write is not None:
                writer = self.config.get_terminal_writer()
                if "write" in vars(writer):
                    delattr(writer, "write")
                self._write = None
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def install(
    config: pytest.Config, report: RunReport, settings: Settings, terminal: Terminal, prefetcher: Prefetcher | None
) -> Progress | None:
    """Register the progress line on the process that reports results (whether the terminal, -q,
    CI and --tau2-progress-interval call for one is decided when the first scenario starts)."""
    if terminal.reporter is None or is_worker(config) or settings.progress_interval == 0:
        return None
    progress = Progress(config, report, settings, prefetcher)
    config.pluginmanager.register(progress, NAME)
    return progress
