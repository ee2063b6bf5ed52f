"""The scenario item: its fixtures, the run of its trial, its sub-results and its result payload.

Registered once the adapter wakes up (plugin/session.py); the fixtures that hand out what is
built here are declared by plugin/fixtures.py when pytest starts (that module says why). The
conversation runs in the setup phase (``tau2_outcome``), so an infrastructure failure makes the
item an *error*; the checks are sub-results of the call phase. Every file of the scenario travels in the setup report
(``report.tau2_result``) to the process that owns the results folder (run_report.py).

The item's trial (run/trial.py) is built once: by ``--tau2-concurrency``'s prefetcher when it
started this item's conversation early, else here. The built-in ``tau2_scenario``,
``tau2_context``, ``tau2_agent``, ``tau2_user`` and ``tau2_judge`` fixtures hand out its parts,
so a conftest that overrides one of them simply puts its own object in that part's place.

PYTEST_DONT_REWRITE: the plugin package imports this module before pytest registers it as a
plugin (``pytest_plugins``); it holds no assertions to rewrite.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

from pytest_tau2.errors import InfrastructureError, ResultNotSaved, ScenarioNotApplicable, Tau2Error
from pytest_tau2.plugin import budgeting, prefetching
from pytest_tau2.plugin.keys import (
    CATALOG_KEY,
    RESULT_KEY,
    SAVED_KEY,
    SCENARIO_PROPERTY,
    SETTINGS_KEY,
    result_folder,
    scenario_name,
)
from pytest_tau2.plugin.overrides import FixtureOverrides
from pytest_tau2.report import subresults
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.saving import Saver, SaveTicket
from pytest_tau2.report.subresults import SubResult
from pytest_tau2.run import participants
from pytest_tau2.run.budget import BudgetReached
from pytest_tau2.run.pipeline import Judge
from pytest_tau2.run.prefetch import Prefetched, Prefetcher
from pytest_tau2.run.run_folder import resume_refusal
from pytest_tau2.run.trial import Agent, Trial, TrialResult
from pytest_tau2.settings import Settings

T = TypeVar("T")
OVERRIDES_KEY = pytest.StashKey[FixtureOverrides]()
PROPERTIES_KEY = pytest.StashKey[list[tuple[str, str]]]()
"""The properties this plugin added to the item's ``user_properties`` in its latest run."""
SUBRESULTS_SECTION = "tau2 sub-results (call stdout)"
"""The report section of a passed scenario's sub-results: shown by -rP, pytest-html's log and
TeamCity/PyCharm as the test's output (teamcity-messages takes sections naming the phase and stdout)."""
SUBRESULTS_KEY = pytest.StashKey[list[SubResult]]()
"""The item's sub-results, from its test call to its call report."""
SAVER_KEY = pytest.StashKey[Saver]()
"""Where this process saves each result as soon as it is made (session.py sets it): the results
folder's writer, or (an xdist worker) its link to the controller. Absent: results travel in reports."""
SETUP_TIME_KEY = pytest.StashKey[tuple[float, float]]()
"""A passed setup's duration and start, from its report to the call report (_scenario_time_on_call)."""
ANSWER_TIMEOUT_S = 120.0
"""How long an item waits to hear that its result is saved; past it, the result travels in its report."""


def pytest_configure(config: pytest.Config) -> None:
    overrides = FixtureOverrides()
    config.stash[OVERRIDES_KEY] = overrides
    config.pluginmanager.register(overrides, "tau2-fixture-overrides")


def pytest_runtest_setup(item: pytest.Item) -> None:
    name = scenario_name(item)
    if name is not None:
        # A run again of the same item (pytest-rerunfailures) starts without the properties of
        # the run before: each report carries one run's properties, not every run's.
        earlier = {id(prop) for prop in item.stash.get(PROPERTIES_KEY, [])}
        item.user_properties[:] = [prop for prop in item.user_properties if id(prop) not in earlier]
        # Recorded before anything can fail: JUnit's reshaping (reporting.py) knows every scenario testcase by it.
        item.stash[PROPERTIES_KEY] = []
        _add_properties(item, [(SCENARIO_PROPERTY, name)])


# ---- what the fixtures (plugin/fixtures.py) hand out -----------------------------------------


