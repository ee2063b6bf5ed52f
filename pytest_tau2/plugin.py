"""The pytest adapter: options, collection, fixtures, sub-results, xdist, run summary.

Everything here is a thin layer over plain modules: the registry says what to collect,
:func:`pytest_tau2.run.pipeline.run_scenario` runs a scenario, :mod:`pytest_tau2.report` writes
and aggregates results. A scenario is a parametrized test function (``test_scenario``), so
``-k``, ``--lf``, markers, IDEs and xdist work with no private API.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import difflib
import fnmatch
import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.errors import InfrastructureError, ScenarioNotApplicable, SettingsError, Tau2Error
from pytest_tau2.report import files
from pytest_tau2.report.metrics import build_metrics
from pytest_tau2.run import participants
from pytest_tau2.run.agent_side import ProvidesAgentSide
from pytest_tau2.run.outcome import ScenarioOutcome
from pytest_tau2.run.pipeline import Judge, run_scenario
from pytest_tau2.run_report import SCENARIO_PROPERTY, RunReport
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.scoring.signals import signal_specs
from pytest_tau2.settings import OPTIONS, Settings, resolve

if TYPE_CHECKING:
    from pytest_tau2.run.prefetch import Prefetcher

T = TypeVar("T")
SETTINGS_KEY = pytest.StashKey[Settings]()
CATALOG_KEY = pytest.StashKey["ScenarioCatalog"]()
PARAM = "tau2_scenario_name"
MARKERS = {
    "tau2": "a pytest-tau2 evaluation scenario",
    "tau2_split_train": "tau2 task in the upstream train split",
    "tau2_split_test": "tau2 task in the upstream test split",
    "tau2_telecom_full": "telecom task outside the base split (collected with --tau2-telecom-tasks full)",
}


# ---- options and settings -----------------------------------------------------------------------


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


PATH_OPTIONS = ("--tau2-results-dir", "--tau2-data-dir", "--tau2-eval-data-root")


def _check_separated_path_options(config: pytest.Config) -> None:
    """Refuse ``--tau2-results-dir DIR`` when it has made pytest miss the project's configuration.

    pytest finds its rootdir and configuration file before plugins register their options, so
    it takes the DIR of ``--tau2-results-dir DIR`` for a test path; a DIR outside the project
    moves the search away from the project's pytest.ini/pyproject.toml (testpaths, addopts and
    the root conftest are then ignored). ``--tau2-results-dir=DIR`` cannot mislead it.
    """
    if config.inipath is not None:
        return
    missed = _config_file_between(config.invocation_params.dir, config.rootpath)
    if missed is None:
        return
    args = [str(a) for a in config.invocation_params.args]
    for flag, value in itertools.pairwise(args):
        if flag in PATH_OPTIONS and Path(value).exists():
            raise pytest.UsageError(
                f"write {flag}={value} (with '='): given as two arguments, pytest took {value} for a test path "
                f"while looking for the project's configuration and missed {missed}"
            )


def _config_file_between(start: Path, stop: Path) -> Path | None:
    """A pytest configuration file in ``start`` or its parents below ``stop``, if any."""
    for folder in (start, *start.parents):
        if folder == stop:
            return None
        for name in ("pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg"):
            if (folder / name).is_file():
                return folder / name
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and "[tool.pytest" in pyproject.read_text("utf-8", errors="replace"):
            return pyproject
    return None


def _settings_from_config(config: pytest.Config) -> Settings:
    cli = {o.name: config.getoption(f"tau2_{o.name}") for o in OPTIONS}
    ini = {o.name: config.getini(o.ini) for o in OPTIONS}
    try:
        values = resolve(cli, ini)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    values["eval_data_root"] = str(config.rootpath / (values["eval_data_root"] or "data"))
    values["cassette_dir"] = str(config.rootpath / (values["cassette_dir"] or "cassettes"))
    if values["results_dir"]:
        values["results_dir"] = str(Path(values["results_dir"]).resolve())
    else:
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
        values["results_dir"] = str(config.rootpath / "tau2-results" / stamp)
    settings = Settings(**values)
    try:
        participants.validate_settings(settings)
    except SettingsError as exc:
        raise pytest.UsageError(str(exc)) from None
    return settings


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and "tau2_settings" in workerinput:
        config.stash[SETTINGS_KEY] = Settings.from_dict(workerinput["tau2_settings"])
    else:
        _check_separated_path_options(config)
        config.stash[SETTINGS_KEY] = _settings_from_config(config)
    config.stash[CATALOG_KEY] = ScenarioCatalog(config.stash[SETTINGS_KEY])
    config.pluginmanager.register(
        RunReport(Path(config.stash[SETTINGS_KEY].results_dir), is_worker=_is_worker(config)), "tau2-run-report"
    )
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(), "tau2-xdist")


class _XdistHooks:
    """Ship the controller's settings (one results dir for the whole run) to every worker."""

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["tau2_settings"] = node.config.stash[SETTINGS_KEY].to_dict()


