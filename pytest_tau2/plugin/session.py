"""The run's life in one process, from the moment a scenario appeared (plugin/activation.py):
configure (settings, catalog, the adapter's other plugin objects registered; ``--tau2-resume``'s
folder checked, locked and read), scenarios selected (the results folder checked and locked, the
header, the libraries a scenario needs imported), session
end (background conversations wound down, idle-time work ended)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_tau2.plugin import compat_pytest, invocation, progress, worker_settings
from pytest_tau2.plugin.gate import RunGate
from pytest_tau2.plugin.item import SAVER_KEY
from pytest_tau2.plugin.keys import (
    CATALOG_KEY,
    FOLDER_NOTES_KEY,
    SAVED_KEY,
    SETTINGS_KEY,
    is_controller_of_workers,
    is_worker,
    scenario_name,
)
from pytest_tau2.plugin.prefetching import end_controller_idle_time, finish_prefetching, stop_starting
from pytest_tau2.plugin.run_report import RunReport
from pytest_tau2.plugin.selection import ShardSelection, resolve_signals
from pytest_tau2.plugin.selection_hint import HINTS_NAME, SelectionHints, XdistSelectionHints
from pytest_tau2.plugin.shown import ShownText
from pytest_tau2.plugin.signals import SignalStop
from pytest_tau2.report.files import describe_os_error
from pytest_tau2.run.catalog import Catalog
from pytest_tau2.run.run_folder import RunFolder, RunFolderError
from pytest_tau2.run.session import header_lines, preload_model_clients, wants_preload
from pytest_tau2.settings.shards import parse_shard

SELECTED_KEY = pytest.StashKey[bool]()
"""A scenario item was selected in this process (or reported by a worker, on an xdist controller)."""
REPORT_NAME = "tau2-run-report"
SIGNALS_KEY = pytest.StashKey[SignalStop]()


def configure(config: pytest.Config) -> None:
    """Settings, catalog and the adapter's plugin objects; raises pytest.UsageError for a bad option."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and "tau2_settings" in workerinput:
        relative = workerinput.get("tau2_root_relative") or {}
        workers = int(workerinput.get("workercount") or 1)  # each worker its share of the provider limits
        config.stash[SETTINGS_KEY] = worker_settings.receive(
            workerinput["tau2_settings"], relative, config.rootpath, workers
        )
    elif SETTINGS_KEY not in config.stash:  # an xdist controller resolved them for its workers already
        config.stash[SETTINGS_KEY] = invocation.settings_of(config)
    settings = config.stash[SETTINGS_KEY]
    workerid = (workerinput or {}).get("workerid")
    wrap = (lambda exc: worker_settings.on_worker(exc, workerid)) if workerid else None
    config.stash[CATALOG_KEY] = Catalog(settings, wrap_error=wrap)
    folder = None
    if workerinput is not None:
        config.stash[SAVED_KEY] = dict(workerinput.get("tau2_saved") or {})
    elif settings.resume is not None and _runs_scenarios(config):
        folder = _open_folder(config)  # its saved results travel to the workers as they start
    report = RunReport(
        Path(settings.results_dir), is_worker=is_worker(config), folder=folder, ci_level=settings.ci_level
    )
    config.pluginmanager.register(report, REPORT_NAME)
    if not is_worker(config):
        config.pluginmanager.register(RunGate(report, settings), "tau2-run-gate")
        progress.install(config, report, settings)  # the live progress line (or CI's plain lines)
    config.pluginmanager.register(ShownText(settings), "tau2-shown-text")  # masked, control characters escaped
    if settings.estimate or settings.estimate_file:
        from pytest_tau2.plugin.estimating import NAME, Estimating

        config.pluginmanager.register(Estimating(config), NAME)  # --tau2-estimate; estimate vs actual
    _link_results(config, report)
    config.pluginmanager.import_plugin("pytest_tau2.plugin.item")  # the fixtures and the test function
    # what reporting tools see of a scenario: its location, sub-result lines and counts, JUnit's shape
    config.pluginmanager.import_plugin("pytest_tau2.plugin.reporting")
    hints = XdistSelectionHints if config.pluginmanager.hasplugin("xdist") else SelectionHints
    if not config.pluginmanager.has_plugin(HINTS_NAME):  # an xdist controller has it from the start
        config.pluginmanager.register(hints(scenario_name), HINTS_NAME)  # a -k that selects nothing
    if settings.shard is not None:
        config.pluginmanager.register(ShardSelection(parse_shard(settings.shard)), "tau2-shard")


