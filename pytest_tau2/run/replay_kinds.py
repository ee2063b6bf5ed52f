"""The replay kinds: ``--tau2-agent replay:PATH`` (recorded tool calls from a replay file, or an
upstream run's saved turns) and ``--tau2-user replay`` (the saved user turns of such a run).

They live beside the replays they read (conversation/replay.py, run/upstream_replay.py) and
register themselves when the extension registry loads (extension/registry.py, ``BUILTINS``).
Those replays are imported when a replay kind is used (upstream's models cost ~0.4 s to import).
"""

from __future__ import annotations

from typing import Any

from pytest_tau2.conversation.offline import OracleAgent
from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.errors import ScenarioNotApplicable, SettingsError
from pytest_tau2.run.participants import ParticipantKind, register_participant_kind
from pytest_tau2.run.view import TrialView
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.settings import Settings


def _replayed_actions(scenario: Scenario, argument: str | None) -> list[dict[str, Any]] | None:
    """The recorded actions of ``scenario`` in the replay file (None: an upstream run, or absent)."""
    from pytest_tau2.conversation.replay import load_replay_file
    from pytest_tau2.run import upstream_replay

    if argument is None or upstream_replay.replays_results(argument):
        return None  # an upstream run replays its saved turns (run/upstream_replay.py), not a plan
    return load_replay_file(argument).get(scenario.name)


def _replay(view: TrialView, argument: str | None) -> Participant:
    from pytest_tau2.run import upstream_replay

    if upstream_replay.replays_results(argument):
        return upstream_replay.agent(view.scenario, view.settings, view.trial)
    if _replayed_actions(view.scenario, argument) is None:
        raise ScenarioNotApplicable(f"{view.scenario.name} is not in the replay file {argument}")
    return OracleAgent(view.plan, min_turns=max(view.settings.min_agent_turns, 1))


def _validate_replay(settings: Settings, argument: str | None) -> None:
    from pytest_tau2.conversation.replay import ReplayFileError, load_replay_file
    from pytest_tau2.run import upstream_replay

    if upstream_replay.replays_results(argument):
        upstream_replay.validate(settings, argument or "")
        return
    try:
        load_replay_file(argument or "")
    except ReplayFileError as exc:
        raise SettingsError(str(exc)) from None


def _replay_user(view: TrialView, argument: str | None) -> Participant:
    from pytest_tau2.run import upstream_replay

    return upstream_replay.user(view.scenario, view.settings, view.trial)


def _validate_replay_user(settings: Settings, argument: str | None) -> None:
    from pytest_tau2.run import upstream_replay

    upstream_replay.validate_user(settings, argument)


REPLAY_AGENT = ParticipantKind(
    "replay", "agent", _replay, "recorded tool calls from a replay file", argument="PATH",
    follows_plan=True, validate=_validate_replay, plan=_replayed_actions,
)  # fmt: skip
REPLAY_USER = ParticipantKind(
    "replay", "user", _replay_user, "the saved user turns of --tau2-agent replay:RESULTS (upstream runs)",
    validate=_validate_replay_user,
)  # fmt: skip

register_participant_kind(REPLAY_AGENT)
register_participant_kind(REPLAY_USER)
