"""The run in one process: ONE object, :class:`Tau2Run`, on ``config.stash[RUN_KEY]``, built in
phases (docs/architecture.md, "The run object"):

- **made** at every pytest start (the entry point's ``pytest_configure``): nothing resolved and no
  engine module imported. It knows whether the adapter woke up (plugin/activation.py), the
  session, pytest's terminal reporter and, with xdist, the links to the workers;
- **configure** (:meth:`Tau2Run.configure`), once a scenario appeared: the settings (resolved
  here, or a worker's from its controller), the catalog, ``--tau2-resume``'s folder and saved
  results, the run report and where results are saved (the folder's writer, or a worker's link to
  its controller), the signal handlers, and the hook objects, each given what it reads;
- **scenarios selected** (:meth:`Tau2Run.scenarios_selected`), once collection selected a scenario
  item (an xdist controller: once a worker reports one): the results folder checked and locked,
  JUnit's writes guarded, the model clients' libraries imported; where scenarios run here, this
  process's budget with the estimate of each conversation, and the prefetcher; the progress line;
- **finish**: before JUnit is written (:meth:`Tau2Run.finish_started`) the progress line closed,
  background conversations wound down and the gates applied; at the very end
  (:meth:`Tau2Run.finish`) the run-level files and the summary, to which the budget, the gates
  and the estimate contribute sections (run_report.SummarySection).

An item's setup asks the run for its trial (:meth:`Tau2Run.trial_for`). Hook objects get what
they read from the run as constructor arguments; none looks another up by name.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_tau2.plugin.keys import (
    is_controller_of_workers,
    is_worker,
    result_folder,
    runs_scenarios,
    scenario_name,
)
from pytest_tau2.plugin.overrides import FixtureOverrides
from pytest_tau2.plugin.prefetching import IdleWork
from pytest_tau2.plugin.terminal import Terminal

if TYPE_CHECKING:  # read at every pytest start: the phases import what they build
    from pytest_tau2.plugin.estimating import Estimating
    from pytest_tau2.plugin.gate import RunGate
    from pytest_tau2.plugin.progress import Progress
    from pytest_tau2.plugin.run_report import RunReport
    from pytest_tau2.plugin.selection_hint import SelectionHints
    from pytest_tau2.plugin.signals import SignalStop
    from pytest_tau2.plugin.xdist_link import ControllerLinks
    from pytest_tau2.report.saving import Saver, SaveTicket
    from pytest_tau2.run.budget import RunBudget
    from pytest_tau2.run.catalog import Catalog
    from pytest_tau2.run.prefetch import Prefetched, Prefetcher
    from pytest_tau2.run.run_folder import RunFolder
    from pytest_tau2.run.trial import Trial, TrialResult
    from pytest_tau2.settings import Settings

RUN_KEY = pytest.StashKey["Tau2Run"]()
"""The run's one place in pytest's config."""
REPORT_NAME = "tau2-run-report"


def run_of(config: pytest.Config) -> Tau2Run:
    return config.stash[RUN_KEY]


@dataclass
class ItemTrial:
    """The item's trial, and its run when the prefetcher started it (None: run here)."""

    trial: Trial
    prefetched: Prefetched | None


@dataclass
class Made:
    """A trial's result, and the answer to its save (None: it travels in the item's report)."""

    result: TrialResult
    ticket: SaveTicket | None


