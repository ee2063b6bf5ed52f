"""The xdist side of the adapter (registered only when xdist is loaded): what the controller ships
to its workers, collection errors that name the worker, the ``--dist load`` scheduler under
``--tau2-concurrency``, crashed socket workers, and the controller's idle-time work."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_tau2.plugin import worker_settings
from pytest_tau2.plugin.keys import CATALOG_KEY, SAVED_KEY, SETTINGS_KEY, is_worker, item_id, scenario_name
from pytest_tau2.plugin.prefetching import use_controller_idle_time
from pytest_tau2.plugin.run_report import RunReport
from pytest_tau2.plugin.xdist_link import ControllerLinks
from pytest_tau2.report.saving import ResultWriter


class XdistHooks:
    """Ship the controller's settings (one results dir for the whole run) and, when resuming,
    the saved results to every worker: workers never read or write the results folder; each
    worker's results come back through its link (xdist_link.py) as soon as they are made."""

    def __init__(self, writer: ResultWriter) -> None:
        self.links = ControllerLinks(writer)

    def pytest_configure_node(self, node: Any) -> None:
        self.links.open(node)
        values, relative = worker_settings.ship(node.config.stash[SETTINGS_KEY], node.config.rootpath)
        node.workerinput["tau2_settings"] = values  # in memory over execnet: never a file on the worker
        node.workerinput["tau2_root_relative"] = relative  # anchored at the worker's rootdir (other machines)
        node.workerinput["tau2_saved"] = node.config.stash.get(SAVED_KEY, {})

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """On a worker: tau2 data that is missing or off the pin is a collection error naming the
        worker (each machine has its own data; one sweep must not mix data sets)."""
        if not is_worker(session.config):
            return
        selected = {scenario_name(item) for item in session.items}
        for name, exc in session.config.stash[CATALOG_KEY].errors.items():
            if name in selected and isinstance(exc, worker_settings.WorkerDataError):
                session.config.hook.pytest_collectreport(report=pytest.CollectReport(name, "failed", str(exc), []))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any | None:
        """--tau2-concurrency N under ``--dist load``: keep N upcoming items queued per worker."""
        from pytest_tau2.plugin.xdist_scheduler import make_scheduler
        from pytest_tau2.run.prefetch import expected_length

        settings, catalog = config.stash[SETTINGS_KEY], config.stash[CATALOG_KEY]

        def length_of(nodeid: str) -> int:  # the workers' prefetchers order their items by the same
            found = item_id(nodeid)
            return 0 if found is None else expected_length(found, catalog.instance, settings.trials)

        return make_scheduler(config, log, settings.concurrency, length_of, preload=catalog.load)

    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """A crashed socket worker: wait (bounded) for its server before xdist reconnects to it."""
        spec = getattr(node.gateway, "spec", None)
        line = None if is_worker(node.config) else worker_settings.after_crash(spec, error)
        reporter = node.config.pluginmanager.get_plugin("terminalreporter")
        if line is not None and reporter is not None:
            reporter.write_line(line)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        report = node.config.pluginmanager.get_plugin("tau2-run-report")
        if isinstance(report, RunReport):
            report.worker_collected(ids)
            use_controller_idle_time(node.config)
