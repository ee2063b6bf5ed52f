"""The agents the reference bot can serve: the oracle, or any litellm model.

Each factory returns an :data:`~pytest_tau2.bot.session.AgentFactory`, called once per
session, so every connection gets its own agent (and its own gold plan).
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_tau2.bot.session import AgentFactory
from pytest_tau2.conversation.offline import OracleAgent
from pytest_tau2.conversation.protocol import Participant, Reply
from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.settings import Settings


class AgentUnavailable(Exception):
    """The requested agent cannot be built here (its module or configuration is missing)."""


def oracle_factory(min_turns: int = 3) -> AgentFactory:
    """The in-process oracle: replays the scenario's gold actions, speaks ``min_turns`` times, exits."""

    def make(scenario: Scenario, settings: Settings) -> Participant:
        from pytest_tau2.run.participants import trial_plan  # the same gold plan the in-process oracle gets

        return RemoteOracle(OracleAgent(trial_plan(scenario, settings), min_turns=max(min_turns, 1)))

    return make


@dataclass
class RemoteOracle:
    """The oracle, for a bot whose user is on the other end of the wire.

    In-process, the oracle and the scripted user share one gold-plan cursor. Here the user's
    gold steps (telecom's phone) happen on the runner, so when the oracle has asked the user
    to act and the user answers, the oracle's own cursor moves past those user steps.
    """

    oracle: OracleAgent
    waiting_on_user: bool = False

    async def respond(self, messages: list[JSONObject], tools: list[JSONObject]) -> Reply:
        plan = self.oracle.plan
        if self.waiting_on_user and messages and messages[-1].get("role") == "user":
            plan.take("user")
            self.waiting_on_user = False
        reply = await self.oracle.respond(messages, tools)
        self.waiting_on_user = not reply.tool_calls and plan.next_side() == "user"
        return reply


def litellm_factory(
    model: str, model_args: str | None = None, *, retries: int = 3, timeout_s: float = 120.0
) -> AgentFactory:
    """An LLM agent through litellm. Raises :class:`AgentUnavailable` now, not per session."""
    try:
        from pytest_tau2.conversation.llm_participants import LiteLLMAgent
        from pytest_tau2.llm.config import ModelConfig, RetryPolicy
        from pytest_tau2.llm.usage import UsageMeter
    except ImportError as exc:
        raise AgentUnavailable(
            f"--model needs pytest_tau2.conversation.llm_participants, which cannot be imported here ({exc}); "
            "use --oracle, or a pytest-tau2 version that ships the litellm participants"
        ) from exc
    try:
        config = ModelConfig.from_option(model, model_args, option_name="--model-args")
    except ValueError as exc:
        raise AgentUnavailable(str(exc)) from exc
    if config is None:
        raise AgentUnavailable(f"--model {model!r} does not name a model")

    def make(scenario: Scenario, settings: Settings) -> Participant:
        return LiteLLMAgent(config, RetryPolicy(max_retries=retries, timeout_s=timeout_s), UsageMeter())

    return make
