"""The do-nothing baseline (``--tau2-agent null``): an agent that answers politely, calls no
domain tool, and ends the call after ``min_turns`` replies.

What it passes is what a benchmark gives away: a task whose verdict a do-nothing agent earns
says nothing about the agent under test (docs/statistics.md lists the shipped tasks it passes).
It speaks ``min_turns`` times so that it is never failed as stalled (--tau2-min-agent-turns): the
stall rule is a different question from "did the agent do the work".
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_tau2.conversation.protocol import Reply, ToolCall, has_stop_token
from pytest_tau2.environment.jsontypes import JSONObject

EXIT_TOOL = "EndConversationTool"
POLITE = "Thank you for reaching out. I understand, and I am sorry, but I am not able to help with that today."
GOODBYE = "Thank you for contacting us. Goodbye!"


@dataclass
class NullAgent:
    """Says something polite; on its ``min_turns``-th reply (or when the user stops) says goodbye
    and calls the end-of-conversation tool when the scenario offers it (else just says goodbye)."""

    min_turns: int = 3
    turns: int = 0

    async def respond(self, messages: list[JSONObject], tools: list[JSONObject]) -> Reply:
        self.turns += 1
        last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
        content = last_user.get("content") if last_user is not None else None
        closing = has_stop_token(content if isinstance(content, str) else None)
        if not closing and self.turns < self.min_turns:
            return Reply(text=POLITE)
        offered = {_tool_name(tool) for tool in tools}
        return Reply(text=GOODBYE, tool_calls=[ToolCall(EXIT_TOOL, {})] if EXIT_TOOL in offered else [])


def _tool_name(tool: JSONObject) -> object:
    function = tool.get("function")
    return function.get("name") if isinstance(function, dict) else tool.get("name")
