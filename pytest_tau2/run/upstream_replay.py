"""The participants of an upstream run's replay: ``--tau2-agent replay:RESULTS --tau2-user replay``.

Each trial item finds its saved simulation by the scenario's tau2 domain and task id and the item's
trial (upstream's trial + 1), and both sides say and call what they did in it
(:mod:`pytest_tau2.conversation.turn_replay`). An item whose task and trial the file does not hold
is skipped, naming both. The file is checked when pytest starts (:func:`validate`).
"""

from __future__ import annotations

from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.conversation.turn_replay import SavedTurns, split_sides
from pytest_tau2.errors import ScenarioNotApplicable, SettingsError
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.trial_ids import trial_id
from pytest_tau2.settings import Settings
from pytest_tau2.tau2_format.upstream_runs import SavedRun, UpstreamRunsError, is_results, load_runs


def replays_results(argument: str | None) -> bool:
    """Whether a ``replay:`` argument names upstream Results (not a JSON Lines file of tool calls)."""
    return bool(argument) and is_results(argument or "")


def agent_argument(settings: Settings) -> str | None:
    """The ``PATH`` of ``--tau2-agent replay:PATH`` (None for another agent)."""
    name, sep, argument = settings.agent_kind.partition(":")
    return argument if name == "replay" and sep else None


def saved_run(scenario: Scenario, settings: Settings, trial: int, argument: str) -> SavedRun:
    domain, task_id = getattr(scenario, "tau2_domain", ""), getattr(scenario, "tau2_id", "")
    if not domain or not task_id:
        raise ScenarioNotApplicable(f"{scenario.name} is no tau2 task, so {argument} holds no run of it")
    found = load_runs(argument).find(domain, str(task_id), trial)
    if found is None:
        name = trial_id(scenario.name, trial, settings.trials)
        raise ScenarioNotApplicable(
            f"{name}: {argument} holds no {domain} simulation of task {task_id!r} trial {trial - 1} "
            "(upstream numbers trials from 0)"
        )
    return found


def sides(scenario: Scenario, settings: Settings, trial: int) -> tuple[SavedTurns, SavedTurns]:
    """Both sides' saved turns, after what our loop says itself: the task's message history, or the
    fixed greeting when the saved run opens with it."""
    argument = agent_argument(settings) or ""
    messages = [m.model_dump() for m in saved_run(scenario, settings, trial, argument).simulation.turns()]
    history = scenario.message_history or []
    skip = len(history)
    greeting = scenario.agent_greeting
    if not history and greeting and messages and messages[0].get("role") == "assistant":
        skip = 1 if messages[0].get("content") == greeting else 0
    agent, user = split_sides(messages, skip=skip)
    return SavedTurns(agent), SavedTurns(user)


def agent(scenario: Scenario, settings: Settings, trial: int) -> Participant:
    return sides(scenario, settings, trial)[0]


def user(scenario: Scenario, settings: Settings, trial: int) -> Participant:
    return sides(scenario, settings, trial)[1]


def validate(settings: Settings, argument: str) -> None:
    """Refuse a Results file that cannot be replayed, or a run that could not replay it whole."""
    try:
        runs = load_runs(argument)
    except UpstreamRunsError as exc:
        raise SettingsError(str(exc)) from None
    if settings.user_kind != "replay":
        raise SettingsError(
            f"--tau2-agent replay:{argument} replays upstream runs, both sides: add --tau2-user replay "
            f"(the user is {settings.user_kind!r})"
        )
    if runs.max_trial > settings.trials:
        raise SettingsError(
            f"{argument} holds {runs.max_trial} trials per task (upstream's 0..{runs.max_trial - 1}); run with "
            f"--tau2-trials {runs.max_trial} to replay them all"
        )


def validate_user(settings: Settings, argument: str | None) -> None:
    if not replays_results(agent_argument(settings)):
        raise SettingsError(
            "--tau2-user replay replays the saved user turns of upstream runs: it needs "
            "--tau2-agent replay:RESULTS, RESULTS an upstream Results file or a folder of them"
        )