def pytest_report_header(config: pytest.Config) -> list[str]:
    s = config.stash[SETTINGS_KEY]
    return [
        f"tau2: agent={participants.describe_agent(s)} user={participants.describe_user(s)} "
        f"judge={s.judge_model or 'none (NL assertions skipped)'}",
        f"tau2: results={s.results_dir}",
        *_recording_header(s),
    ] + (
        ["tau2: --tau2-concurrency is ignored under xdist (-n): each worker runs one scenario at a time"]
        if s.concurrency > 1 and getattr(config.option, "numprocesses", None)
        else []
    )


def _recording_header(s: Settings) -> list[str]:
    if s.recording is None:
        return []
    from pytest_tau2.llm.cassette import describe_mode

    return [f"tau2: {describe_mode(s.recording, s.cassette_dir, participants.uses_llm(s))}"]


# ---- collection ---------------------------------------------------------------------------------


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if PARAM in metafunc.fixturenames:
        metafunc.parametrize(PARAM, metafunc.config.stash[CATALOG_KEY].params())


class ScenarioCatalog:
    """Every scenario of this run by name, computed once; broken domains keep their error."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.classes: dict[str, type[Scenario]] = {}
        self.errors: dict[str, Exception] = {}
        self._loaded = False

    def _load(self) -> None:
        if not self._loaded:
            found: list[tuple[str, Exception]] = []
            self.classes = all_scenarios(self.settings, found)
            # One item per broken domain carries the error, instead of one traceback per scenario.
            self.errors = {f"{domain}__unavailable": exc for domain, exc in found}
            self._loaded = True

    def params(self) -> list[Any]:
        self._load()
        params = [
            pytest.param(name, id=name, marks=[getattr(pytest.mark, m) for m in ("tau2", *cls.tags)])
            for name, cls in self.classes.items()
        ]
        params += [pytest.param(name, id=name, marks=[pytest.mark.tau2]) for name in self.errors]
        return params

    def get(self, name: str) -> type[Scenario]:
        self._load()
        if name in self.errors:
            raise self.errors[name]
        return self.classes[name]

    def instance(self, name: str) -> Scenario:
        """A fresh scenario object, bound to the run's settings."""
        return self.get(name)().bind(self.settings)


# ---- fixtures -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def tau2_settings(pytestconfig: pytest.Config) -> Settings:
    """The resolved ``--tau2-*`` settings of this run."""
    return pytestconfig.stash[SETTINGS_KEY]


@pytest.fixture
def tau2_scenario(tau2_scenario_name: str, pytestconfig: pytest.Config) -> Scenario:
    """The scenario instance under test."""
    catalog = pytestconfig.stash[CATALOG_KEY]
    return _or_fail(tau2_scenario_name, lambda: catalog.instance(tau2_scenario_name))


def _or_fail(name: str, build: Callable[[], T]) -> T:
    """Run ``build``; show a plugin error (bad data, bad scenario) as its message, not a traceback."""
    message = None
    skip = None
    try:
        return build()
    except ScenarioNotApplicable as exc:
        skip = str(exc)
    except Tau2Error as exc:
        message = f"{name}: {type(exc).__name__}: {exc}"
    if skip is not None:
        pytest.skip(skip)
    # Failing outside the except block keeps pytest from printing "during handling..." chains.
    pytest.fail(message or f"{name}: failed", pytrace=False)


@pytest.fixture
def tau2_context(tau2_scenario: Scenario, tau2_settings: Settings) -> participants.Context:
    """What the built-in participants share: the scenario, its gold plan, usage meter, settings."""
    return _or_fail(tau2_scenario.name, lambda: participants.Context.for_scenario(tau2_scenario, tau2_settings))