class Tau2Run:
    """pytest-tau2's run in this process (the module says what each phase builds)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.terminal = Terminal()
        """pytest's terminal reporter (registered by the entry point)."""
        self.idle = IdleWork(is_worker=is_worker(config))
        self.overrides = FixtureOverrides()
        """Which items have participant fixtures of their own (registered at configure)."""
        self.active = False
        """The adapter woke up (plugin/activation.py)."""
        self.pending: pytest.UsageError | None = None
        """A usage error found while waking up in the middle of collection, raised once collection ends."""
        self.session: pytest.Session | None = None
        self.links: ControllerLinks | None = None
        """The controller's ends of the workers' result links (with xdist: xdist_hooks.py makes them)."""
        self.hints: SelectionHints | None = None
        # configure
        self._settings: Settings | None = None
        self._catalog: Catalog | None = None
        self._report: RunReport | None = None
        self.saved: dict[str, dict[str, Any]] = {}
        """``--tau2-resume``: the complete saved results by result folder, as record documents (plain
        values: they travel to xdist workers); read through the record where they stand in for a run."""
        self.folder_notes: list[str] = []
        """What the results folder's check found worth telling (a model server that moved since the saved run)."""
        self.saver: Saver | None = None
        """Where this process saves each result as soon as it is made: the results folder's writer,
        or (an xdist worker) its link to the controller. None: results travel in reports."""
        self.signals: SignalStop | None = None
        self.gate: RunGate | None = None
        self.estimating: Estimating | None = None
        self._preload: threading.Thread | None = None
        """The model client's import, started when the run was configured (run/session.py)."""
        # scenarios selected
        self.selected = False
        """A scenario item was selected in this process (or reported by a worker, on an xdist controller)."""
        self.budget: RunBudget | None = None
        """This process's share of ``--tau2-budget``."""
        self.prefetcher: Prefetcher | None = None
        self._taking = threading.Event()  # an item took its run from the prefetcher
        self.progress: Progress | None = None

    # ---- what the configure phase made --------------------------------------------------------

    @property
    def configured(self) -> bool:
        return self._catalog is not None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            raise RuntimeError("pytest-tau2: the run's settings are read before they are resolved")
        return self._settings

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            raise RuntimeError("pytest-tau2: the run's catalog is read before the adapter woke up")
        return self._catalog

    @property
    def report(self) -> RunReport:
        if self._report is None:
            raise RuntimeError("pytest-tau2: the run report is read before the adapter woke up")
        return self._report

    def resolve_settings(self) -> Settings:
        """The settings of this invocation, resolved once; an xdist controller resolves (and checks)
        them before it wakes up, since they travel to every worker."""
        if self._settings is None:
            from pytest_tau2.plugin import invocation

            self._settings = invocation.settings_of(self.config)
        return self._settings

    def session_started(self, session: pytest.Session) -> None:
        self.session = session
        if self._report is not None:
            self._report.session = session

    # ---- configure -------------------------------------------------------------------------------

    def configure(self) -> None:
        """Settings, catalog, saved results, the run report, where results are saved, and the hook
        objects; raises pytest.UsageError for a bad option or a results folder that cannot be used."""
        from pytest_tau2.plugin import worker_settings
        from pytest_tau2.plugin.run_report import RunReport
        from pytest_tau2.run.catalog import Catalog

        config = self.config
        workerinput = getattr(config, "workerinput", None)
        if workerinput is not None and "tau2_settings" in workerinput:
            relative = workerinput.get("tau2_root_relative") or {}
            workers = int(workerinput.get("workercount") or 1)  # each worker its share of the provider limits
            self._settings = worker_settings.receive(workerinput["tau2_settings"], relative, config.rootpath, workers)
        settings = self.resolve_settings()
        workerid = (workerinput or {}).get("workerid")
        wrap = (lambda exc: worker_settings.on_worker(exc, workerid)) if workerid else None
        self._catalog = Catalog(settings, wrap_error=wrap, args=[str(a) for a in config.args])
        folder = None
        if workerinput is not None:
            self.saved = dict(workerinput.get("tau2_saved") or {})
        elif settings.resume is not None and runs_scenarios(config):
            folder = self._open_folder()  # its saved results travel to the workers as they start
        self._report = RunReport(
            Path(settings.results_dir),
            is_worker=is_worker(config),
            terminal=self.terminal,
            folder=folder,
            ci_level=settings.ci_level,
        )
        self._report.session = self.session
        self._register_hooks()
        self._link_results()
        if runs_scenarios(config) and not is_controller_of_workers(config):
            from pytest_tau2.run.session import start_background_preload

            self._preload = start_background_preload(settings)

    def _register_hooks(self) -> None:
        """The hook objects, each given what it reads (registered in this order: pytest calls hooks
        of one priority latest registered first, and ShownText masks a report before the run
        report reads it, the shard selection keeps its items before the estimate counts them)."""
        from pytest_tau2.plugin.budgeting import BudgetSection
        from pytest_tau2.plugin.gate import RunGate
        from pytest_tau2.plugin.reporting import JUnitShape, SubResultTerminal
        from pytest_tau2.plugin.selection import ShardSelection
        from pytest_tau2.plugin.selection_hint import HINTS_NAME, SelectionHints, XdistSelectionHints
        from pytest_tau2.plugin.shown import ShownText
        from pytest_tau2.settings.shards import parse_shard

        config, settings, report = self.config, self.settings, self.report
        register = config.pluginmanager.register
        register(report, REPORT_NAME)
        if not is_worker(config):
            self.gate = RunGate(report, settings)
            register(self.gate, "tau2-run-gate")
            report.add_section(self.gate)  # the baseline comparison and the gates
            budget = BudgetSection(report)
            register(budget, "tau2-budget-section")
            report.add_section(budget)  # "Budget reached after N of M scenarios"
        register(ShownText(settings), "tau2-shown-text")  # masked, control characters escaped
        new_hints = self.hints is None  # an xdist controller has them from the start
        if self.hints is None:
            kind = XdistSelectionHints if config.pluginmanager.hasplugin("xdist") else SelectionHints
            self.hints = kind(scenario_name)
        if settings.estimate or settings.estimate_file:
            from pytest_tau2.plugin.estimating import NAME, Estimating

            self.estimating = Estimating(config, settings, self.catalog, report, self.terminal, self.hints)
            register(self.estimating, NAME)  # --tau2-estimate; estimate vs actual
            report.add_section(self.estimating)
        config.pluginmanager.import_plugin("pytest_tau2.plugin.item")  # the fixtures and the test function
        register(self.overrides, "tau2-fixture-overrides")
        # what reporting tools see of a scenario: its location, sub-result lines and counts, JUnit's shape
        config.pluginmanager.import_plugin("pytest_tau2.plugin.reporting")
        if not is_worker(config):
            register(SubResultTerminal(config, self.terminal), "tau2-subresults")
            register(JUnitShape(config, settings, self.terminal), "tau2-junit-shape")
        if new_hints:
            register(self.hints, HINTS_NAME)  # a -k that selects nothing
        if settings.shard is not None:
            register(ShardSelection(parse_shard(settings.shard)), "tau2-shard")

    def _link_results(self) -> None:
        """Results saved as soon as they are made (docs/runs.md): by this process when it owns the
        folder, else (an xdist worker) through its link to the controller; SIGTERM / SIGHUP stop the
        run as Ctrl-C does, and a result that cannot be saved stops every process starting more."""
        from pytest_tau2.plugin.signals import SignalStop

        config, report = self.config, self.report
        stop = SignalStop()
        if runs_scenarios(config):
            stop.install()
            self.signals = stop
        if getattr(config, "workerinput", None) is None:
            self.saver = report.writer
            report.on_stop.append(self.stop_starting)
        else:
            from pytest_tau2.plugin.xdist_link import worker_link

            self.saver = worker_link(config, self.stop_starting)
        links = self.links
        if links is not None:
            links.writer = report.writer  # the controller writes what its workers send
            report.on_stop.append(lambda reason: links.tell(("stop", reason)))
            stop.on_first = lambda name: links.tell(("interrupt", name))

    def _open_folder(self) -> RunFolder:
        """The process that owns the results folder checks and locks it before any scenario runs."""
        from pytest_tau2.run.run_folder import RunFolder, RunFolderError

        settings = self.settings
        folder = RunFolder(Path(settings.results_dir), settings)
        try:
            folder.open()
        except RunFolderError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.saved = folder.saved
        self.folder_notes = folder.notes  # the header shows them
        return folder

    def stop_starting(self, reason: str) -> None:
        """Stop starting conversations (a result could not be saved; any thread): the prefetcher
        starts none from now on, and pytest stops after the item it runs."""
        session = self.session
        if session is not None and not session.shouldstop:
            session.shouldstop = reason
        if self.prefetcher is not None:
            self.prefetcher.stop_starting()

    # ---- scenarios selected ----------------------------------------------------------------------

    def collection_finished(self, session: pytest.Session) -> None:
        """Success signals resolved for the selected scenarios; then, if any is left, the folder.

        pytest calls this hook in a ``finally``: also when collection is failing (a node id not found,
        a usage error in pytest_collection_modifyitems); that run runs nothing, so it opens nothing."""
        if sys.exc_info()[1] is not None:
            return
        from pytest_tau2.plugin.selection import resolve_signals

        resolve_signals(session, self.catalog)
        self.report.selected = len(session.items)
        sharded = self.settings.shard is not None  # an empty shard still leaves its folder to merge
        if sharded or any(scenario_name(item) is not None for item in session.items):
            self.scenarios_selected()

    def scenarios_selected(self) -> None:
        """A scenario item will run here (or on this controller's workers): open the results folder
        (not for --collect-only and the like, not on a worker), import the model clients'
        libraries before the first one's clock starts, make what runs conversations here. Once."""
        if self.selected:
            return
        self.selected = True
        from pytest_tau2.plugin.session import guard_junit_writes

        config, report = self.config, self.report
        if report.folder is None and not is_worker(config) and runs_scenarios(config):
            report.folder = self._open_folder()
        guard_junit_writes(config, report)
        if runs_scenarios(config) and not is_controller_of_workers(config):
            from pytest_tau2.run.session import preload_model_clients, wants_preload

            if self._preload is not None:  # started when the run was configured
                self._preload.join()
            elif wants_preload(self.settings):
                preload_model_clients(self.settings)
            self._prepare_conversations()
        if self.progress is None:
            from pytest_tau2.plugin import progress

            self.progress = progress.install(config, report, self.settings, self.terminal, self.prefetcher)

    def _prepare_conversations(self) -> None:
        """This process's share of the budget, and (``--tau2-concurrency``) the prefetcher over the
        selected items, when one of them is a conversation to run (not a saved result)."""
        from pytest_tau2.plugin import budgeting, prefetching

        config, settings = self.config, self.settings
        workers = int((getattr(config, "workerinput", None) or {}).get("workercount", 1) or 1)
        self.budget = budgeting.share(settings, workers, self.catalog)
        items = self.session.items if self.session is not None else []
        if settings.concurrency <= 1:
            return
        ids = prefetching.item_ids(items, settings, self.saved, self.overrides)
        selected = [result_folder(item) for item in items if scenario_name(item) is not None]
        if all(folder in self.saved for folder in selected):
            return  # every scenario is a saved result: nothing to prefetch
        self.prefetcher = prefetching.make_prefetcher(
            config,
            settings,
            ids,
            self.catalog.instance,
            after_run=lambda outcome, p: self.made(p.trial.result(outcome, p.trial.agent, p.trial.user)),
            budget=self.budget,
            taking=self._taking,
        )

    # ---- the items -------------------------------------------------------------------------------

    def trial_for(self, node: pytest.Item, name: str, number: int, settings: Settings) -> ItemTrial:
        """The item's trial, built once: taken from the prefetcher when it runs this item, else
        built here. Raises what building it raised (item.py shows it as the item's failure or skip)."""
        from pytest_tau2.run.trial import Trial

        folder = result_folder(node)
        prefetcher = None if folder in self.saved else self.prefetcher
        if prefetcher is not None and not self.overrides.overridden(node):
            self._taking.set()
            taken = prefetcher.take(folder)
            return ItemTrial(taken.trial, taken)
        scenario = self.catalog.instance(name)
        return ItemTrial(Trial(scenario, settings, number), None)

    def made(self, result: TrialResult) -> Made:
        """Hand the result to be saved as soon as it is made (on whichever thread made it): a
        conversation paid for is on disk whatever order pytest reports items in."""
        saver = self.saver
        return Made(result, saver.submit(result.payload) if saver is not None else None)

    def header_lines(self) -> list[str]:
        """The ``tau2:`` header lines (the settings, fixtures overridden, the folder's notes)."""
        from pytest_tau2.run.session import header_lines

        fixtures = {name: [self._shown_path(f) for f in files] for name, files in self.overrides.defined.items()}
        return header_lines(self.settings, fixtures=fixtures, notes=self.folder_notes)

    def _shown_path(self, file: str) -> str:
        try:
            return Path(file).resolve().relative_to(self.config.rootpath).as_posix()
        except ValueError:
            return file

    # ---- finish ----------------------------------------------------------------------------------

    def finish_started(self, session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
        """The session ends, before JUnit is written: the progress line erased, a signal from now
        on noted (it would cut the run's files short), background conversations wound down,
        idle-time work ended, the gates applied (JUnit's suite properties, the exit status)."""
        if self.progress is not None:
            self.progress.close()
        if self.signals is not None:
            self.signals.finishing()
        if self.prefetcher is not None:
            from pytest_tau2.plugin.prefetching import finish_prefetching

            finish_prefetching(session, exitstatus, self.prefetcher, self.report)
        self.idle.end_controller_idle_time()
        if self.gate is not None:
            self.gate.apply(session)
        if self.estimating is not None:
            self.estimating.finish(session)

    def finish(self, session: pytest.Session) -> None:
        """The very end of the session: the run's files and the summary's text."""
        self.report.write_files(session)

    def unconfigure(self) -> None:
        """The results folder's lock removed, the signal handlers given back."""
        if self._report is not None:
            self._report.close()
        if self.signals is not None:
            self.signals.uninstall()
