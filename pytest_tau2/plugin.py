"""The pytest adapter: options, collection, fixtures, sub-results, xdist, run summary.

Everything here is a thin layer over plain modules: the registry says what to collect,
:func:`pytest_tau2.run.pipeline.run_scenario` runs a scenario, :mod:`pytest_tau2.report` writes
and aggregates results. A scenario is a parametrized test function (``test_scenario``), so
``-k``, ``--lf``, markers, IDEs and xdist work with no private API.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2 import invocation, workers
from pytest_tau2.concurrency import end_controller_idle_time, finish_prefetching, use_controller_idle_time
from pytest_tau2.gc_policy import freeze_at_session_end, freeze_collected, session_configured
from pytest_tau2.items import (
    CATALOG_KEY,
    PARAM,
    SAVED_KEY,
    SETTINGS_KEY,
    TRIAL_PARAM,
    _scenario_name,
    narrow_to_trials,
    selection_patterns,
    trial_params,
)
from pytest_tau2.report.run_folder import RunFolder, RunFolderError
from pytest_tau2.report.shards import Shard, parse_shard, select
from pytest_tau2.run import participants
from pytest_tau2.run_report import SCENARIO_PROPERTY, RunReport, item_id
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.scenario.selection import (
    keyword_targets,
    node_id_targets,
    pattern_targets,
    signal_errors,
    unavailable_domain,
)
from pytest_tau2.selection_hint import SelectionHints, XdistSelectionHints
from pytest_tau2.settings import OPTIONS, Settings

pytest_plugins = ["pytest_tau2.items"]
"""The scenario item's fixtures, test function and report hook live there (registered with this plugin)."""
MARKERS = {
    "tau2": "a pytest-tau2 evaluation scenario",
    "tau2_split_train": "tau2 task in the upstream train split",
    "tau2_split_test": "tau2 task in the upstream test split",
    "tau2_telecom_full": "telecom task outside the base split (collected with --tau2-telecom-tasks full)",
}


# ---- options and settings -----------------------------------------------------------------------


