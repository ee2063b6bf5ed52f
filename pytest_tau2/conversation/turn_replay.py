"""Replaying a saved conversation turn by turn: each side says and calls exactly what it did before.

Used for upstream runs (``--tau2-agent replay:results.json --tau2-user replay``): the agent and the
user are each a :class:`SavedTurns`, holding that side's saved messages in order. On its turn a side
gives back its next saved message: its text, or its tool calls (with their saved ids), which the
loop runs through our tools as it would a model's, so the tools, the DB and the scoring are ours and
only the words and calls are the saved ones. No model is called.

When a side has no saved message left it says nothing (an empty text): a saved run that upstream
cut off (``max_steps``, ``too_many_errors``) then runs into our loop's own limit and ends
unscored, as upstream's did, and after the customer's stop token an agent with nothing left to say
takes its closing turn in silence (stop reason ``user_stop``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_tau2.conversation.protocol import Reply, ToolCall
from pytest_tau2.environment.jsontypes import JSONObject


class SavedTurns:
    """One side of a saved conversation. ``messages`` are that side's messages, in order:
    ``{"content": str | None, "tool_calls": [{"id", "name", "arguments"}] | None}``."""

    def __init__(self, messages: Iterable[Mapping[str, Any]]):
        self.pending = [dict(message) for message in messages]
        self.replayed = 0

    async def respond(self, messages: list[JSONObject], tools: list[JSONObject]) -> Reply:
        if not self.pending:
            return Reply(text="")
        message = self.pending.pop(0)
        self.replayed += 1
        calls = [
            ToolCall(str(call["name"]), dict(call.get("arguments") or {}), str(call.get("id") or ""))
            for call in message.get("tool_calls") or []
        ]
        return Reply(text=message.get("content"), tool_calls=calls)


def split_sides(
    messages: Iterable[Mapping[str, Any]], *, skip: int = 0
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """The agent's and the user's saved messages (tool results left out: our tools answer again),
    after the first ``skip`` messages (the greeting or history our loop says itself)."""
    agent: list[Mapping[str, Any]] = []
    user: list[Mapping[str, Any]] = []
    for message in list(messages)[skip:]:
        role = message.get("role")
        if role == "assistant":
            agent.append(message)
        elif role == "user":
            user.append(message)
    return agent, user
