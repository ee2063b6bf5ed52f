"""The scenario item: its fixtures, the run of its scenario, its sub-results and its result payload.

Part of the pytest adapter (with plugin.py, which imports everything here so pytest finds the
fixtures and the test function on the plugin module). The conversation runs in the setup phase
(``tau2_outcome``), so an infrastructure failure makes the item an *error*; the checks are
sub-results of the call phase. Every file of the scenario travels in the setup report
(``report.tau2_result``) to the process that owns the results folder (run_report.py).

PYTEST_DONT_REWRITE: plugin.py imports this module before pytest registers it as a plugin
(``pytest_plugins``); it holds no assertions to rewrite.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from pytest_tau2 import concurrency
from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.errors import InfrastructureError, ScenarioNotApplicable, Tau2Error
from pytest_tau2.report import files, subresults
from pytest_tau2.report.metrics import build_record
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.subresults import SubResult
from pytest_tau2.run import participants
from pytest_tau2.run.agent_side import ProvidesAgentSide
from pytest_tau2.run.outcome import ScenarioOutcome
from pytest_tau2.run.pipeline import Judge, run_scenario
from pytest_tau2.run.trials import split_trial_id, trial_id
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.settings import Settings

if TYPE_CHECKING:
    from pytest_tau2.plugin import ScenarioCatalog
    from pytest_tau2.run.prefetch import Prefetcher

T = TypeVar("T")
SETTINGS_KEY = pytest.StashKey[Settings]()
CATALOG_KEY = pytest.StashKey["ScenarioCatalog"]()
RESULT_KEY = pytest.StashKey[dict[str, Any]]()
SAVED_KEY = pytest.StashKey[dict[str, dict[str, Any]]]()
"""``--tau2-resume``: the complete saved metrics by result folder."""
"""The item's result payload (files + metrics), attached to its setup report."""
PARAM = "tau2_scenario_name"
TRIAL_PARAM = "tau2_trial"


# ---- fixtures -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def tau2_settings(pytestconfig: pytest.Config) -> Settings:
    """The resolved ``--tau2-*`` settings of this run."""
    return pytestconfig.stash[SETTINGS_KEY]


@pytest.fixture
def tau2_scenario(tau2_scenario_name: str, pytestconfig: pytest.Config) -> Scenario:
    """The scenario instance under test."""
    catalog: ScenarioCatalog = pytestconfig.stash[CATALOG_KEY]
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
def tau2_trial() -> int:
    """Which trial of its scenario the item is: 1, or 1..K under ``--tau2-trials K`` (K > 1
    parametrizes this name, ids ``<scenario>-t<k>``)."""
    return 1


@pytest.fixture
def tau2_context(tau2_scenario: Scenario, tau2_settings: Settings, tau2_trial: int) -> participants.Context:
    """What the built-in participants share: the scenario, its gold plan, usage meter, settings, trial."""
    return _or_fail(
        tau2_scenario.name, lambda: participants.Context.for_scenario(tau2_scenario, tau2_settings, trial=tau2_trial)
    )


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
    saved = request.config.stash[SAVED_KEY].get(result_folder(node)) if SAVED_KEY in request.config.stash else None
    if saved is not None:  # --tau2-resume: a complete saved result stands in for the run
        return _resumed(node, saved)  # type: ignore[return-value]
    built = (tau2_agent, tau2_user, tau2_judge)
    prefetcher = _prefetcher(request, tau2_settings, all(p is None or tau2_context.built_here(p) for p in built))
    if prefetcher is not None:
        taken = _or_fail(tau2_scenario.name, lambda: prefetcher.take(result_folder(node)))
        # The prefetcher built and ran its own built-in participants: name those, not the fixtures'.
        tau2_scenario, tau2_context, tau2_agent, tau2_user = taken.scenario, taken.context, taken.agent, taken.user
        concurrency.use_idle_time(request.config, taken.future)

        def run() -> tuple[ScenarioOutcome, _Result | None]:
            outcome = taken.future.result()  # the loop thread sets taken.after before this is ready
            return outcome, taken.after if isinstance(taken.after, _Result) else None
    else:

        def run() -> tuple[ScenarioOutcome, _Result | None]:
            return asyncio.run(_run(tau2_scenario, tau2_agent, tau2_user, tau2_judge, tau2_settings)), None

    def record() -> ScenarioOutcome:
        outcome, made = run()
        return _record(outcome, tau2_agent, tau2_user, tau2_context, tau2_settings, node, request.session, made)

    return _or_fail(tau2_scenario.name, record)


