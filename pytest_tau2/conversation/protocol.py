"""The small async protocol every agent and simulated user implements.

A participant is any object with::

    async def respond(self, messages: list[dict], tools: list[dict]) -> Reply

``messages`` is the conversation *from that participant's point of view* in OpenAI chat
format: its own system prompt first, its own past replies as ``assistant`` (with
``tool_calls`` when it called tools), the other side's words as ``user``, and the results of
its own tool calls as ``tool`` messages. ``tools`` are the OpenAI function schemas it may call.
It returns text for the other side, tool calls, or both (then the text stays in the
transcript but only the tool results go back, as in tau2). An optional
``async def aclose(self)`` is awaited when the conversation ends.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from pytest_tau2.environment.jsontypes import JSONObject

STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")

_ids = itertools.count(1)


@dataclass
class ToolCall:
    """One requested call. ``arguments`` may be a raw JSON string exactly as a model sent it."""

    name: str
    arguments: JSONObject | str = field(default_factory=dict)
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            self.id = f"call_{next(_ids)}"

    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)

    def to_openai(self) -> JSONObject:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments_json()}}


@dataclass
class Reply:
    """What a participant says or does in one step."""

    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    note: str | None = None
    """Why ``text`` is not the model's content verbatim (kept as ``content_note`` in the transcript)."""


@runtime_checkable
class Participant(Protocol):
    async def respond(self, messages: list[JSONObject], tools: list[JSONObject]) -> Reply: ...


def has_stop_token(text: str | None) -> bool:
    return bool(text) and any(token in text for token in STOP_TOKENS)  # type: ignore[operator]
