"""The run's life in one process: configure (settings, catalog, results folder checked and locked,
the adapter's other plugin objects registered), session start (JUnit keeps one testcase per
scenario; the model clients' libraries imported), session end (background conversations wound
down, idle-time work ended, the garbage collector's policy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_tau2.plugin import invocation, worker_settings
from pytest_tau2.plugin.gc_policy import freeze_at_session_end, session_configured
from pytest_tau2.plugin.item import SAVER_KEY
from pytest_tau2.plugin.keys import (
    CATALOG_KEY,
    SAVED_KEY,
    SETTINGS_KEY,
    is_controller_of_workers,
    is_worker,
    scenario_name,
)
from pytest_tau2.plugin.options import add_markers
from pytest_tau2.plugin.prefetching import end_controller_idle_time, finish_prefetching, stop_starting
from pytest_tau2.plugin.run_report import RunReport
from pytest_tau2.plugin.selection import ShardSelection
from pytest_tau2.plugin.selection_hint import SelectionHints, XdistSelectionHints
from pytest_tau2.plugin.signals import SignalStop
from pytest_tau2.report.files import describe_os_error
from pytest_tau2.report.run_folder import RunFolder, RunFolderError
from pytest_tau2.report.shards import parse_shard
from pytest_tau2.run.catalog import Catalog
from pytest_tau2.run.session import preload_model_clients, wants_preload

SESSION_COUNTED_KEY = pytest.StashKey[bool]()
"""This config's pytest_configure counted a live session (gc_policy.session_configured)."""
SIGNALS_KEY = pytest.StashKey[SignalStop]()


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
    report = RunReport(Path(settings.results_dir), is_worker=is_worker(config), folder=folder)
    config.pluginmanager.register(report, "tau2-run-report")
    stop = SignalStop()
    if _runs_scenarios(config):
        stop.install()  # SIGTERM / SIGHUP stop the run as Ctrl-C does
        config.stash[SIGNALS_KEY] = stop
    if workerinput is None:
        config.stash[SAVER_KEY] = report.writer  # this process owns the folder: save results as they are made
        report.on_stop.append(lambda reason: stop_starting(config, reason))
    else:
        from pytest_tau2.plugin.xdist_link import worker_link

        link = worker_link(config, lambda reason: stop_starting(config, reason))
        if link is not None:
            config.stash[SAVER_KEY] = link
    if config.pluginmanager.hasplugin("xdist"):
        from pytest_tau2.plugin.xdist_hooks import XdistHooks

        hooks = XdistHooks(report.writer)
        report.on_stop.append(lambda reason: hooks.links.tell(("stop", reason)))
        stop.on_first = lambda name: hooks.links.tell(("interrupt", name))
        config.pluginmanager.register(hooks, "tau2-xdist")
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
    _keep_subtests_out_of_junit(session.config)
    settings = session.config.stash[SETTINGS_KEY]
    if (
        wants_preload(settings)
        and not session.config.option.collectonly
        and not is_controller_of_workers(session.config)
    ):
        preload_model_clients(settings)


def _keep_subtests_out_of_junit(config: pytest.Config) -> None:
    """JUnit XML: one testcase per scenario, with the scenario's own outcome; a file that cannot
    be written is one line at the end, and the results folder's own files are still written.

    pytest's junitxml plugin folds every subtest report into its item's testcase, so a passing
    scenario with an N/A sub-result got a ``<skipped>`` child (CI dashboards counted it as
    skipped) and ``tests=`` counted sub-results (1008 for 284 testcases). Here the junitxml
    plugin stops seeing subtest reports; the item's own reports decide its testcase, and the
    sub-results stay in it as ``check:<id>`` properties and in the failure text (item.py).
    pytest exposes no handle on that plugin object but its stash key, and binds a plugin's
    hooks when it is registered: hence unregister, wrap, register again (at sessionstart, after
    junitxml's own, so its suite clock already runs). The terminal still gets every subtest.
    """
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is None or getattr(xml, "_tau2_scenarios_only", False):
        return
    logreport = xml.pytest_runtest_logreport

    def pytest_runtest_logreport(report: pytest.TestReport) -> None:
        if not isinstance(report, pytest.SubtestReport):
            logreport(report)

    finish, summary = xml.pytest_sessionfinish, xml.pytest_terminal_summary
    unwritten: list[str] = []

    def pytest_sessionfinish() -> None:
        """An unwritable JUnit file (``/dev/full``, a full disk) is one line, not a raw OSError that
        keeps every later end-of-session hook, the results folder's files among them, from running."""
        try:
            finish()
        except OSError as exc:
            why = f"{type(exc).__name__}: {describe_os_error(exc)}"
            unwritten.append(why)
            report = config.pluginmanager.get_plugin("tau2-run-report")
            if isinstance(report, RunReport):
                report.file_failed(f"the JUnit file {xml.logfile}", why, required=True)

    def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
        if not unwritten:  # "generated xml file" only when it was
            summary(terminalreporter, config)

    config.pluginmanager.unregister(xml)
    setattr(xml, "pytest_runtest_logreport", pytest_runtest_logreport)  # noqa: B010  (mypy: a method)
    setattr(xml, "pytest_sessionfinish", pytest_sessionfinish)  # noqa: B010
    setattr(xml, "pytest_terminal_summary", pytest_terminal_summary)  # noqa: B010
    setattr(xml, "_tau2_scenarios_only", True)  # noqa: B010
    config.pluginmanager.register(xml)


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
    if config.stash.get(SESSION_COUNTED_KEY, False):  # our configure ran (another plugin's may have failed first)
        freeze_at_session_end()  # what pytest and the interpreter then collect is only what comes after