@dataclass
class ItemTrial:
    """The item's trial, and its run when the prefetcher started it (None: run here)."""

    trial: Trial
    prefetched: Prefetched | None


def settings_of(config: pytest.Config) -> Settings:
    return config.stash[SETTINGS_KEY]


def item_trial(request: pytest.FixtureRequest, name: str, trial_number: int, settings: Settings) -> ItemTrial:
    """The item's trial, built once: taken from the prefetcher when it runs this item, else built here."""
    node = request.node
    config = request.config
    saved = config.stash.get(SAVED_KEY, {})
    prefetcher = None if result_folder(node) in saved else _prefetcher(request, settings)
    if prefetcher is not None and not config.stash[OVERRIDES_KEY].overridden(node):
        taken = _or_fail(name, lambda: prefetcher.take(result_folder(node)))
        return ItemTrial(taken.trial, taken)
    catalog = config.stash[CATALOG_KEY]
    scenario = _or_fail(name, lambda: catalog.instance(name))
    return ItemTrial(_or_fail(name, lambda: Trial(scenario, settings, trial_number)), None)


def agent_of(item: ItemTrial) -> Agent:
    trial = item.trial
    return _or_fail(trial.scenario.name, lambda: trial.agent)


def user_of(item: ItemTrial) -> Any:
    trial = item.trial
    return _or_fail(trial.scenario.name, lambda: trial.user)


def outcome_of(request: pytest.FixtureRequest, item: ItemTrial, agent: Agent, user: Any, judge: Judge | None) -> Any:
    """Run the trial (setup phase: an infrastructure failure makes the item an *error*)."""
    node = request.node
    trial, prefetched = item.trial, item.prefetched
    saved_run = request.config.stash.get(SAVED_KEY, {})
    described_agent, described_user = trial.describe("agent", agent), trial.describe("user", user)
    refused = resume_refusal(saved_run, result_folder(node), described_agent, described_user, trial.settings.resume)
    if refused is not None:  # another agent than the saved results': stop before its conversation
        request.session.shouldstop = refused
        pytest.fail(refused, pytrace=False)
    saved = saved_run.get(result_folder(node))
    if saved is not None:  # --tau2-resume: a complete saved result stands in for the run
        return _resumed(node, saved)
    if prefetched is not None and not trial.all_built_in(agent, user, judge):
        prefetched.future.cancel()  # an override the prefetcher could not see: this item's own run counts
        prefetched = None

    def record() -> Any:
        if prefetched is not None:
            prefetching.use_idle_time(request.config, prefetched.future)
            outcome = prefetched.future.result()  # the loop thread sets .after before this is ready
            made = prefetched.after if isinstance(prefetched.after, _Made) else None
        else:
            outcome = budgeting.run_within_budget(
                request.config, result_folder(node), trial, lambda: trial.run_alone(agent, user, judge)
            )
            made = None
        if made is None:
            made = _made(request.config, trial.result(outcome, agent, user))
        _saved(made)
        recording = made.result.metrics.recording
        if recording is not None and recording.error:
            request.addfinalizer(lambda: _recording_lost(trial.result_name, str(recording.error)))
        _record(node, made.result, request.session)
        return outcome

    return _or_fail(trial.scenario.name, record)


@dataclass
class _Made:
    """A trial's result, and the answer to its save (None: it travels in the item's report)."""

    result: TrialResult
    ticket: SaveTicket | None


def _made(config: pytest.Config, result: TrialResult) -> _Made:
    """Hand the result to be saved as soon as it is made (on whichever thread made it): a
    conversation paid for is on disk whatever order pytest reports items in."""
    saver = config.stash.get(SAVER_KEY, None)
    return _Made(result, saver.submit(result.payload) if saver is not None else None)


def _saved(made: _Made) -> None:
    """Wait for the save's answer: on disk (the report then carries no files), not saved (the item
    is an error, never a pass), or no answer (the files travel in the report, as without a saver)."""
    ticket, payload = made.ticket, made.result.payload
    if ticket is None or not ticket.wait(ANSWER_TIMEOUT_S):
        return
    if ticket.error is not None:
        raise ResultNotSaved(
            f"the result could not be saved: {ticket.error} (the conversation ran and was scored, "
            "but is not counted; the run stops)"
        )
    made.result.payload = {**payload, "files": {}, "saved": True}


