"""The scenario item: its fixtures, the run of its trial, its sub-results and its result payload.

Registered once the adapter wakes up (plugin/run_state.py); the fixtures that hand out what is
built here are declared by plugin/fixtures.py when pytest starts (that module says why). The
conversation runs in the setup phase (``tau2_outcome``), so an infrastructure failure makes the
item an *error*; the checks are sub-results of the call phase. Every file of the scenario travels in the setup report
(``report.tau2_result``) to the process that owns the results folder (run_report.py).

The item's trial (run/trial.py) is built once: by ``--tau2-concurrency``'s prefetcher when it
started this item's conversation early, else here; the item asks the run for it
(run_state.py:Tau2Run.trial_for). What the item carries between its phases is one stash entry
(:class:`ItemState`). The built-in ``tau2_scenario``,
``tau2_context``, ``tau2_agent``, ``tau2_user`` and ``tau2_judge`` fixtures hand out its parts,
so a conftest that overrides one of them simply puts its own object in that part's place.

PYTEST_DONT_REWRITE: the plugin package imports this module before pytest registers it as a
plugin (``pytest_plugins``); it holds no assertions to rewrite.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest

from pytest_tau2.errors import InfrastructureError, ResultNotSaved, ScenarioNotApplicable, Tau2Error
from pytest_tau2.plugin import budgeting
from pytest_tau2.plugin.keys import SCENARIO_PROPERTY, result_folder, scenario_name
from pytest_tau2.plugin.run_state import ItemTrial, Made, run_of
from pytest_tau2.report import subresults
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.subresults import SubResult
from pytest_tau2.run.budget import BudgetReached
from pytest_tau2.run.pipeline import Judge
from pytest_tau2.run.run_folder import resume_refusal
from pytest_tau2.run.trial import Agent, TrialResult
from pytest_tau2.settings import Settings

T = TypeVar("T")
SUBRESULTS_SECTION = "tau2 sub-results (call stdout)"
"""The report section of a passed scenario's sub-results: shown by -rP, pytest-html's log and
TeamCity/PyCharm as the test's output (teamcity-messages takes sections naming the phase and stdout)."""
ANSWER_TIMEOUT_S = 120.0
"""How long an item waits to hear that its result is saved; past it, the result travels in its report."""


@dataclass
class ItemState:
    """What a scenario item carries from one of its phases to a later one."""

    properties: list[tuple[str, str]] = field(default_factory=list)
    """The properties this plugin added to the item's ``user_properties`` in its latest run."""
    result: dict[str, Any] | None = None
    """The result payload (files + metrics), from the setup phase to its setup report."""
    subresults: list[SubResult] | None = None
    """The sub-results, from the test call to its call report."""
    setup_time: tuple[float, float] | None = None
    """A passed setup's duration and start, from its report to the call report (_scenario_time_on_call)."""


ITEM_KEY = pytest.StashKey[ItemState]()


def _state(item: pytest.Item) -> ItemState:
    return item.stash.setdefault(ITEM_KEY, ItemState())


def pytest_runtest_setup(item: pytest.Item) -> None:
    name = scenario_name(item)
    if name is not None:
        # A run again of the same item (pytest-rerunfailures) starts without the properties of
        # the run before: each report carries one run's properties, not every run's.
        state = _state(item)
        earlier = {id(prop) for prop in state.properties}
        item.user_properties[:] = [prop for prop in item.user_properties if id(prop) not in earlier]
        # Recorded before anything can fail: JUnit's reshaping (reporting.py) knows every scenario testcase by it.
        state.properties = []
        _add_properties(item, [(SCENARIO_PROPERTY, name)])


# ---- what the fixtures (plugin/fixtures.py) hand out -----------------------------------------


def settings_of(config: pytest.Config) -> Settings:
    return run_of(config).settings


def item_trial(request: pytest.FixtureRequest, name: str, trial_number: int, settings: Settings) -> ItemTrial:
    """The item's trial, built once: taken from the prefetcher when it runs this item, else built here."""
    run = run_of(request.config)
    return _or_fail(name, lambda: run.trial_for(request.node, name, trial_number, settings))


