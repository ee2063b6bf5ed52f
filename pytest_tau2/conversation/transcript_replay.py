"""Both sides of a saved conversation, said again: the participants ``pytest-tau2 rescore`` runs.

A results folder keeps every conversation in ``transcript.json``. :func:`replay_sides` turns one
into an agent and a user that answer each turn with the saved message of their side, in order
(text and tool calls, with the ids they had), calling no model. The conversation loop runs them
as it runs any participants: the tools act on the scenario's seeded state as they did, so the final
state, the tool results and the gold comparison are computed again from the scenario as it is now
(like ``tau2 evaluate-trajs --fresh-tasks``), and the judge sees the same transcript.

Messages the loop makes itself are not replayed: the prior history (``"history": true``) and the
scenario's fixed greeting (``"generated": false``).

**The end.** A side that has said everything and is asked again raises what ended the saved
conversation where the loop cannot end it by itself: the saved ``timeout`` as a TimeoutError
(the loop's own timeout), the saved ``error`` as the saved infrastructure error. Any other saved
end (exit, transfer, user_stop, max_turns, ...) is reached by the loop again; a side asked past
it means the scenario now ends the conversation elsewhere (a tool that used to end it, a limit),
and is an InfrastructureError saying so: the saved conversation cannot be re-scored as it was.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pytest_tau2.conversation.loop import SavedLimitReached
from pytest_tau2.conversation.protocol import Reply, ToolCall
from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.errors import InfrastructureError


class TranscriptEnded(InfrastructureError):
    """A replayed side was asked for a turn the saved transcript does not have."""


@dataclass
class ReplayedSide:
    """One side of a saved conversation (``agent`` or ``user``), answering turn by turn."""

    side: str
    turns: deque[Reply]
    stop_reason: str
    error: str | None = None
    identity: str = ""
    """How results name this side: the saved record's agent or user (run/trial.py reads it)."""
    asked: int = field(default=0)

    @property
    def replayed_identity(self) -> str:
        return self.identity

    async def respond(self, messages: list[JSONObject], tools: list[JSONObject]) -> Reply:
        self.asked += 1
        if self.turns:
            return self.turns.popleft()
        if self.stop_reason in ("timeout", "max_duration"):  # "timeout": its name in older results
            raise TimeoutError  # the loop ends it as the saved run ended: max_duration passed
        if self.stop_reason in ("max_tokens", "max_cost"):
            raise SavedLimitReached(self.stop_reason)
        if self.stop_reason == "error":
            raise TranscriptEnded(self.error or "the saved conversation ended in an infrastructure error")
        raise TranscriptEnded(
            f"the {self.side} was asked for turn {self.asked}, but the saved conversation (which ended with "
            f"{self.stop_reason!r}) has only {self.asked - 1}: the scenario now ends the conversation "
            "differently (a tool result, a limit), so it cannot be re-scored as it was"
        )


def _call(entry: Mapping[str, object]) -> ToolCall:
    """A saved tool call with the id it was sent with (a generated id is made again by the loop)."""
    raw_arguments = entry.get("arguments")
    arguments: JSONObject | str = raw_arguments if isinstance(raw_arguments, dict | str) else {}
    if entry.get("id_generated"):
        return ToolCall(str(entry.get("name")), arguments)
    sent = entry.get("sent_id") or entry.get("id") or ""
    return ToolCall(str(entry.get("name")), arguments, str(sent))


def saved_messages(document: object) -> list[Mapping[str, object]]:
    """transcript.json's ``messages``, checked for the shape :func:`replay_sides` reads: a
    ValueError naming the first field that is not (``messages[3].tool_calls[0].name``)."""
    if not isinstance(document, Mapping):
        raise ValueError(f"the file is {_kind(document)}, not a JSON object")
    messages = document.get("messages")
    if not isinstance(messages, list):
        raise ValueError(f"'messages' is {_kind(messages)}, not a list")
    for n, message in enumerate(messages):
        where = f"messages[{n}]"
        if not isinstance(message, Mapping):
            raise ValueError(f"'{where}' is {_kind(message)}, not an object")
        if not isinstance(message.get("role"), str):
            raise ValueError(f"'{where}.role' is {_kind(message.get('role'))}, not a string")
        calls = message.get("tool_calls")
        if calls is None:
            continue
        if not isinstance(calls, list):
            raise ValueError(f"'{where}.tool_calls' is {_kind(calls)}, not a list")
        for k, entry in enumerate(calls):
            if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
                raise ValueError(f"'{where}.tool_calls[{k}]' is not a tool call (an object with a string 'name')")
    return messages


def _kind(value: object) -> str:
    return "missing" if value is None else f"a {type(value).__name__}"


def replay_sides(
    transcript: Sequence[Mapping[str, object]],
    *,
    stop_reason: str,
    error: str | None = None,
    agent: str = "",
    user: str = "",
) -> tuple[ReplayedSide, ReplayedSide]:
    """The agent and the user of a saved transcript (transcript.json's ``messages``)."""
    turns: dict[str, deque[Reply]] = {"assistant": deque(), "user": deque()}
    for message in transcript:
        role = message.get("role")
        if role not in turns or message.get("history") or message.get("generated") is False:
            continue
        content = message.get("content")
        text = content if isinstance(content, str) else None
        listed = message.get("tool_calls")
        calls = [_call(c) for c in listed if isinstance(c, Mapping)] if isinstance(listed, list) else []
        turns[str(role)].append(Reply(text=text, tool_calls=calls))
    return (
        ReplayedSide("agent", turns["assistant"], stop_reason, error, agent),
        ReplayedSide("user", turns["user"], stop_reason, error, user),
    )


def differing_tool_results(saved: Sequence[Mapping[str, object]], new: Sequence[Mapping[str, object]]) -> int:
    """How many tool results of the replayed conversation differ from the saved ones (in order)."""
    before = [m.get("content") for m in saved if m.get("role") == "tool" and not m.get("history")]
    after = [m.get("content") for m in new if m.get("role") == "tool" and not m.get("history")]
    differ = sum(1 for a, b in zip(before, after, strict=False) if a != b)
    return differ + abs(len(before) - len(after))