def _recording_lost(name: str, error: str) -> None:
    """The cassette could not be written: an error of the item's teardown, its verdict untouched."""
    pytest.fail(f"{name}: the recording could not be saved: {error} (the result is saved and scored)", pytrace=False)


def _or_fail(name: str, build: Callable[[], T]) -> T:
    """Run ``build``; show a plugin error (bad data, bad scenario) as its message, not a traceback."""
    message = None
    skip = None
    try:
        return build()
    except (ScenarioNotApplicable, BudgetReached) as exc:
        skip = str(exc)
    except Tau2Error as exc:
        message = f"{name}: {type(exc).__name__}: {exc}"
    if skip is not None:
        pytest.skip(skip)
    # Failing outside the except block keeps pytest from printing "during handling..." chains.
    pytest.fail(message or f"{name}: failed", pytrace=False)


def _prefetcher(request: pytest.FixtureRequest, settings: Settings) -> Prefetcher | None:
    """The process's Prefetcher when --tau2-concurrency applies, else None."""
    if settings.concurrency <= 1:
        return None
    # Item ids: the scenario name, or <name>-t<k> for one of several trials. Not to prefetch
    # (None): results --tau2-resume takes from the saved run, and items whose participant
    # fixtures a conftest overrides (no model call is spent on a conversation nobody uses).
    config = request.config
    saved = config.stash.get(SAVED_KEY, {})
    overrides = config.stash[OVERRIDES_KEY]

    agent, user = participants.describe_agent(settings), participants.describe_user(settings)

    def prefetchable(item: pytest.Item) -> str | None:
        if scenario_name(item) is None or overrides.overridden(item):
            return None
        folder = result_folder(item)
        if folder in saved or resume_refusal(saved, folder, agent, user, settings.resume) is not None:
            return None  # reported from the saved run, or refused by it (tau2_outcome says why)
        return folder

    return prefetching.prefetcher_for(
        request,
        settings,
        lambda: [prefetchable(item) for item in request.session.items],
        config.stash[CATALOG_KEY].instance,
        after_run=lambda outcome, p: _made(config, p.trial.result(outcome, p.trial.agent, p.trial.user)),
    )


def _record(node: pytest.Item, result: TrialResult, session: pytest.Session) -> None:
    node.stash[RESULT_KEY] = result.payload
    _record_properties(node, result.metrics)
    if result.infra_text is not None:
        if result.fatal:
            # Every later scenario would fail the same way (e.g. no API key): stop the run here.
            session.shouldstop = f"stopping the run: {result.infra_text}"
        raise InfrastructureError(f"infrastructure error, not an agent failure: {result.infra_text}")


def _record_properties(node: pytest.Item, metrics: ScenarioRecord) -> None:
    # Like pytest's record_property fixture, minus its warning under the default xunit2 family:
    # JUnit consumers read these properties whatever the family.
    _add_properties(node, metrics.junit_properties())