@pytest.fixture
def tau2_agent(tau2_context: participants.Context) -> Participant | ProvidesAgentSide:
    """The agent under test. Override in conftest.py to evaluate your own Python agent."""
    return _or_fail(tau2_context.scenario.name, lambda: participants.make_agent(tau2_context))


@pytest.fixture
def tau2_user(tau2_context: participants.Context) -> Participant:
    """The simulated user. Override in conftest.py for a custom user simulator."""
    return _or_fail(tau2_context.scenario.name, lambda: participants.make_user(tau2_context))


@pytest.fixture
def tau2_judge(tau2_context: participants.Context) -> Judge | None:
    """The NL-assertion judge, or None when no judge model is configured."""
    return participants.make_judge(tau2_context)


@pytest.fixture
def tau2_outcome(
    request: pytest.FixtureRequest,
    tau2_scenario: Scenario,
    tau2_context: participants.Context,
    tau2_agent: Participant | ProvidesAgentSide,
    tau2_user: Participant,
    tau2_judge: Judge | None,
    tau2_settings: Settings,
) -> ScenarioOutcome:
    """Run the scenario (setup phase: an infrastructure failure makes the item an *error*)."""
    node = request.node

    def record_property(name: str, value: object) -> None:
        # Same as pytest's record_property fixture, minus its warning under the default xunit2
        # family: JUnit consumers read these properties whatever the family.
        node.user_properties.append((name, value))

    built = (tau2_agent, tau2_user, tau2_judge)
    prefetcher = _prefetcher(request, tau2_settings, all(p is None or tau2_context.built_here(p) for p in built))
    if prefetcher is not None:
        taken = _or_fail(tau2_scenario.name, lambda: prefetcher.take(tau2_scenario.name))
        tau2_scenario, tau2_context = taken.scenario, taken.context
        run: Callable[[], ScenarioOutcome] = taken.future.result
    else:

        def run() -> ScenarioOutcome:
            return asyncio.run(_run(tau2_scenario, tau2_agent, tau2_user, tau2_judge, tau2_settings))

    return _or_fail(
        tau2_scenario.name,
        lambda: _record(run(), tau2_agent, tau2_user, tau2_context, tau2_settings, record_property, request.session),
    )


PREFETCH_KEY = pytest.StashKey["Prefetcher"]()


def _prefetcher(request: pytest.FixtureRequest, settings: Settings, all_builtin: bool) -> Prefetcher | None:
    """The process's Prefetcher when --tau2-concurrency applies to this item, else None."""
    if settings.concurrency <= 1 or _is_worker(request.config):
        return None
    if not all_builtin:
        return None  # an overridden participant fixture: only the item's own fixtures can build it
    prefetcher = request.config.stash.get(PREFETCH_KEY, None)
    if prefetcher is None:
        from pytest_tau2.run.prefetch import Prefetcher

        names = [name for name in map(_scenario_name, request.session.items) if name is not None]
        prefetcher = Prefetcher(
            names,
            settings.concurrency,
            settings,
            request.config.stash[CATALOG_KEY].instance,
        )
        request.config.stash[PREFETCH_KEY] = prefetcher
    return prefetcher


def _record(
    outcome: ScenarioOutcome,
    agent: object,
    user: object,
    tau2_context: participants.Context,
    tau2_settings: Settings,
    record_property: Any,
    session: pytest.Session | None = None,
) -> ScenarioOutcome:
    infra = outcome.conversation.error
    infra_text = tau2_context.redact(str(infra)) if infra is not None else None
    recording = tau2_context.save_cassette()
    metrics = build_metrics(
        outcome,
        models=tau2_context.models(),
        data_pin=tau2_context.data_pin(),
        token_usage=tau2_context.usage.to_dict(),
        agent_kind=participants.describe_agent(tau2_settings, agent, tau2_context),
        user_kind=participants.describe_user(tau2_settings, user, tau2_context),
        infrastructure_error=infra_text,
        recording=recording,
    )
    files.write_scenario_results(
        files.scenario_dir(Path(tau2_settings.results_dir), outcome.scenario.name),
        outcome,
        metrics,
        metadata=tau2_context.metadata(),
        tool_schemas=tau2_context.tool_schemas(),
        save_db=tau2_settings.save_db,
        redact=tau2_context.redact_data,
    )
    for key in ("is_successful", "stop_reason", "stalled", "agent_turns"):
        record_property(key, _prop(metrics[key]))
    for spec in signal_specs():
        record_property(spec.metric, _prop(metrics[spec.metric]))
    if infra_text is not None:
        record_property("infrastructure_error", infra_text)
        if getattr(infra, "fatal", False) and session is not None:
            # Every later scenario would fail the same way (e.g. no API key): stop the run here.
            session.shouldstop = f"stopping the run: {infra_text}"
        raise InfrastructureError(f"infrastructure error, not an agent failure: {infra_text}")
    return outcome