def _prefetcher(request: pytest.FixtureRequest, settings: Settings, all_builtin: bool) -> Prefetcher | None:
    """The process's Prefetcher when --tau2-concurrency applies to this item, else None."""
    if settings.concurrency <= 1 or not all_builtin:
        return None  # an overridden participant fixture: only the item's own fixtures can build it
    # Item ids: the scenario name, or <name>-t<k> for one of several trials. Not to prefetch
    # (None): results --tau2-resume takes from the saved run, and items whose participant
    # fixtures a conftest overrides (no model call is spent on a conversation nobody uses).
    saved = request.config.stash.get(SAVED_KEY, {})

    def prefetchable(item: pytest.Item) -> str | None:
        if _scenario_name(item) is None or not _builtin_participants(item):
            return None
        folder = result_folder(item)
        return None if folder in saved else folder

    return concurrency.prefetcher_for(
        request,
        settings,
        lambda: [prefetchable(item) for item in request.session.items],
        request.config.stash[CATALOG_KEY].instance,
        after_run=lambda outcome, p: _result_of(outcome, p.agent, p.user, p.context, settings, p.name),
    )


@dataclass
class _Result:
    """A finished scenario as the results folder and the JUnit properties will hold it."""

    metrics: ScenarioRecord
    payload: dict[str, Any]
    infra_text: str | None


def _builtin_participants(item: pytest.Item) -> bool:
    """Whether the item's agent, user and judge fixtures are this module's (not overridden in a
    conftest): only then can the prefetcher run its conversation. Unknown: assume so, and the
    item's own check (``Context.built_here``) still decides whether it takes the prefetched run."""
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", None) or {}
    for name in ("tau2_agent", "tau2_user", "tau2_judge"):
        chain = defs.get(name)
        if chain and getattr(chain[-1].func, "__module__", __name__) != __name__:
            return False
    return True


def _result_of(
    outcome: ScenarioOutcome,
    agent: object,
    user: object,
    tau2_context: participants.Context,
    tau2_settings: Settings,
    folder: str,
) -> _Result:
    """Metrics and file texts of one outcome: no pytest in it, so the prefetcher builds it on
    its loop thread as each conversation ends (the item's thread then has little left to do)."""
    infra = outcome.conversation.error
    infra_text = tau2_context.redact(str(infra)) if infra is not None else None
    recording = tau2_context.save_cassette()
    metrics = build_record(
        outcome,
        models=tau2_context.models(),
        data_pin=tau2_context.data_pin(),
        token_usage=tau2_context.usage.to_dict(),
        agent_kind=participants.describe_agent(tau2_settings, agent, tau2_context),
        user_kind=participants.describe_user(tau2_settings, user, tau2_context),
        infrastructure_error=infra_text,
        trial=tau2_context.trial_record(),
        recording=recording,
    )
    payload = files.scenario_payload(
        folder,
        outcome,
        metrics,
        metadata=tau2_context.metadata(),
        tool_schemas=tau2_context.tool_schemas(),
        save_db=tau2_settings.save_db,
        redact=tau2_context.redact_data,
    )
    return _Result(metrics, payload, infra_text)


