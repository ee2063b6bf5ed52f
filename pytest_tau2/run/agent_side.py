"""The agent-side seam: where the agent's tools, DB and recorded actions live.

The pipeline runs one conversation whatever the agent is. What differs is *where its side of
the world is*: an in-process agent calls tools on the runner's own seeded state; an external
bot (``pytest_tau2.bot.remote``) runs its tools on its own DB and reports the results, the
recorded actions and the final hash. Both implement :class:`AgentSide`:

1. :meth:`AgentSide.open` on the seeded scenario gives the :class:`Seat`: the participant the
   loop talks to and the environments the loop runs tool calls on;
2. :meth:`AgentSide.final_state` gives the :class:`~pytest_tau2.scoring.signals.FinalState`
   scoring reads (recorded actions, hashes, the DBs when needed);
3. :meth:`AgentSide.close` releases it.

An agent object chooses its side by having an ``agent_side()`` method
(:class:`ProvidesAgentSide`); any other :class:`~pytest_tau2.conversation.protocol.Participant`
runs in process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.environment.env import Environment
from pytest_tau2.scoring.signals import FinalState

if TYPE_CHECKING:
    from pytest_tau2.conversation.loop import ConversationResult
    from pytest_tau2.run.seeding import Prepared


@dataclass
class Seat:
    """What the conversation loop uses for one scenario."""

    participant: Participant
    agent_env: Environment
    user_env: Environment | None
    details: dict[str, Any] = field(default_factory=dict)
    line: Callable[[Any], Any] | None = None
    """Under ``--tau2-speech-complexity``: wraps the call's phone line when the agent carries its own
    speech (a bot that speaks audio, pytest_tau2/bot/voice_client.py); None: the line carries text."""


class AgentSide(Protocol):
    async def open(self, prepared: Prepared, user: Participant) -> Seat:
        """Connect/prepare the agent on the seeded scenario (an InfrastructureError if it cannot)."""
        ...

    async def final_state(
        self,
        prepared: Prepared,
        conversation: ConversationResult,
        *,
        expected_hashes: dict[str, str | None] | None,
        need_dbs: bool,
    ) -> FinalState:
        """The sides' end state. With ``conversation.error`` set, it must not contact anything."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class ProvidesAgentSide(Protocol):
    """An agent whose tools run elsewhere: it hands the pipeline its own :class:`AgentSide`."""

    def agent_side(self) -> AgentSide: ...


class InProcessAgentSide:
    """The agent calls tools on the runner's own seeded state."""

    def __init__(self, participant: Participant) -> None:
        self.participant = participant

    async def open(self, prepared: Prepared, user: Participant) -> Seat:
        return Seat(self.participant, prepared.envs["agent"], prepared.envs.get("user"))

    async def final_state(
        self,
        prepared: Prepared,
        conversation: ConversationResult,
        *,
        expected_hashes: dict[str, str | None] | None,
        need_dbs: bool,
    ) -> FinalState:
        envs = prepared.envs
        return FinalState(
            actions=[a for env in envs.values() for a in env.actions],
            dbs={side: state.get("db") for side, state in prepared.states.items()},
            tool_errors=sum(env.tool_errors for env in envs.values()),
        )

    async def close(self) -> None:
        return None


def agent_side_for(agent: Participant | ProvidesAgentSide) -> AgentSide:
    if isinstance(agent, ProvidesAgentSide):
        return agent.agent_side()
    return InProcessAgentSide(agent)