SESSION_COUNTED_KEY = pytest.StashKey[bool]()
"""This config's pytest_configure counted a live session (gc_policy.session_configured)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tau2", "pytest-tau2 agent evaluation")
    for option in OPTIONS:
        if option.kind == "bool":
            group.addoption(
                option.flag, action="store_true", default=None, dest=f"tau2_{option.name}", help=option.help
            )
            parser.addini(option.ini, option.help, type="bool", default=False)
        else:
            group.addoption(option.flag, default=None, dest=f"tau2_{option.name}", help=option.help)
            parser.addini(option.ini, option.help, default=None)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    session_configured()
    config.stash[SESSION_COUNTED_KEY] = True
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and "tau2_settings" in workerinput:
        relative = workerinput.get("tau2_root_relative") or {}
        config.stash[SETTINGS_KEY] = workers.receive(workerinput["tau2_settings"], relative, config.rootpath)
    else:
        config.stash[SETTINGS_KEY] = invocation.settings_of(config)
    settings = config.stash[SETTINGS_KEY]
    config.stash[CATALOG_KEY] = ScenarioCatalog(settings, workerid=(workerinput or {}).get("workerid"))
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
    config.pluginmanager.register(
        RunReport(Path(settings.results_dir), is_worker=_is_worker(config), folder=folder), "tau2-run-report"
    )
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(), "tau2-xdist")
    hints = XdistSelectionHints if config.pluginmanager.hasplugin("xdist") else SelectionHints
    config.pluginmanager.register(hints(_scenario_name), "tau2-selection-hints")  # a -k that selects nothing
    if settings.shard is not None:
        config.pluginmanager.register(_ShardSelection(parse_shard(settings.shard)), "tau2-shard")


def _runs_scenarios(config: pytest.Config) -> bool:
    """False for invocations that only list or explain (--collect-only, --help, --fixtures, --markers)."""
    option = config.option
    return not any(getattr(option, name, False) for name in ("collectonly", "help", "showfixtures", "markers"))


class _XdistHooks:
    """Ship the controller's settings (one results dir for the whole run) and, when resuming,
    the saved results to every worker: workers never read or write the results folder."""

    def pytest_configure_node(self, node: Any) -> None:
        values, relative = workers.ship(node.config.stash[SETTINGS_KEY], node.config.rootpath)
        node.workerinput["tau2_settings"] = values  # in memory over execnet: never a file on the worker
        node.workerinput["tau2_root_relative"] = relative  # anchored at the worker's rootdir (other machines)
        node.workerinput["tau2_saved"] = node.config.stash.get(SAVED_KEY, {})

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """On a worker: tau2 data that is missing or off the pin is a collection error naming the
        worker (each machine has its own data; one sweep must not mix data sets)."""
        if not _is_worker(session.config):
            return
        selected = {_scenario_name(item) for item in session.items}
        for name, exc in session.config.stash[CATALOG_KEY].errors.items():
            if name in selected and isinstance(exc, workers.WorkerDataError):
                session.config.hook.pytest_collectreport(report=pytest.CollectReport(name, "failed", str(exc), []))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any | None:
        """--tau2-concurrency N under ``--dist load``: keep N upcoming items queued per worker."""
        from pytest_tau2.run.prefetch import expected_length
        from pytest_tau2.worker_queue import make_scheduler

        settings, catalog = config.stash[SETTINGS_KEY], config.stash[CATALOG_KEY]

        def length_of(nodeid: str) -> int:  # the workers' prefetchers order their items by the same
            found = item_id(nodeid)
            return 0 if found is None else expected_length(found, catalog.instance, settings.trials)

        return make_scheduler(config, log, settings.concurrency, length_of, preload=catalog.load)

    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """A crashed socket worker: wait (bounded) for its server before xdist reconnects to it."""
        line = None if _is_worker(node.config) else workers.after_crash(getattr(node.gateway, "spec", None), error)
        reporter = node.config.pluginmanager.get_plugin("terminalreporter")
        if line is not None and reporter is not None:
            reporter.write_line(line)

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        report = node.config.pluginmanager.get_plugin("tau2-run-report")
        if isinstance(report, RunReport):
            report.worker_collected(ids)
            use_controller_idle_time(node.config)


def pytest_report_header(config: pytest.Config) -> list[str]:
    s = config.stash[SETTINGS_KEY]
    return [
        f"tau2: agent={participants.describe_agent(s)} user={participants.describe_user(s)} "
        f"judge={s.judge_model or 'none (NL assertions skipped)'}",
        f"tau2: results={s.results_dir}",
        _verdict_header(s),
        *_recording_header(s),
    ]


def _verdict_header(s: Settings) -> str:
    """Which verdict decides the items, and the trials (docs/leaderboard.md)."""
    if s.verdict == "tau2-reward":
        verdict = "tau2 reward (--tau2-verdict tau2-reward) decides tau2 items; the six signals are saved beside it"
    else:
        verdict = "six-signal decides; tau2 reward saved beside it"
    return f"tau2: verdict: {verdict}; trials={s.trials} per scenario, seed={s.seed}"


def _recording_header(s: Settings) -> list[str]:
    if s.recording is None:
        return []
    from pytest_tau2.llm.cassette import describe_mode

    return [f"tau2: {describe_mode(s.recording, s.cassette_dir, participants.uses_llm(s))}"]


# ---- collection ---------------------------------------------------------------------------------


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if PARAM in metafunc.fixturenames:
        catalog = metafunc.config.stash[CATALOG_KEY]
        trials = catalog.settings.trials
        if trials > 1 and TRIAL_PARAM in metafunc.fixturenames:  # --tau2-trials K: K items per scenario
            metafunc.parametrize((PARAM, TRIAL_PARAM), trial_params(catalog.params(), set(catalog.errors), trials))
        else:
            metafunc.parametrize(PARAM, catalog.params())


class ScenarioCatalog:
    """Every scenario of this run by name, computed once; broken domains keep their error."""

    def __init__(self, settings: Settings, workerid: str | None = None) -> None:
        self.settings = settings
        self.workerid = workerid
        """On an xdist worker: its id, named in data errors (each machine has its own data)."""
        self.classes: dict[str, type[Scenario]] = {}
        self.errors: dict[str, Exception] = {}
        self._loaded = False

    def load(self) -> None:
        """Read every scenario (once): collection does, and the xdist controller for its scheduler."""
        if not self._loaded:
            found: list[tuple[str, Exception]] = []
            self.classes = all_scenarios(self.settings, found)
            # One item per broken domain carries the error, instead of one traceback per scenario.
            self.errors = {
                f"{domain}__unavailable": workers.on_worker(exc, self.workerid) if self.workerid else exc
                for domain, exc in found
            }
            self._loaded = True

    def params(self) -> list[Any]:
        self.load()
        params = [
            pytest.param(name, id=name, marks=[getattr(pytest.mark, m) for m in ("tau2", *cls.tags)])
            for name, cls in self.classes.items()
        ]
        params += [pytest.param(name, id=name, marks=[pytest.mark.tau2]) for name in self.errors]
        return params

    def get(self, name: str) -> type[Scenario]:
        self.load()
        if name in self.errors:
            raise self.errors[name]
        return self.classes[name]

    def instance(self, name: str) -> Scenario:
        """A fresh scenario object, bound to the run's settings."""
        return self.get(name)().bind(self.settings)


