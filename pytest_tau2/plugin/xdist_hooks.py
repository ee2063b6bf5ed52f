"""The xdist side of the adapter (registered only when xdist is loaded): what the controller ships
to its workers, collection errors that name the worker, the ``--dist load`` scheduler under
``--tau2-concurrency``, crashed socket workers, and the controller's idle-time work.

Registered at every pytest start where xdist is installed, so it imports no engine module at
module level; the controller wakes the adapter up when a worker reports scenario items
(plugin/activation.py), before any of them runs."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_tau2.plugin import activation
from pytest_tau2.plugin.keys import CATALOG_KEY, SAVED_KEY, SETTINGS_KEY, is_worker, item_id, scenario_name

DATA_ERRORS_KEY = "tau2_data_errors"
"""``workeroutput`` key: a worker's tau2 data errors by error item name."""
_SHOWN_KEY = pytest.StashKey[bool]()


def controller_settings(config: pytest.Config) -> Any:
    """The controller's settings, resolved (and checked) once: they travel to every worker."""
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is None:
        from pytest_tau2.plugin import invocation

        settings = config.stash[SETTINGS_KEY] = invocation.settings_of(config)
    return settings


class XdistHooks:
    """Ship the controller's settings (one results dir for the whole run) and, when resuming,
    the saved results to every worker: workers never read or write the results folder; each
    worker's results come back through its link (xdist_link.py) as soon as they are made."""

    def pytest_configure_node(self, node: Any) -> None:
        from pytest_tau2.plugin import worker_settings

        self.links.open(node)
        values, relative = worker_settings.ship(controller_settings(node.config), node.config.rootpath)
        node.workerinput["tau2_settings"] = values  # in memory over execnet: never a file on the worker
        node.workerinput["tau2_root_relative"] = relative  # anchored at the worker's rootdir (other machines)
        node.workerinput["tau2_saved"] = node.config.stash.get(SAVED_KEY, {})

    def __init__(self) -> None:
        from pytest_tau2.plugin.xdist_link import ControllerLinks

        self.links = ControllerLinks()
        """The controller's ends of the workers' result links (xdist_link.py); its writer is set
        when the adapter wakes up (session.py), before any worker can send a result."""
        self.collections: dict[str, tuple[str, ...]] = {}
        """Controller: the node ids each worker collected, by worker id."""
        self.blamed: set[str] = set()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """On a worker: tau2 data that is missing or off the pin, for the controller to name.

        Each machine has its own data, and one sweep must not mix data sets. When workers differ
        (one has the data, one has not), xdist stops the run because they collected different
        tests, and the controller turns each such worker's reason into a collection error that
        names it (:meth:`pytest_testnodedown`). When every worker lacks the data alike, the
        domain's error item runs and fails as in one process: the same JUnit, one error."""
        config = session.config
        workeroutput = getattr(config, "workeroutput", None)
        if workeroutput is None or CATALOG_KEY not in config.stash:
            return
        from pytest_tau2.plugin import worker_settings

        selected = {scenario_name(item) for item in session.items}
        errors = {
            name: str(exc)
            for name, exc in config.stash[CATALOG_KEY].errors.items()
            if name in selected and isinstance(exc, worker_settings.WorkerDataError)
        }
        if errors:
            workeroutput[DATA_ERRORS_KEY] = errors

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any | None:
        """--tau2-concurrency N under ``--dist load``: keep N upcoming items queued per worker."""
        settings = controller_settings(config)
        if settings.concurrency <= 1:
            return None
        _wake(config)  # asked for concurrency: this run means to run scenarios
        from pytest_tau2.plugin.xdist_scheduler import make_scheduler
        from pytest_tau2.run.prefetch import expected_length

        catalog = config.stash[CATALOG_KEY]

        def length_of(nodeid: str) -> int:  # the workers' prefetchers order their items by the same
            found = item_id(nodeid)
            return 0 if found is None else expected_length(found, catalog.instance, settings.trials)

        return make_scheduler(config, log, settings.concurrency, length_of, preload=catalog.load)

    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """A worker ended: its data error when the workers collected different tests; a crashed
        socket worker: wait (bounded) for its server before xdist reconnects to it."""
        from pytest_tau2.plugin import worker_settings

        errors = (getattr(node, "workeroutput", None) or {}).get(DATA_ERRORS_KEY) or {}
        worker = str(getattr(getattr(node, "gateway", None), "id", ""))
        if errors and len(set(self.collections.values())) > 1 and worker not in self.blamed:
            self.blamed.add(worker)
            for name, text in errors.items():
                node.config.hook.pytest_collectreport(report=pytest.CollectReport(name, "failed", text, []))

        spec = getattr(node.gateway, "spec", None)
        line = None if is_worker(node.config) else worker_settings.after_crash(spec, error)
        reporter = node.config.pluginmanager.get_plugin("terminalreporter")
        if line is not None and reporter is not None:
            reporter.write_line(line)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """A worker collected: if it selected scenario items, the controller wakes up (results
        folder, header) before any of them runs."""
        config = node.config
        self.collections[str(getattr(node.gateway, "id", len(self.collections)))] = tuple(ids)
        sharded = controller_settings(config).shard is not None  # an empty shard still leaves its folder to merge
        if not sharded and not any(item_id(nodeid) is not None for nodeid in ids):
            return
        _wake(config)
        from pytest_tau2.plugin.prefetching import use_controller_idle_time
        from pytest_tau2.plugin.run_report import RunReport
        from pytest_tau2.plugin.session import REPORT_NAME, header, scenarios_selected

        first = not config.stash.get(_SHOWN_KEY, False)
        try:
            scenarios_selected(config)
        except pytest.UsageError as exc:  # the results folder cannot be used: stop before any scenario runs
            pytest.exit(str(exc), returncode=pytest.ExitCode.USAGE_ERROR)
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if first and reporter is not None and config.option.verbose >= 0 and not config.option.no_header:
            for line in header(config):
                reporter.write_line(line)
        config.stash[_SHOWN_KEY] = True
        report = config.pluginmanager.get_plugin(REPORT_NAME)
        if isinstance(report, RunReport):
            report.worker_collected(ids)
            use_controller_idle_time(config)


def _wake(config: pytest.Config) -> None:
    error = activation.activate(config)
    if error is not None:
        pytest.exit(str(error), returncode=pytest.ExitCode.USAGE_ERROR)
