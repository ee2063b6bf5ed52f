"""The run's life in one process: configure (settings, catalog, results folder checked and locked,
the adapter's other plugin objects registered), session start (the model clients' libraries
imported), session end (background conversations wound
down, idle-time work ended, the garbage collector's policy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tau2.plugin import invocation, worker_settings
from pytest_tau2.plugin.gate import RunGate
from pytest_tau2.plugin.gc_policy import freeze_at_session_end, session_configured
from pytest_tau2.plugin.keys import (
    CATALOG_KEY,
    FOLDER_NOTES_KEY,
    SAVED_KEY,
    SETTINGS_KEY,
    is_controller_of_workers,
    is_worker,
    scenario_name,
)
from pytest_tau2.plugin.options import add_markers
from pytest_tau2.plugin.prefetching import end_controller_idle_time, finish_prefetching
from pytest_tau2.plugin.run_report import RunReport
from pytest_tau2.plugin.selection import ShardSelection
from pytest_tau2.plugin.selection_hint import SelectionHints, XdistSelectionHints
from pytest_tau2.plugin.shown import ShownText
from pytest_tau2.report.run_folder import RunFolder, RunFolderError
from pytest_tau2.report.shards import parse_shard
from pytest_tau2.run.catalog import Catalog
from pytest_tau2.run.session import preload_model_clients, wants_preload

SESSION_COUNTED_KEY = pytest.StashKey[bool]()
"""This config's pytest_configure counted a live session (gc_policy.session_configured)."""


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    session_configured()
    config.stash[SESSION_COUNTED_KEY] = True
    add_markers(config)
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and "tau2_settings" in workerinput:
        relative = workerinput.get("tau2_root_relative") or {}
        config.stash[SETTINGS_KEY] = worker_settings.receive(workerinput["tau2_settings"], relative, config.rootpath)
    else:
        config.stash[SETTINGS_KEY] = invocation.settings_of(config)
    settings = config.stash[SETTINGS_KEY]
    workerid = (workerinput or {}).get("workerid")
    wrap = (lambda exc: worker_settings.on_worker(exc, workerid)) if workerid else None
    config.stash[CATALOG_KEY] = Catalog(settings, wrap_error=wrap)
    folder = None
    if workerinput is not None:
        config.stash[SAVED_KEY] = dict(workerinput.get("tau2_saved") or {})
    elif _runs_scenarios(config):
        # The process that owns the results folder checks and locks it before anything runs.
        folder = RunFolder(Path(settings.results_dir), settings)
        try:
            folder.open()
        except RunFolderError as exc:
            raise pytest.UsageError(str(exc)) from None
        config.stash[SAVED_KEY] = folder.saved
        config.stash[FOLDER_NOTES_KEY] = folder.notes  # the header shows them
    report = RunReport(
        Path(settings.results_dir), is_worker=is_worker(config), folder=folder, ci_level=settings.ci_level
    )
    config.pluginmanager.register(report, "tau2-run-report")
    if not is_worker(config):
        config.pluginmanager.register(RunGate(report, settings), "tau2-run-gate")
    config.pluginmanager.register(ShownText(settings), "tau2-shown-text")  # masked, control characters escaped
    if config.pluginmanager.hasplugin("xdist"):
        from pytest_tau2.plugin.xdist_hooks import XdistHooks

        config.pluginmanager.register(XdistHooks(), "tau2-xdist")
    hints = XdistSelectionHints if config.pluginmanager.hasplugin("xdist") else SelectionHints
    config.pluginmanager.register(hints(scenario_name), "tau2-selection-hints")  # a -k that selects nothing
    if settings.shard is not None:
        config.pluginmanager.register(ShardSelection(parse_shard(settings.shard)), "tau2-shard")


def _runs_scenarios(config: pytest.Config) -> bool:
    """False for invocations that only list or explain (--collect-only, --help, --fixtures, --markers)."""
    option = config.option
    return not any(getattr(option, name, False) for name in ("collectonly", "help", "showfixtures", "markers"))


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    settings = session.config.stash[SETTINGS_KEY]
    if (
        wants_preload(settings)
        and not session.config.option.collectonly
        and not is_controller_of_workers(session.config)
    ):
        preload_model_clients(settings)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
    finish_prefetching(session, exitstatus)
    end_controller_idle_time(session.config)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if config.stash.get(SESSION_COUNTED_KEY, False):  # our configure ran (another plugin's may have failed first)
        freeze_at_session_end()  # what pytest and the interpreter then collect is only what comes after