def agent_of(item: ItemTrial) -> Agent:
    trial = item.trial
    return _or_fail(trial.scenario.name, lambda: trial.agent)


def user_of(item: ItemTrial) -> Any:
    trial = item.trial
    return _or_fail(trial.scenario.name, lambda: trial.user)


def outcome_of(request: pytest.FixtureRequest, item: ItemTrial, agent: Agent, user: Any, judge: Judge | None) -> Any:
    """Run the trial (setup phase: an infrastructure failure makes the item an *error*)."""
    node = request.node
    run = run_of(request.config)
    trial, prefetched = item.trial, item.prefetched
    saved_run = run.saved
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
            run.idle.use_idle_time(prefetched.future)
            outcome = prefetched.future.result()  # the loop thread sets .after before this is ready
            made = prefetched.after if isinstance(prefetched.after, Made) else None
        else:
            outcome = budgeting.run_within_budget(
                run.budget, result_folder(node), trial, lambda: trial.run_alone(agent, user, judge)
            )
            made = None
        if made is None:
            made = run.made(trial.result(outcome, agent, user))
        _saved(made)
        recording = made.result.metrics.recording
        if recording is not None and recording.error:
            request.addfinalizer(lambda: _recording_lost(trial.result_name, str(recording.error)))
        _record(node, made.result, request.session)
        return outcome

    return _or_fail(trial.scenario.name, record)


def _saved(made: Made) -> None:
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


def _record(node: pytest.Item, result: TrialResult, session: pytest.Session) -> None:
    _state(node).result = result.payload
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
    _state(node).properties.extend(properties)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Attach the scenario's result payload to its setup report: it travels with the report
    (xdist serializes the report's attributes) to the process that writes the results folder."""
    report = yield
    if scenario_name(item) is not None:
        _scenario_time_on_call(item, call, report)
    state = item.stash.get(ITEM_KEY, None)
    if state is None:
        return report
    if call.when == "setup" and state.result is not None:
        report.tau2_result = state.result
        state.result = None  # the report holds it now; items live as long as the session
    elif call.when == "call" and state.subresults is not None:
        gated = state.subresults
        report.tau2_subresults = subresults.to_report(gated)
        if report.passed:  # a failure's text lists them already; this is the output IDEs show for a passed test
            report.sections.append((SUBRESULTS_SECTION, "\n".join(subresults.lines(gated)) + "\n"))
        state.subresults = None
    return report


def _scenario_time_on_call(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """The conversation runs in setup, but runners take a test's time from its call report
    (TeamCity/PyCharm, JUnit's ``junit_duration_report=call``, ``--durations``' call line): a
    passed setup's time moves onto the call report, so the total (JUnit's default) stays the
    same and the call report carries the scenario's time. A setup that fails or skips keeps its
    time (there is no call report then); so does ``--setup-only``/``--setup-plan``."""
    state = _state(item)
    if call.when == "setup":
        state.setup_time = None
        options = item.config.option
        if report.passed and not (getattr(options, "setuponly", False) or getattr(options, "setupplan", False)):
            state.setup_time = (report.duration, report.start)
            report.duration = 0.0
    elif call.when == "call" and state.setup_time is not None:
        duration, start = state.setup_time
        state.setup_time = None
        report.duration += duration
        report.start = start


# ---- the test function ----------------------------------------------------------------------------


@dataclass
class SavedResult:
    """A scenario's verdict read back from its saved metrics.json (``--tau2-resume``)."""

    metrics: ScenarioRecord


def _resumed(node: pytest.Item, saved: dict[str, Any]) -> SavedResult:
    metrics = ScenarioRecord.read(saved).model_copy(update={"resumed": True})
    _state(node).result = {"folder": result_folder(node), "metrics": metrics.document(), "files": {}}
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
    _state(request.node).subresults = gated
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
