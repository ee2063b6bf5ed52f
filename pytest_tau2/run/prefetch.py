"""In-process concurrency: run the next scenarios' conversations while pytest reports this one.

pytest runs items one after another. With ``--tau2-concurrency N`` (N > 1) the first scenario
item of a process starts a background event loop and keeps up to N upcoming scenario runs in
flight on it; each item's fixture then just waits for its own result. LLM-bound sweeps spend
their time waiting on the network, so one process with N conversations in flight gets close
to the LLM-bound ideal without paying N interpreter starts and N litellm imports.

Only built-in participants are prefetched (they can be built without the item's fixtures);
an overridden ``tau2_agent``/``tau2_user``/``tau2_judge`` fixture runs sequentially as usual.
Under xdist each worker keeps N conversations in flight over the items queued on it
(plugin/xdist_scheduler.py reads that queue; the controller keeps it deep enough).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_tau2.environment.env import warm_up
from pytest_tau2.run.budget import BudgetReached, RunBudget
from pytest_tau2.run.seeding import gold_replay
from pytest_tau2.run.session import close_model_clients
from pytest_tau2.run.trial import Trial, parse_item_id
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.outcome import ScenarioOutcome
from pytest_tau2.settings import Settings

WARM_UP_AFTER_S = 0.05
"""When the first runs have sent their first requests, the loop prepares what their first tool calls
and their scoring will need: it waits for the model then anyway (:meth:`Prefetcher._warm_up`)."""


def expected_length(item_id: str, scenario_for: Callable[[str], Scenario], trials: int) -> int:
    """How long an item's conversation should be, for start orders: its scenario's gold actions
    (``item_id``: the scenario name, or ``<name>-t<k>`` with several trials). 0 for a scenario
    without gold or one that cannot be built: a broken scenario fails in its own item, not here."""
    scenario_name = parse_item_id(item_id, trials)[0]
    try:
        return len(scenario_for(scenario_name).gold_actions() or ())
    except Exception:
        return 0


@dataclass
class Prefetched:
    name: str
    trial: Trial
    """The item's trial, its participants built here: the item's built-in fixtures hand out these."""
    future: concurrent.futures.Future[ScenarioOutcome] = field(init=False)
    after: Any = None
    """What ``after_run`` made of the outcome on the loop thread (None: not made, or it failed)."""


class Prefetcher:
    """Keeps up to ``width`` scenario runs in flight on a background event loop.

    A free-slot pool: whenever a run finishes, the next scenario starts, so one long
    conversation never holds the others back (a fixed window over the item order would wait
    for it). ``names`` are the items' ids: the scenario name, or ``<name>-t<k>`` for trial k
    when the run has several trials per scenario (run/trials.py).

    Which scenario starts next: the one pytest is waiting for, if it has not started yet;
    otherwise the one expected to talk longest (most gold actions; ties and scenarios without
    gold keep session order). Longest first is the classic makespan heuristic: started last in
    session order, a long conversation would run on alone after every slot has emptied (the
    retail sweep at 32 in flight: 8.6 s of model time in session order, 8.2 s longest first,
    7.7 s the lower bound). No more than ``width`` runs are ever in flight: an item whose run
    has not started waits for the next free slot.
    """

    def __init__(
        self,
        names: list[str] | Callable[[], list[str]],
        width: int,
        settings: Settings,
        scenario_for: Callable[[str], Scenario],
        after_run: Callable[[ScenarioOutcome, Prefetched], Any] | None = None,
        budget: RunBudget | None = None,
    ) -> None:
        self.names = names
        """Every item id of the process in run order, or (xdist worker) a function giving the
        ids queued on this worker, next first."""
        self.budget = budget
        """``--tau2-budget`` (run/budget.py): asked before each start; a start it defers waits for a
        run to end, an item it refuses gets :class:`BudgetReached` (and is skipped)."""
        self.width = width
        self.ahead = max(4 * width, width + 64)
        """At most this many runs started and not yet taken (in flight, or finished and waiting for
        pytest to reach their items). Conversations that need no model (offline, replayed
        cassettes) finish faster than pytest reports them: unbounded, a 2,285-scenario telecom
        sweep at 32 in flight held every outcome at once (peak RSS 633 MB; 344 MB bounded). Model-bound
        retail sweeps stay below it (41 at 8 in flight, 77 at 32, 111 at 64)."""
        self.settings = settings
        self.scenario_for = scenario_for
        self.after_run = after_run
        """Called on the loop thread as each run ends, e.g. to build its result files there while
        pytest's thread reports other items; its return value is ``Prefetched.after``."""
        self._started: dict[str, Prefetched | BaseException] = {}
        self._done: set[str] = set()
        self._in_flight = 0
        self._order: list[str] | None = None  # a list ``names`` in start order, longest first
        self._next = 0  # index in ``_order`` of the next scenario to consider
        self._wanted: str | None = None  # the item pytest waits for, started at the next free slot
        self._expected: dict[str, int] = {}
        self._closing = False  # set by stop_starting(): the session is ending, start nothing more
        self._warmed = False
        self._first_wave: list[Trial] = []  # the runs started before the warm-up (:meth:`_warm_up`)
        self._refill_pending = False
        self._lock = threading.RLock()
        self._slot_freed = threading.Condition(self._lock)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="tau2-prefetch", daemon=True)
        self._thread.start()

    def take(self, name: str) -> Prefetched:
        """The run of ``name``: already started, started now in a free slot, or (every slot
        busy) started in the next slot that frees."""
        with self._lock:
            try:
                # A start the budget defers (too much in flight for now) waits for a run to end.
                while name not in self._done and (self._in_flight >= self.width or not self._start(name)):
                    self._wanted = name  # the next free slot is its
                    self._slot_freed.wait()
            finally:  # also when Ctrl-C ends the wait: no slot goes to an item nobody waits for
                self._wanted = None if self._wanted == name else self._wanted
            started = self._started.pop(name)
            self._fill()
            if not self._warmed and not self._loop.is_closed():
                self._warmed = True
                self._loop.call_soon_threadsafe(self._loop.call_later, WARM_UP_AFTER_S, self._warm_up)
        if isinstance(started, BaseException):
            raise started
        return started

    @property
    def in_flight(self) -> int:
        """Conversations running now (the live progress line shows it)."""
        return self._in_flight

    @property
    def lock(self) -> threading.RLock:
        """Held while runs start; hold it to change what the next runs may be."""
        return self._lock

    def _fill(self) -> None:
        if self._closing:
            return
        if self._wanted is not None and self._in_flight < self.width:
            if not self._start(self._wanted):
                return  # the budget defers it: nothing else starts before it
            self._wanted = None
        if callable(self.names):  # an xdist worker: the items queued on it, longest first
            try:
                queued = [name for name in self.names() if name not in self._done]
            except Exception:  # the queue could not be read: each item still starts when it is taken
                queued = []
            for name in sorted(queued, key=self._expected_length, reverse=True):
                if not self._room() or not self._start(name):
                    break
            return
        if self._order is None:
            self._order = sorted(self.names, key=self._expected_length, reverse=True)  # stable
        while self._room() and self._next < len(self._order):
            if not self._start(self._order[self._next]):
                break  # the budget defers it: tried again when a run ends
            self._next += 1

    def refill_soon(self) -> None:
        """More items were queued (an xdist worker's queue grows while its items run): let the
        loop start them in free slots, once for a batch of arrivals. Thread-safe."""
        with self._lock:
            if self._refill_pending or self._closing:
                return
            self._refill_pending = True
        try:
            self._loop.call_soon_threadsafe(self._refill)
        except RuntimeError:  # the loop is closed: the session is over
            pass

    def _refill(self) -> None:
        with self._lock:
            self._refill_pending = False
            self._fill()

    def _room(self) -> bool:
        return self._in_flight < self.width and len(self._started) < self.ahead

    def _expected_length(self, name: str) -> int:
        expected = self._expected.get(name)
        if expected is None:
            expected = self._expected[name] = expected_length(name, self.scenario_for, self.settings.trials)
        return expected

    def cancel(self, names: list[str]) -> None:
        """Forget runs that this process will not take (xdist stole their items): cancel them."""
        with self._lock:
            for name in names:
                # Not "done": a stolen item may come back to this worker, and then it starts anew.
                self._done.discard(name)
                started = self._started.pop(name, None)
                if isinstance(started, Prefetched):
                    started.future.cancel()

    def _finished(self, _: concurrent.futures.Future[ScenarioOutcome]) -> None:
        # Runs on the loop thread when a conversation ends: hand its slot to the next scenario.
        with self._lock:
            self._in_flight -= 1
            try:
                self._fill()
            finally:  # an item waiting for a slot must hear of it, whatever _fill ran into
                self._slot_freed.notify_all()

    def _start(self, name: str) -> bool:
        """Start ``name`` (or record why it cannot start); False: the budget defers it until a run ends."""
        if name in self._done:
            return True
        if self.budget is not None:
            admitted = self.budget.admit(name)
            if admitted is None:
                return False
            if not admitted:
                self._done.add(name)
                self._started[name] = BudgetReached(self.budget.reason())  # its item is skipped, naming the budget
                return True
        self._done.add(name)
        try:
            started = self._launch(name)
        except Exception as exc:  # not applicable, or a bad scenario: re-raised in that item's own fixture
            if self.budget is not None:
                self.budget.settle(name, 0.0)
            self._started[name] = exc
            return True
        self._in_flight += 1
        self._started[name] = started
        if not self._warmed:
            self._first_wave.append(started.trial)
        if self.budget is not None:  # before the slot is handed on (callbacks run in order); also when
            # cancelled before it began (then its coroutine never runs): what it spent is spent
            budget = self.budget
            started.future.add_done_callback(lambda _: budget.settle(name, started.trial.view.usage.spent()))
        started.future.add_done_callback(self._finished)
        return True

    def _warm_up(self) -> None:
        """On the loop, while the first runs wait for their first replies: import what checking a
        tool call needs, then replay the gold actions of those runs and, until one of them has its
        first reply, of the runs that start next, one per loop pass (each a millisecond or two; the
        first of a domain also encodes its pristine DB, ~30 ms for retail). Their scoring then finds
        the replays cached (run/seeding.py) instead of making them while other conversations wait
        for the loop. A replay that fails is left for that run's scoring to report."""
        warm_up()
        first, self._first_wave = self._first_wave, []
        upcoming = self._upcoming()

        def replied() -> bool:
            return any(trial.view.usage.any_calls() for trial in first)

        def replay(index: int) -> None:
            if self._closing:
                return
            if index < len(first):
                warm = first[index].warm_gold
            elif index - len(first) < len(upcoming) and not replied():
                warm = functools.partial(self._warm_gold, upcoming[index - len(first)])
            else:
                return
            try:
                warm()
            except Exception:  # the run's own scoring raises it again, in its item
                pass
            self._loop.call_soon(replay, index + 1)

        replay(0)

    def _upcoming(self) -> list[str]:
        """The runs not started yet, in the order they will start (none known on an xdist worker,
        whose queue grows as it goes)."""
        with self._lock:
            return [] if callable(self.names) or self._order is None else self._order[self._next :]

    def _warm_gold(self, name: str) -> None:
        gold_replay(self.scenario_for(parse_item_id(name, self.settings.trials)[0]), self.settings)

    def _launch(self, name: str) -> Prefetched:
        """Build ``name``'s trial and its built-in participants, and start its run on the loop."""
        scenario_name, number = parse_item_id(name, self.settings.trials)
        trial = Trial(self.scenario_for(scenario_name), self.settings, number)
        trial.agent, trial.user, trial.judge  # noqa: B018  (built now: one that cannot be fails its item here)
        prefetched = Prefetched(name, trial)
        coroutine = trial.run()
        prefetched.future = asyncio.run_coroutine_threadsafe(self._then_after(coroutine, prefetched), self._loop)
        return prefetched

    async def _then_after(self, run: Awaitable[ScenarioOutcome], prefetched: Prefetched) -> ScenarioOutcome:
        outcome = await run
        if self.after_run is not None:
            try:
                prefetched.after = self.after_run(outcome, prefetched)
            except Exception:  # the item does it again on its own thread and reports what went wrong
                prefetched.after = None
        return outcome

    def stop_starting(self) -> None:
        """The session is ending: no slot that frees from now on starts another run."""
        with self._lock:
            self._closing = True

    def unclaimed(self) -> list[Prefetched]:
        """Runs that ended well but whose items never took them: the session stopped early
        (Ctrl-C, ``-x``) while conversations further down the order had already finished."""
        with self._lock:
            started = [p for p in self._started.values() if isinstance(p, Prefetched)]
        return [p for p in started if p.future.done() and not p.future.cancelled() and p.future.exception() is None]

    def close(self) -> None:
        """Finish: cancel the runs no item will take, close the model clients on this loop, then
        stop the loop thread."""
        self.stop_starting()  # cancelling a run frees its slot: it must not start the next one
        try:
            asyncio.run_coroutine_threadsafe(self._wind_down(), self._loop).result(timeout=40)
        except TimeoutError:
            pass  # something on the loop would not end: its thread is a daemon, the process still exits
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
            if not self._thread.is_alive():
                self._loop.close()

    async def _wind_down(self) -> None:
        this = asyncio.current_task()
        rest = [task for task in asyncio.all_tasks() if task is not this]
        for task in rest:  # conversations of a session that stopped early: end them, not abandon them
            task.cancel()
        if rest:
            await asyncio.wait(rest, timeout=10)
        await close_model_clients(self.settings)
