"""The pytest side of ``--tau2-concurrency``: one Prefetcher per process (run/prefetch.py), made by
the first scenario item that can use it, fed from the session's items (an xdist worker: from the
items queued on it, xdist_scheduler.py), and wound down at the end of the session.

item.py asks for the prefetcher; session.py calls :func:`finish_prefetching`.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_tau2.plugin.run_report import UNREPORTED_KEY, RunReport
from pytest_tau2.settings import Settings

if TYPE_CHECKING:
    from pytest_tau2.run import ScenarioOutcome
    from pytest_tau2.run.prefetch import Prefetched, Prefetcher
    from pytest_tau2.scenario.base import Scenario

PREFETCH_KEY = pytest.StashKey["Prefetcher"]()
WORKER_QUEUE_UNREADABLE = pytest.StashKey[bool]()
IDLE_WORK_DONE = pytest.StashKey[bool]()
CONTROLLER_IDLE_WORK = pytest.StashKey[threading.Timer]()
IDLE_DELAY_S = 1.0
"""Idle-time work waits this long: in the first second the conversations start and need the CPU."""


def prefetcher_for(
    request: pytest.FixtureRequest,
    settings: Settings,
    item_ids: Callable[[], list[str | None]],
    scenario_for: Callable[[str], Scenario],
    after_run: Callable[[ScenarioOutcome, Prefetched], Any],
) -> Prefetcher | None:
    """The process's Prefetcher, made on first use; None when an xdist worker's queue cannot be
    read (the worker then runs one scenario at a time).

    ``item_ids()[i]`` is the id of ``session.items[i]`` to prefetch, None for an item that is not
    a scenario to run."""
    config = request.config
    if WORKER_QUEUE_UNREADABLE in config.stash:
        return None
    prefetcher = config.stash.get(PREFETCH_KEY, None)
    if prefetcher is not None:
        return prefetcher
    from pytest_tau2.plugin.xdist_scheduler import pending_source
    from pytest_tau2.run.prefetch import Prefetcher

    ids = item_ids()
    from pytest_tau2.plugin.budgeting import budget_of

    prefetcher = Prefetcher(
        [name for name in ids if name is not None],
        settings.concurrency,
        settings,
        scenario_for,
        after_run,
        budget=budget_of(config),
    )
    if hasattr(config, "workerinput"):
        with prefetcher.lock:  # an item queued meanwhile refills from this worker's queue, not the session
            pending = pending_source(config, ids, prefetcher.lock, prefetcher.cancel, prefetcher.refill_soon)
            if pending is not None:
                prefetcher.names = pending
        if pending is None:
            config.stash[WORKER_QUEUE_UNREADABLE] = True
            prefetcher.close()
            return None
    config.stash[PREFETCH_KEY] = prefetcher
    return prefetcher


def use_idle_time(config: pytest.Config, running: concurrent.futures.Future[Any]) -> None:
    """While the first prefetched conversations talk, prepare what the end of the run needs
    (the report template), so the last result is not kept waiting for it. Not in the first
    second, when the conversations are starting and need the CPU."""
    if IDLE_WORK_DONE in config.stash or hasattr(config, "workerinput"):
        return  # done already; an xdist worker writes no report
    if concurrent.futures.wait([running], timeout=IDLE_DELAY_S).done:
        return  # short conversations: try again while the next item waits
    config.stash[IDLE_WORK_DONE] = True
    _compile_report_template()


def use_controller_idle_time(config: pytest.Config) -> None:
    """The xdist controller's main thread only waits for its workers' reports: a second into the
    run, a thread compiles the report template there (with its imports, ~0.1 s), which the end of
    the run otherwise waited for after the last worker finished."""
    if CONTROLLER_IDLE_WORK in config.stash:
        return
    timer = threading.Timer(IDLE_DELAY_S, _compile_report_template)
    timer.daemon = True
    config.stash[CONTROLLER_IDLE_WORK] = timer
    timer.start()


def end_controller_idle_time(config: pytest.Config) -> None:
    """Before the report is written: drop the idle-time work if it has not begun, else let it end."""
    timer = config.stash.get(CONTROLLER_IDLE_WORK, None)
    if timer is not None:
        timer.cancel()
        timer.join()


def _compile_report_template() -> None:
    try:
        from pytest_tau2.report.html.render import template

        template()
    except Exception:  # the report's own step at the end says what is wrong
        pass


def _answered(ticket: object) -> bool:
    """A save that has its answer (saved, or failed and already told): not to be tried again."""
    wait = getattr(ticket, "wait", None)
    return callable(wait) and bool(wait(0))


def stop_starting(config: pytest.Config, reason: str) -> None:
    """Stop starting conversations (a result could not be saved; any thread): the prefetcher
    starts none from now on, and pytest stops after the item it runs."""
    report = config.pluginmanager.get_plugin("tau2-run-report")
    session = getattr(report, "session", None)
    if session is not None and not session.shouldstop:
        session.shouldstop = reason
    prefetcher = config.stash.get(PREFETCH_KEY, None)
    if prefetcher is not None:
        prefetcher.stop_starting()


def finish_prefetching(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
    """End of session: when the run stopped early (Ctrl-C, ``-x``), save the conversations that
    finished for items pytest never reached, so neither their model calls nor their results are
    lost; then cancel the rest and close."""
    prefetcher = session.config.stash.get(PREFETCH_KEY, None)
    if prefetcher is None:
        return
    prefetcher.stop_starting()
    report = session.config.pluginmanager.get_plugin("tau2-run-report")
    stopped_early = exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldstop or session.shouldfail)
    if stopped_early and isinstance(report, RunReport):
        reached = set(report.started.values())  # their items report (or error) for themselves
        made = [run.after for run in prefetcher.unclaimed() if run.name not in reached]
        # Saved when they were made (item.py's saver); the rest travel here, as without a saver.
        unsaved = [m for m in made if not _answered(getattr(m, "ticket", None))]
        payloads: list[dict[str, Any]] = [
            p for m in unsaved if isinstance(p := getattr(getattr(m, "result", None), "payload", None), dict)
        ]
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: they travel to the controller, which owns the folder
            workeroutput[UNREPORTED_KEY] = payloads
        else:
            for payload in payloads:
                report.save_unreported(payload)
    prefetcher.close()
