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
from pytest_tau2.plugin.keys import is_worker, item_id, scenario_name
from pytest_tau2.plugin.run_state import Tau2Run

DATA_ERRORS_KEY = "tau2_data_errors"
"""``workeroutput`` key: a worker's tau2 data errors by error item name."""


class XdistHooks:
    """Ship the controller's settings (one results dir for the whole run) and, when resuming,
    the saved results to every worker: workers never read or write the results folder; each
    worker's results come back through its link (xdist_link.py) as soon as they are made."""

    def pytest_configure_node(self, node: Any) -> None:
        from pytest_tau2.plugin import worker_settings

        self.links.open(node)
        values, relative = worker_settings.ship(self.run.resolve_settings(), node.config.rootpath)
        node.workerinput["tau2_settings"] = values  # in memory over execnet: never a file on the worker
        node.workerinput["tau2_root_relative"] = relative  # anchored at the worker's rootdir (other machines)
        node.workerinput["tau2_saved"] = self.run.saved

    def __init__(self, run: Tau2Run) -> None:
        from pytest_tau2.plugin.xdist_link import ControllerLinks

        self.run = run
        self.links = run.links = ControllerLinks()
        """The controller's ends of the workers' result links (xdist_link.py), held by the run too:
        it sets their writer when the adapter wakes up, before any worker can send a result."""
        self.collections: dict[str, tuple[str, ...]] = {}
        """Controller: the node ids each worker collected, by worker id."""
        self.blamed: set[str] = set()
        self.header_shown = False

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """On a worker: tau2 data that is missing or off the pin, for the controller to name.

        Each machine has its own data, and one sweep must not mix data sets. When workers differ
        (one has the data, one has not), xdist stops the run because they collected different
        tests, and the controller turns each such worker's reason into a collection error that
        names it (:meth:`pytest_testnodedown`). When every worker lacks the data alike, the
        domain's error item runs and fails as in one process: the same JUnit, one error."""
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is None or not self.run.configured:
            return
        from pytest_tau2.plugin import worker_settings

        selected = {scenario_name(item) for item in session.items}
        errors = {
            name: str(exc)
            for name, exc in self.run.catalog.errors.items()
            if name in selected and isinstance(exc, worker_settings.WorkerDataError)
        }
        if errors:
            workeroutput[DATA_ERRORS_KEY] = errors

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any | None:
        """--tau2-concurrency N under ``--dist load``: keep N upcoming items queued per worker."""
        settings = self.run.resolve_settings()
        if settings.concurrency <= 1:
            return None
        _wake(self.run)  # asked for concurrency: this run means to run scenarios
        from pytest_tau2.plugin.xdist_scheduler import make_scheduler
        from pytest_tau2.run.prefetch import expected_length

        catalog = self.run.catalog

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
        if line is not None:
            self.run.terminal.write_line(line)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """A worker collected: if it selected scenario items, the controller wakes up (results
        folder, header) before any of them runs."""
        run = self.run
        config = node.config
        self.collections[str(getattr(node.gateway, "id", len(self.collections)))] = tuple(ids)
        sharded = run.resolve_settings().shard is not None  # an empty shard still leaves its folder to merge
        if not sharded and not any(item_id(nodeid) is not None for nodeid in ids):
            return
        _wake(run)
        first = not self.header_shown
        try:
            run.scenarios_selected()
        except pytest.UsageError as exc:  # the results folder cannot be used: stop before any scenario runs
            pytest.exit(str(exc), returncode=pytest.ExitCode.USAGE_ERROR)
        terminal = run.terminal
        if first and terminal.reporter is not None and config.option.verbose >= 0 and not config.option.no_header:
            for line in run.header_lines():
                terminal.write_line(line)
        self.header_shown = True
        run.report.worker_collected(ids)
        run.idle.use_controller_idle_time()


def _wake(run: Tau2Run) -> None:
    error = activation.activate(run)
    if error is not None:
        pytest.exit(str(error), returncode=pytest.ExitCode.USAGE_ERROR)
