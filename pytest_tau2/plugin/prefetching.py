"""The pytest side of ``--tau2-concurrency``: one Prefetcher per process (run/prefetch.py), made
by the run when collection has finished (plugin/run_state.py), fed from the session's items (an
xdist worker: from the items queued on it, xdist_scheduler.py), and wound down at the end of the
session; and the work a process does while its conversations talk (:class:`IdleWork`).

Read at every pytest start (the run holds an :class:`IdleWork` from then on): engine modules are
imported where they are used.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from pytest_tau2.plugin.keys import result_folder, scenario_name

if TYPE_CHECKING:
    from pytest_tau2.plugin.overrides import FixtureOverrides
    from pytest_tau2.plugin.run_report import RunReport
    from pytest_tau2.run import ScenarioOutcome
    from pytest_tau2.run.budget import RunBudget
    from pytest_tau2.run.prefetch import Prefetched, Prefetcher
    from pytest_tau2.scenario.base import Scenario
    from pytest_tau2.settings import Settings

IDLE_DELAY_S = 1.0
"""Idle-time work waits this long: in the first second the conversations start and need the CPU."""


def item_ids(
    items: Sequence[pytest.Item], settings: Settings, saved: dict[str, Any], overrides: FixtureOverrides
) -> list[str | None]:
    """``[i]``: the id to prefetch for ``items[i]``, None for an item that is not a scenario to run.

    Item ids: the scenario name, or ``<name>-t<k>`` for one of several trials. Not to prefetch:
    results ``--tau2-resume`` takes from the saved run (or that it refuses: item.py says why), and
    items whose participant fixtures a conftest overrides (no model call is spent on a
    conversation nobody uses)."""
    from pytest_tau2.run import participants
    from pytest_tau2.run.run_folder import resume_refusal

    agent, user = participants.describe_agent(settings), participants.describe_user(settings)

    def prefetchable(item: pytest.Item) -> str | None:
        if scenario_name(item) is None or overrides.overridden(item):
            return None
        folder = result_folder(item)
        if folder in saved or resume_refusal(saved, folder, agent, user, settings.resume) is not None:
            return None
        return folder

    return [prefetchable(item) for item in items]


def make_prefetcher(
    config: pytest.Config,
    settings: Settings,
    ids: list[str | None],
    scenario_for: Callable[[str], Scenario],
    after_run: Callable[[ScenarioOutcome, Prefetched], Any],
    budget: RunBudget | None,
    taking: threading.Event,
) -> Prefetcher | None:
    """The process's Prefetcher; None when an xdist worker's queue cannot be read (the worker
    then runs one scenario at a time).

    ``ids[i]`` is the id of ``session.items[i]`` to prefetch (:func:`item_ids`). Nothing starts
    before an item takes its run: the first take starts that item's conversation first, then
    fills the free slots; on an xdist worker the items queued before it wait for it too
    (``taking`` is set just before it)."""
    from pytest_tau2.plugin.xdist_scheduler import pending_source
    from pytest_tau2.run.prefetch import Prefetcher

    prefetcher = Prefetcher(
        [name for name in ids if name is not None],
        settings.concurrency,
        settings,
        scenario_for,
        after_run,
        budget=budget,
    )
    if hasattr(config, "workerinput"):

        def queued() -> None:
            if taking.is_set():
                prefetcher.refill_soon()

        with prefetcher.lock:  # an item queued meanwhile refills from this worker's queue, not the session
            pending = pending_source(config, ids, prefetcher.lock, prefetcher.cancel, queued)
            if pending is not None:
                prefetcher.names = pending
        if pending is None:
            prefetcher.close()
            return None
    return prefetcher


class IdleWork:
    """What a process prepares while it waits for its conversations: the report template, which
    the end of the run needs, so the last result is not kept waiting for it. Once per process."""

    def __init__(self, *, is_worker: bool) -> None:
        self.is_worker = is_worker
        """An xdist worker writes no report: nothing to prepare."""
        self.done = False
        self.timer: threading.Timer | None = None
        """The xdist controller's thread that does it."""

    def use_idle_time(self, running: concurrent.futures.Future[Any]) -> None:
        """While the first prefetched conversations talk, compile the template; not in the first
        second, when the conversations are starting and need the CPU."""
        if self.done or self.is_worker:
            return  # done already; an xdist worker writes no report
        if concurrent.futures.wait([running], timeout=IDLE_DELAY_S).done:
            return  # short conversations: try again while the next item waits
        self.done = True
        _compile_report_template()

    def use_controller_idle_time(self) -> None:
        """The xdist controller's main thread only waits for its workers' reports: a second into the
        run, a thread compiles the report template there (with its imports, ~0.1 s), which the end of
        the run otherwise waited for after the last worker finished."""
        if self.timer is not None:
            return
        timer = threading.Timer(IDLE_DELAY_S, _compile_report_template)
        timer.daemon = True
        self.timer = timer
        timer.start()

    def end_controller_idle_time(self) -> None:
        """Before the report is written: drop the idle-time work if it has not begun, else let it end."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer.join()


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


def finish_prefetching(
    session: pytest.Session, exitstatus: int | pytest.ExitCode, prefetcher: Prefetcher, report: RunReport
) -> None:
    """End of session: when the run stopped early (Ctrl-C, ``-x``), save the conversations that
    finished for items pytest never reached, so neither their model calls nor their results are
    lost; then cancel the rest and close."""
    from pytest_tau2.plugin.run_report import UNREPORTED_KEY

    prefetcher.stop_starting()
    stopped_early = exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldstop or session.shouldfail)
    if stopped_early:
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