def _add_properties(node: pytest.Item, properties: list[tuple[str, str]]) -> None:
    node.user_properties += properties
    node.stash.setdefault(PROPERTIES_KEY, []).extend(properties)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Attach the scenario's result payload to its setup report: it travels with the report
    (xdist serializes the report's attributes) to the process that writes the results folder."""
    report = yield
    if scenario_name(item) is not None:
        _scenario_time_on_call(item, call, report)
    if call.when == "setup" and RESULT_KEY in item.stash:
        report.tau2_result = item.stash[RESULT_KEY]
        del item.stash[RESULT_KEY]  # the report holds it now; items live as long as the session
    elif call.when == "call" and SUBRESULTS_KEY in item.stash:
        gated: list[SubResult] = item.stash[SUBRESULTS_KEY]
        report.tau2_subresults = subresults.to_report(gated)
        if report.passed:  # a failure's text lists them already; this is the output IDEs show for a passed test
            report.sections.append((SUBRESULTS_SECTION, "\n".join(subresults.lines(gated)) + "\n"))
        del item.stash[SUBRESULTS_KEY]
    return report


def _scenario_time_on_call(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """The conversation runs in setup, but runners take a test's time from its call report
    (TeamCity/PyCharm, JUnit's ``junit_duration_report=call``, ``--durations``' call line): a
    passed setup's time moves onto the call report, so the total (JUnit's default) stays the
    same and the call report carries the scenario's time. A setup that fails or skips keeps its
    time (there is no call report then); so does ``--setup-only``/``--setup-plan``."""
    if call.when == "setup":
        if SETUP_TIME_KEY in item.stash:
            del item.stash[SETUP_TIME_KEY]
        options = item.config.option
        if report.passed and not (getattr(options, "setuponly", False) or getattr(options, "setupplan", False)):
            item.stash[SETUP_TIME_KEY] = (report.duration, report.start)
            report.duration = 0.0
    elif call.when == "call" and SETUP_TIME_KEY in item.stash:
        duration, start = item.stash[SETUP_TIME_KEY]
        del item.stash[SETUP_TIME_KEY]
        report.duration += duration
        report.start = start


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


PLUGIN_DISABLED = "not config.pluginmanager.has_plugin('tau2-adapter')"
"""The condition of test_scenario's skipif: a string, which pytest evaluates at setup, before
looking for the fixtures (absent under ``-p no:tau2``)."""


def pytest_itemcollected(item: pytest.Item) -> None:
    """With the adapter here the skipif cannot apply, so a scenario item does not carry it: VS
    Code's pytest adapter takes any skipif with a truthy argument (a string is) for a skip and
    shows the test skipped before it runs (docs/ci.md). Under ``-p no:tau2`` this hook is not
    registered, and the marker skips the items with its reason."""
    if getattr(item, "function", None) is test_scenario:
        item.own_markers[:] = [m for m in item.own_markers if not (m.name == "skipif" and m.args == (PLUGIN_DISABLED,))]


@pytest.mark.skipif(PLUGIN_DISABLED, reason="pytest-tau2 is disabled here (-p no:tau2): its scenarios are not run")
def test_scenario(tau2_outcome: Any, tau2_settings: Settings, request: pytest.FixtureRequest) -> None:
    """One evaluation scenario; each check is a sub-result of its call report (plugin/reporting.py)."""
    if isinstance(tau2_outcome, SavedResult):
        m = tau2_outcome.metrics
        checks = [(c.id, c.signal, c.passed, c.message) for c in m.checks]
        gating: tuple[str, ...] = tuple(m.success_signals)
        stalled, turns, verdict = m.stalled, m.agent_turns, m.is_successful
        breakdown = m.success_breakdown.model_dump()
        divergence = str((m.first_divergence or {}).get("summary") or "")
    else:
        outcome = tau2_outcome
        checks = [(c.id, c.signal, c.passed, c.message) for c in outcome.checks]
        gating = tuple(outcome.scenario.success_signals)
        stalled, turns, verdict = outcome.stalled, outcome.conversation.agent_turns, outcome.is_successful
        breakdown = outcome.verdict.breakdown()
        divergence = outcome.first_divergence.summary() if outcome.first_divergence is not None else ""
    # Excluded signals are saved in metrics.json, never gate: only the gating checks are sub-results.
    gated = [SubResult(check_id, passed, message) for check_id, signal, passed, message in checks if signal in gating]
    # Not pytest subtests: each of those is a test report of its own, which pytest's counts, -x,
    # IDEs (VS Code takes the first call report for the test's outcome) and CI adapters count as
    # a test. The call report carries them instead (reporting.py shows and counts them).
    request.node.stash[SUBRESULTS_KEY] = gated
    stall = f"stalled: {turns} agent turns, fewer than --tau2-min-agent-turns {tau2_settings.min_agent_turns}"
    where = [f"first divergence from gold: {divergence}"] if divergence else []
    if any(result.passed is False for result in gated):
        # The item fails naming every sub-result, with the full message of each failed one.
        pytest.fail(subresults.failure_text(gated, *([stall] if stalled else []), *where), pytrace=False)
    if stalled:
        pytest.fail("\n".join([stall, *where]), pytrace=False)
    if verdict == "N/A":
        pytest.skip("no applicable success signal: " + ", ".join(breakdown["not_applicable"]))
    if verdict is not True and not breakdown["failed"]:
        pytest.fail(f"is_successful is {verdict!r} (scenario's compute_is_successful)", pytrace=False)