async def _run(
    scenario: Scenario,
    agent: Participant | ProvidesAgentSide,
    user: Participant,
    judge: Judge | None,
    settings: Settings,
) -> ScenarioOutcome:
    """One scenario on this item's own event loop."""
    try:
        return await run_scenario(scenario, agent=agent, user=user, settings=settings, judge=judge)
    finally:
        if participants.uses_llm(settings):
            from pytest_tau2.llm.client import aclose

            await aclose()  # litellm caches one HTTP client per event loop; this loop ends here


def _prop(value: Any) -> str:
    if value is None:
        return "N/A"
    return json.dumps(value) if not isinstance(value, str) else value


# ---- the test function ----------------------------------------------------------------------------


def test_scenario(tau2_outcome: ScenarioOutcome, subtests: Any, tau2_settings: Settings) -> None:
    """One evaluation scenario; each check is a sub-result."""
    outcome = tau2_outcome
    for check in outcome.checks:
        if check.signal not in tuple(outcome.scenario.success_signals):
            continue  # excluded signals are saved in metrics.json, never gate
        with subtests.test(msg=check.id):
            if check.passed is None:
                pytest.skip(check.message)
            if not check.passed:
                pytest.fail(check.message or f"{check.id} failed", pytrace=False)
    if outcome.stalled:
        pytest.fail(
            f"stalled: {outcome.conversation.agent_turns} agent turns, fewer than "
            f"--tau2-min-agent-turns {tau2_settings.min_agent_turns}",
            pytrace=False,
        )
    verdict = outcome.is_successful
    if verdict == "N/A":
        pytest.skip("no applicable success signal: " + ", ".join(outcome.verdict.not_applicable))
    if verdict is not True and not outcome.verdict.failed:
        pytest.fail(f"is_successful is {verdict!r} (scenario's compute_is_successful)", pytrace=False)


# ---- run summary ----------------------------------------------------------------------------------


def _scenario_name(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or PARAM not in callspec.params:
        return None
    return str(callspec.params[PARAM])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--tau2-scenarios``: keep exactly the named scenarios (names or glob patterns)."""
    wanted = config.stash[SETTINGS_KEY].scenarios
    if not wanted:
        return
    patterns = [p.strip() for p in wanted.split(",") if p.strip()]
    names = {item: _scenario_name(item) for item in items}
    known = sorted({n for n in names.values() if n is not None})
    unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(n, p) for n in known)]
    if unmatched:
        hints = {p: difflib.get_close_matches(p, known, n=3) for p in unmatched}
        text = "; ".join(f"{p!r}" + (f" (did you mean {', '.join(h)}?)" if h else "") for p, h in hints.items())
        raise pytest.UsageError(f"--tau2-scenarios: no collected scenario matches {text}")
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        name = names[item]
        selected = name is None or any(fnmatch.fnmatchcase(name, p) for p in patterns)
        (keep if selected else drop).append(item)
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
    settings = session.config.stash[SETTINGS_KEY]
    if (
        participants.uses_llm(settings)
        and settings.recording not in ("none", "once")  # a replay may never need litellm
        and not session.config.option.collectonly
        and not _is_controller_of_workers(session.config)
    ):
        from pytest_tau2.llm.client import preload

        preload()  # import litellm once per process, before the first test's clock starts


def _is_controller_of_workers(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "numprocesses", None)) and not hasattr(config, "workerinput")


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionfinish(session: pytest.Session) -> None:
    prefetcher = session.config.stash.get(PREFETCH_KEY, None)
    if prefetcher is not None:
        prefetcher.close()
