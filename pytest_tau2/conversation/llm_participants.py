"""Agent and user simulator backed by any model litellm accepts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_tau2.conversation.protocol import Reply, ToolCall
from pytest_tau2.llm.client import acomplete
from pytest_tau2.llm.config import ModelConfig, RetryPolicy
from pytest_tau2.llm.usage import UsageMeter

if TYPE_CHECKING:
    from pytest_tau2.llm.cassette import Cassette


@dataclass
class _LiteLLMParticipant:
    config: ModelConfig
    retry: RetryPolicy
    usage: UsageMeter
    side: str = "agent"
    cassette: Cassette | None = None
    """The scenario's cassette when recording or replaying (``--tau2-record-mode``)."""

    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        completion = await acomplete(
            self.config,
            messages,
            tools=tools or None,
            retry=self.retry,
            usage=self.usage,
            side=self.side,
            cassette=self.cassette,
        )
        calls = [ToolCall(call.name, call.arguments, call.id or "") for call in completion.tool_calls]
        return Reply(text=completion.text, tool_calls=calls, note=completion.note)


@dataclass
class LiteLLMAgent(_LiteLLMParticipant):
    """The agent under test: the scenario's agent prompt, its tools, one completion per step."""

    side: str = "agent"


@dataclass
class LiteLLMUser(_LiteLLMParticipant):
    """The simulated user: sees the agent's words as ``user`` messages, its own as ``assistant``."""

    side: str = "user"