# ---- run summary ----------------------------------------------------------------------------------


def _matches(name: str, pattern: str) -> bool:
    """A --tau2-scenarios pattern selects a scenario, or the error item of an unavailable domain it aims at."""
    domain = unavailable_domain(name)
    return fnmatch.fnmatchcase(name, pattern) or (domain is not None and pattern_targets(pattern, domain))


def pytest_itemcollected(item: pytest.Item) -> None:
    """``-k`` aimed at scenarios of an unavailable domain selects its error item, so the reason shows."""
    name = _scenario_name(item)
    domain = unavailable_domain(name) if name is not None else None
    if domain is not None:
        item.extra_keyword_matches.update(keyword_targets(item.config.option.keyword, domain))


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    """A node id of an unavailable domain's scenario: pytest's "not found" names the domain's error."""
    try:
        return (yield)
    except pytest.UsageError as exc:
        errors = session.config.stash[CATALOG_KEY].errors
        aimed = node_id_targets(session.config.args, [unavailable_domain(n) or n for n in errors])
        if not aimed:
            raise
        lines = [
            f"{', '.join(ids)}: not collected because {domain} is unavailable: {errors[domain + '__unavailable']}"
            for domain, ids in aimed.items()
        ]
        raise pytest.UsageError(*exc.args, *lines) from None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Success signals of every selected scenario, resolved now: a bad one is a collection error naming the class."""
    named = [(item, _scenario_name(item)) for item in session.items]
    catalog = session.config.stash[CATALOG_KEY]
    errors = signal_errors([n for _, n in named if n is not None], catalog.classes, catalog.settings)
    for item, name in named:
        if name in errors:
            report = pytest.CollectReport(item.nodeid, "failed", str(errors[name]), [])
            session.config.hook.pytest_collectreport(report=report)  # counted: the run stops before any item
    session.items[:] = [item for item, name in named if name not in errors]
    if catalog.classes:  # scenario items were collected (deselected ones live on in the terminal's stats)
        freeze_collected()  # items, classes, tasks live until the end: no full GC re-scans them (gc_policy.py)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--tau2-scenarios``: keep exactly the named scenarios (names or glob patterns)."""
    wanted = config.stash[SETTINGS_KEY].scenarios
    if not wanted:
        return
    given = [p.strip() for p in wanted.split(",") if p.strip()]
    patterns = selection_patterns(given, config.stash[SETTINGS_KEY].trials)  # <name>-t<k>: one trial
    names = {item: _scenario_name(item) for item in items}
    known = sorted({n for n in names.values() if n is not None})
    unmatched = [p for p in patterns if not any(_matches(n, p) for n in known)]
    if unmatched:
        hints = {p: difflib.get_close_matches(p, known, n=3) for p in unmatched}
        text = "; ".join(f"{p!r}" + (f" (did you mean {', '.join(h)}?)" if h else "") for p, h in hints.items())
        raise pytest.UsageError(f"--tau2-scenarios: no collected scenario matches {text}")
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        name = names[item]
        selected = name is None or any(_matches(name, p) for p in patterns)
        (keep if selected else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    narrow_to_trials(config, items, given)


class _ShardSelection:
    """``--tau2-shard I/N``: keep this shard's items, after every other selection (-k, -m,
    --tau2-scenarios), so the shards split exactly what an unsharded run would run."""

    def __init__(self, shard: Shard) -> None:
        self.shard = shard

    def _key(self, item: pytest.Item) -> tuple[str, str]:
        name = _scenario_name(item)  # the scenario's name, the same for each of its trials
        return ("other", item.nodeid) if name is None else ("scenario", name)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        keep, drop = select(items, self._key, self.shard)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep


def pytest_runtest_setup(item: pytest.Item) -> None:
    name = _scenario_name(item)
    if name is not None:
        # Recorded before anything can fail, so the summary knows every scenario that ran.
        item.user_properties.append((SCENARIO_PROPERTY, name))


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _keep_subtests_out_of_junit(session.config)
    settings = session.config.stash[SETTINGS_KEY]
    if (
        participants.uses_llm(settings)
        and settings.recording not in ("none", "once")  # a replay may never call a model
        and not session.config.option.collectonly
        and not _is_controller_of_workers(session.config)
    ):
        from pytest_tau2.llm.client import preload

        # Import the model client's libraries once per process, before collection and the first
        # test's clock: litellm only when a model needs it (the OpenAI wire path alone never
        # does), else the wire path's HTTP client. Not on a background thread: an import then
        # competes for the GIL with collection and the conversations that wait for it (c32 sweep
        # 21.4 s vs 18.6 s that way, bench/results/llm_speed.md).
        preload(litellm=participants.litellm_needed(settings))


def _keep_subtests_out_of_junit(config: pytest.Config) -> None:
    """JUnit XML: one testcase per scenario, with the scenario's own outcome.

    pytest's junitxml plugin folds every subtest report into its item's testcase, so a passing
    scenario with an N/A sub-result got a ``<skipped>`` child (CI dashboards counted it as
    skipped) and ``tests=`` counted sub-results (1008 for 284 testcases). Here the junitxml
    plugin stops seeing subtest reports; the item's own reports decide its testcase, and the
    sub-results stay in it as ``check:<id>`` properties and in the failure text (items.py).
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

    config.pluginmanager.unregister(xml)
    setattr(xml, "pytest_runtest_logreport", pytest_runtest_logreport)  # noqa: B010  (mypy: a method)
    setattr(xml, "_tau2_scenarios_only", True)  # noqa: B010
    config.pluginmanager.register(xml)


def _is_controller_of_workers(config: pytest.Config) -> bool:
    """The xdist controller of local (-n) or remote (-d --tx ...) workers: it runs no scenario."""
    option = config.option
    remote = getattr(option, "dist", "no") != "no" and bool(getattr(option, "tx", None))
    return (bool(getattr(option, "numprocesses", None)) or remote) and not hasattr(config, "workerinput")


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int | pytest.ExitCode) -> None:
    finish_prefetching(session, exitstatus)
    end_controller_idle_time(session.config)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if config.stash.get(SESSION_COUNTED_KEY, False):  # our configure ran (another plugin's may have failed first)
        freeze_at_session_end()  # what pytest and the interpreter then collect is only what comes after
