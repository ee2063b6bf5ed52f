"""``--tau2-agent mcp:COMMAND``: an agent process that speaks MCP, started per scenario (docs/mcp.md).

The kind registers itself when the extension registry loads (extension/registry.py,
``BUILTINS``); the participant table (run/participants.py) never imports this package. The MCP
SDK (the optional ``mcp`` extra) is imported only when a trial builds the agent.
"""

from __future__ import annotations

import importlib.util

from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.errors import ScenarioNotApplicable, SettingsError
from pytest_tau2.run.participants import ParticipantKind, register_participant_kind
from pytest_tau2.run.view import TrialView
from pytest_tau2.settings import Settings


def _mcp(view: TrialView, argument: str | None) -> Participant:
    from pytest_tau2.mcp.agent import McpAgent

    if view.scenario.message_history:
        raise ScenarioNotApplicable(
            f"{view.scenario.name} opens with a message history, which the MCP user channel does not carry "
            "(run it in process)"
        )
    env = {"TAU2_SEED": str(view.seed)}
    return McpAgent(argument, view.scenario, reply_timeout=view.settings.agent_timeout, env=env)


MCP_INSTALL = 'pip install -e ".[mcp]"'
"""The README's set-up line, which installs the MCP SDK (the ``mcp`` extra) with the plugin."""


def _validate_mcp(settings: Settings, argument: str | None) -> None:
    if not (argument or "").strip():
        raise SettingsError(
            '--tau2-agent mcp:COMMAND needs the command that starts the agent, e.g. --tau2-agent mcp:"python agent.py"'
        )
    if importlib.util.find_spec("mcp") is None:
        raise SettingsError(
            "--tau2-agent mcp needs the MCP SDK (the mcp package), which this environment lacks: "
            f'{MCP_INSTALL} in the pytest-tau2 clone, or pip install "mcp>=2.3,<3" (docs/mcp.md)'
        )


MCP = ParticipantKind(
    "mcp", "agent", _mcp, "an agent process that speaks MCP, started per scenario (docs/mcp.md)",
    argument="COMMAND", validate=_validate_mcp,
)  # fmt: skip
register_participant_kind(MCP)
