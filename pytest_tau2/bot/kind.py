"""``--tau2-agent websocket``: an external bot over the WebSocket protocol (docs/websocket.md).

The kind lives with the protocol it speaks and registers itself when the extension registry
loads (extension/registry.py, ``BUILTINS``); the participant table (run/participants.py) never
imports this package. The client (:mod:`.client`) is imported when a trial builds its agent.
"""

from __future__ import annotations

from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.errors import ScenarioNotApplicable, SettingsError
from pytest_tau2.llm.secrets import mask_url
from pytest_tau2.run.participants import ParticipantKind, register_participant_kind
from pytest_tau2.run.view import TrialView
from pytest_tau2.settings import Settings


def _websocket(view: TrialView, argument: str | None) -> Participant:
    from pytest_tau2.bot.client import WebSocketAgent

    scenario = view.scenario
    if scenario.message_history:
        raise ScenarioNotApplicable(
            f"{scenario.name} opens with a message history, which the bot protocol does not carry (run it in process)"
        )
    if getattr(scenario, "sides_share_db", False) and "user" in scenario.sides:
        raise ScenarioNotApplicable(
            f"{scenario.name}: agent and customer share one DB, which a bot cannot hold for both (run it in process)"
        )
    settings = view.settings
    return WebSocketAgent(settings.agent_url or "", scenario, settings, reply_timeout=settings.agent_timeout)


def _validate_websocket(settings: Settings, argument: str | None) -> None:
    if not settings.agent_url:
        raise SettingsError("--tau2-agent websocket needs --tau2-agent-url ws://HOST:PORT")


WEBSOCKET = ParticipantKind(
    "websocket", "agent", _websocket, "an external bot (--tau2-agent-url)",
    validate=_validate_websocket, describe=lambda s, _: f"websocket:{mask_url(s.agent_url or '')}",
)  # fmt: skip
register_participant_kind(WEBSOCKET)