def _link_results(config: pytest.Config, report: RunReport) -> None:
    """Results saved as soon as they are made (docs/runs.md): by this process when it owns the
    folder, else (an xdist worker) through its link to the controller; SIGTERM / SIGHUP stop the
    run as Ctrl-C does, and a result that cannot be saved stops every process starting more."""
    stop = SignalStop()
    if _runs_scenarios(config):
        stop.install()
        config.stash[SIGNALS_KEY] = stop
    if getattr(config, "workerinput", None) is None:
        config.stash[SAVER_KEY] = report.writer
        report.on_stop.append(lambda reason: stop_starting(config, reason))
    else:
        from pytest_tau2.plugin.xdist_link import worker_link

        link = worker_link(config, lambda reason: stop_starting(config, reason))
        if link is not None:
            config.stash[SAVER_KEY] = link
    hooks = config.pluginmanager.get_plugin("tau2-xdist")  # registered at configure where xdist is loaded
    links = getattr(hooks, "links", None)
    if links is not None:
        links.writer = report.writer  # the controller writes what its workers send
        report.on_stop.append(lambda reason: links.tell(("stop", reason)))
        stop.on_first = lambda name: links.tell(("interrupt", name))


def session_started(session: pytest.Session) -> None:
    """Woken during collection: what the adapter's pytest_sessionstart would have done."""
    report = session.config.pluginmanager.get_plugin(REPORT_NAME)
    if isinstance(report, RunReport):
        report.pytest_sessionstart(session)


def _open_folder(config: pytest.Config) -> RunFolder:
    """The process that owns the results folder checks and locks it before any scenario runs."""
    settings = config.stash[SETTINGS_KEY]
    folder = RunFolder(Path(settings.results_dir), settings)
    try:
        folder.open()
    except RunFolderError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[SAVED_KEY] = folder.saved
    config.stash[FOLDER_NOTES_KEY] = folder.notes  # the header shows them
    return folder


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Success signals resolved for the selected scenarios; then, if any is left, the folder.

    pytest calls this hook in a ``finally``: also when collection is failing (a node id not found,
    a usage error in pytest_collection_modifyitems); that run runs nothing, so it opens nothing."""
    if sys.exc_info()[1] is not None:
        return
    resolve_signals(session)
    sharded = session.config.stash[SETTINGS_KEY].shard is not None  # an empty shard still leaves its folder to merge
    if sharded or any(scenario_name(item) is not None for item in session.items):
        scenarios_selected(session.config)


def scenarios_selected(config: pytest.Config) -> None:
    """A scenario item will run here (or on this controller's workers): open the results folder
    (not for --collect-only and the like, not on a worker) and import the model clients'
    libraries before the first one's clock starts. Once."""
    if config.stash.get(SELECTED_KEY, False):
        return
    config.stash[SELECTED_KEY] = True
    report = config.pluginmanager.get_plugin(REPORT_NAME)
    if isinstance(report, RunReport) and report.folder is None and not is_worker(config) and _runs_scenarios(config):
        report.folder = _open_folder(config)
    _guard_junit_writes(config)
    if _runs_scenarios(config) and not is_controller_of_workers(config):
        settings = config.stash[SETTINGS_KEY]
        if wants_preload(settings):
            preload_model_clients(settings)


def pytest_report_collectionfinish(config: pytest.Config, items: list[pytest.Item]) -> list[str]:
    """The ``tau2:`` header lines, after "collected N items", when a scenario was selected."""
    quiet = config.option.verbose < 0 or getattr(config.option, "no_header", False)  # as pytest's own header
    return header(config) if config.stash.get(SELECTED_KEY, False) and not quiet else []


def header(config: pytest.Config) -> list[str]:
    from pytest_tau2.plugin.item import OVERRIDES_KEY

    overrides = config.stash.get(OVERRIDES_KEY, None)
    defined = overrides.defined if overrides is not None else {}
    fixtures = {name: [_shown_path(config, f) for f in files] for name, files in defined.items()}
    notes: list[str] = config.stash.get(FOLDER_NOTES_KEY, [])
    return header_lines(config.stash[SETTINGS_KEY], fixtures=fixtures, notes=notes)


def _shown_path(config: pytest.Config, file: str) -> str:
    try:
        return Path(file).resolve().relative_to(config.rootpath).as_posix()
    except ValueError:
        return file


def _runs_scenarios(config: pytest.Config) -> bool:
    """False for invocations that only list or explain (--collect-only, --setup-plan, --help, --fixtures, --markers)."""
    option = config.option
    names = ("collectonly", "setupplan", "help", "showfixtures", "markers")
    return not any(getattr(option, name, False) for name in names)


def _guard_junit_writes(config: pytest.Config) -> None:
    """An unwritable JUnit file (``/dev/full``, a full disk) is one line at the end, not a raw
    OSError that keeps every later end-of-session hook, the results folder's files among them,
    from running (plugin/compat_pytest.py wraps pytest's writer)."""

    def unwritten(what: str, exc: OSError) -> None:
        report = config.pluginmanager.get_plugin(REPORT_NAME)
        if isinstance(report, RunReport):
            report.file_failed(what, f"{type(exc).__name__}: {describe_os_error(exc)}", required=True)

    compat_pytest.guard_junit_writes(config, unwritten)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
    stop = session.config.stash.get(SIGNALS_KEY, None)
    if stop is not None:
        stop.finishing()  # a signal now would cut the run-level files short
    finish_prefetching(session, exitstatus)
    end_controller_idle_time(session.config)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    stop = config.stash.get(SIGNALS_KEY, None)
    if stop is not None:
        stop.uninstall()