def _record(
    outcome: ScenarioOutcome,
    agent: object,
    user: object,
    tau2_context: participants.Context,
    tau2_settings: Settings,
    node: pytest.Item,
    session: pytest.Session | None = None,
    made: _Result | None = None,
) -> ScenarioOutcome:
    result = made or _result_of(outcome, agent, user, tau2_context, tau2_settings, result_folder(node))
    node.stash[RESULT_KEY] = result.payload
    _record_properties(node, result.metrics)
    infra_text = result.infra_text
    if infra_text is not None:
        if getattr(outcome.conversation.error, "fatal", False) and session is not None:
            # Every later scenario would fail the same way (e.g. no API key): stop the run here.
            session.shouldstop = f"stopping the run: {infra_text}"
        raise InfrastructureError(f"infrastructure error, not an agent failure: {infra_text}")
    return outcome


def _record_properties(node: pytest.Item, metrics: ScenarioRecord) -> None:
    # Like pytest's record_property fixture, minus its warning under the default xunit2 family:
    # JUnit consumers read these properties whatever the family.
    node.user_properties += metrics.junit_properties()


def result_folder(node: pytest.Item) -> str:
    """The item's folder in the results dir: its parameter id (the scenario name, or
    ``<name>-t<k>`` for one of several trials)."""
    callspec = getattr(node, "callspec", None)
    return callspec.id if callspec is not None else node.name


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Attach the scenario's result payload to its setup report: it travels with the report
    (xdist serializes the report's attributes) to the process that writes the results folder."""
    report = yield
    if call.when == "setup" and RESULT_KEY in item.stash:
        report.tau2_result = item.stash[RESULT_KEY]
        del item.stash[RESULT_KEY]  # the report holds it now; items live as long as the session
    return report


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


# ---- the test function ----------------------------------------------------------------------------


@dataclass
class SavedResult:
    """A scenario's verdict read back from its saved metrics.json (``--tau2-resume``)."""

    metrics: ScenarioRecord


def _resumed(node: pytest.Item, saved: dict[str, Any]) -> SavedResult:
    metrics = ScenarioRecord.read(saved).model_copy(update={"resumed": True})
    node.stash[RESULT_KEY] = {"folder": result_folder(node), "metrics": metrics.document(), "files": {}}
    _record_properties(node, metrics)
    return SavedResult(metrics)


def test_scenario(
    tau2_outcome: ScenarioOutcome | SavedResult, subtests: Any, tau2_settings: Settings, pytestconfig: pytest.Config
) -> None:
    """One evaluation scenario; each check is a sub-result."""
    if isinstance(tau2_outcome, SavedResult):
        m = tau2_outcome.metrics
        checks = [(c.id, c.signal, c.passed, c.message) for c in m.checks]
        gating: tuple[str, ...] = tuple(m.success_signals)
        stalled, turns, verdict = m.stalled, m.agent_turns, m.is_successful
        breakdown = m.success_breakdown.model_dump()
    else:
        outcome = tau2_outcome
        checks = [(c.id, c.signal, c.passed, c.message) for c in outcome.checks]
        gating = tuple(outcome.scenario.success_signals)
        stalled, turns, verdict = outcome.stalled, outcome.conversation.agent_turns, outcome.is_successful
        breakdown = outcome.verdict.breakdown()
    # Excluded signals are saved in metrics.json, never gate: only the gating checks are sub-results.
    gated = [SubResult(check_id, passed, message) for check_id, signal, passed, message in checks if signal in gating]
    with _subtests_without_capture(pytestconfig):
        for result in gated:
            with subtests.test(msg=result.id):
                if result.passed is None:
                    pytest.skip(result.message or f"{result.id}: not applicable")
                if not result.passed:
                    pytest.fail(result.message or f"{result.id} failed", pytrace=False)
    stall = f"stalled: {turns} agent turns, fewer than --tau2-min-agent-turns {tau2_settings.min_agent_turns}"
    if any(result.passed is False for result in gated):
        # The item fails on its own, naming every sub-result: JUnit XML shows this testcase, not
        # its subtests (plugin.py keeps those out of it), so the failure text must carry them.
        pytest.fail(subresults.failure_text(gated, *([stall] if stalled else [])), pytrace=False)
    if stalled:
        pytest.fail(stall, pytrace=False)
    if verdict == "N/A":
        pytest.skip("no applicable success signal: " + ", ".join(breakdown["not_applicable"]))
    if verdict is not True and not breakdown["failed"]:
        pytest.fail(f"is_successful is {verdict!r} (scenario's compute_is_successful)", pytrace=False)


@contextlib.contextmanager
def _subtests_without_capture(config: pytest.Config) -> Iterator[None]:
    """Sub-results that capture no output of their own (the test's capture still runs).

    With ``--capture=fd`` (the default) pytest's subtests open two temporary files per
    sub-result to capture what its block prints; a check's block prints nothing (it only
    skips or fails), and those files cost ~0.3 ms per sub-result, ~0.8 ms per retail scenario
    (more on slow file systems). Subtests read the option as each one starts, so it is
    switched off around the checks and restored after.
    """
    option = config.option
    saved = getattr(option, "capture", None)
    option.capture = "no"
    try:
        yield
    finally:
        option.capture = saved


def _scenario_name(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or PARAM not in callspec.params:
        return None
    return str(callspec.params[PARAM])


# ---- trials -------------------------------------------------------------------------------------


def trial_params(names: list[Any], errors: set[str], trials: int) -> list[Any]:
    """``(scenario, trial)`` parameters for ``--tau2-trials`` > 1, ids ``<scenario>-t<k>``, the
    trials of a scenario next to each other. ``names`` are the one-trial parameters (pytest.param
    of the scenario name); an unavailable domain's error item stays a single trial-1 item."""
    params = []
    for param in names:
        name = str(param.values[0])
        count = 1 if name in errors else trials
        ids = [param.id] if name in errors else [trial_id(name, k, trials) for k in range(1, count + 1)]
        params += [pytest.param(name, k, id=ids[k - 1], marks=param.marks) for k in range(1, count + 1)]
    return params


def selection_patterns(patterns: list[str], trials: int) -> list[str]:
    """``--tau2-scenarios`` patterns as scenario selectors: ``<name>-t<k>`` selects ``<name>``
    (:func:`narrow_to_trials` then keeps the named trial)."""
    plain, narrowed = split_trial_patterns(patterns, trials)
    return plain + [name for name, _ in narrowed]


def split_trial_patterns(patterns: list[str], trials: int) -> tuple[list[str], list[tuple[str, int]]]:
    """The plain patterns, and the ``(name pattern, trial)`` pairs of ``<name>-t<k>`` patterns."""
    if trials <= 1:
        return patterns, []
    plain: list[str] = []
    narrowed: list[tuple[str, int]] = []
    for pattern in patterns:
        name, trial = split_trial_id(pattern)
        if trial is None:
            plain.append(pattern)
        elif trial > trials:
            raise pytest.UsageError(f"--tau2-scenarios: {pattern!r} names trial {trial}, but --tau2-trials is {trials}")
        else:
            narrowed.append((name, trial))
    return plain, narrowed


def narrow_to_trials(config: pytest.Config, items: list[pytest.Item], patterns: list[str]) -> None:
    """Keep only the named trials of scenarios that ``--tau2-scenarios`` selected by a trial pattern alone."""
    plain, narrowed = split_trial_patterns(patterns, config.stash[SETTINGS_KEY].trials)
    if not narrowed:
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        name = _scenario_name(item)
        trial = item.callspec.params.get(TRIAL_PARAM) if name is not None else None  # type: ignore[attr-defined]
        wanted = (
            name is None
            or trial is None
            or any(fnmatch.fnmatchcase(name, p) for p in plain)
            or any(fnmatch.fnmatchcase(name, p) and trial == k for p, k in narrowed)
        )
        (keep if wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
