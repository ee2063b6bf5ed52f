"""The conversation loop: user and agent take turns; tools act on the scenario's state.

Independent of pytest. Ends on (``stop_reason``):

- ``exit``: the agent called a tool that ends the conversation (EndConversationTool);
- ``transfer``: the agent transferred to a human (transfer_to_human_agents);
- ``user_stop``: the user sent a stop token and the agent's closing turn did not exit;
- ``max_turns``: the agent used up ``max_turns`` replies;
- ``timeout``: ``max_duration`` seconds passed;
- ``too_many_tool_errors``: ``max_tool_errors`` consecutive failed tool calls by one side;
- ``error``: an infrastructure failure (LLM transport, WebSocket); the exception is kept.

Only ``exit`` and ``transfer`` (the agent's own exit) count as a clean exit.

The transcript holds each tool call's arguments as a JSON object, parsed from the string a model
sends; a string that is not a JSON object is kept as sent, with ``invalid_arguments`` saying why
(the tool refused the call the same way). The participants' own views keep the string exactly as
the model sent it. Every call has its own id in the conversation: a call without one gets
``tau2_call_<turn>_<n>`` (``id_generated``), a call whose id an earlier call already has gets one
too (``sent_id`` keeps the model's); those ids are the ones sent back to the model.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pytest_tau2.conversation.protocol import Participant, Reply, ToolCall, has_stop_token
from pytest_tau2.environment.env import Environment, parse_arguments
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.errors import InfrastructureError

CLEAN_EXIT_REASONS = frozenset({"exit", "transfer"})
STOP_REASONS = (
    "exit",
    "transfer",
    "user_stop",
    "max_turns",
    "timeout",
    "too_many_tool_errors",
    "error",
)


@dataclass
class Limits:
    max_turns: int = 30
    max_duration: float = 600.0
    max_tool_errors: int = 10
    """Consecutive failed tool calls by one side before the conversation is stopped."""


@dataclass
class ConversationResult:
    transcript: list[JSONObject]
    stop_reason: str
    agent_turns: int
    duration_s: float
    error: BaseException | None = None

    @property
    def clean_exit(self) -> bool:
        return self.stop_reason in CLEAN_EXIT_REASONS


@dataclass(repr=False)
class _Side:
    name: str  # "agent" | "user"
    participant: Participant
    system_prompt: str
    env: Environment | None
    view: list[JSONObject] = field(default_factory=list)
    consecutive_errors: int = 0

    def tools(self) -> list[JSONObject]:
        return self.env.schemas() if self.env is not None else []


class _Stop(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason


@dataclass(repr=False)  # a repr would walk the whole DB (asyncio reprs tasks' coroutines)
class Conversation:
    """One run of the loop. Build it, then ``await run()``."""

    agent: Participant
    user: Participant
    agent_env: Environment
    user_env: Environment | None
    agent_prompt: str
    user_prompt: str
    limits: Limits = field(default_factory=Limits)
    greeting: str | None = None
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.transcript: list[JSONObject] = []
        self._call_ids: set[str] = set()
        self.agent_turns = 0
        self.agent_steps = 0
        self._agent = _Side("agent", self.agent, self.agent_prompt, self.agent_env)
        self._user = _Side("user", self.user, self.user_prompt, self.user_env)
        for side in (self._agent, self._user):
            side.view.append({"role": "system", "content": side.system_prompt})

    async def run(self) -> ConversationResult:
        start = self.clock()
        error: BaseException | None = None
        try:
            reason = await asyncio.wait_for(self._play(), timeout=self.limits.max_duration)
        except TimeoutError:
            reason = "timeout"
        except InfrastructureError as exc:
            reason, error = "error", exc
        finally:
            for participant in (self.agent, self.user):
                closer = getattr(participant, "aclose", None)
                if closer is not None:
                    try:
                        await closer()
                    except Exception:  # closing must not mask the run's outcome
                        pass
        return ConversationResult(self.transcript, reason, self.agent_turns, self.clock() - start, error)

    async def _play(self) -> str:
        try:
            if self.greeting:
                self._say(self._agent, self.greeting, generated=False)
            while True:
                user_text = await self._take_turn(self._user)
                if has_stop_token(user_text):
                    # The agent gets one closing turn, in which it may end the conversation itself.
                    await self._take_turn(self._agent)
                    return "user_stop"
                await self._take_turn(self._agent)
        except _Stop as stop:
            return stop.reason

    async def _take_turn(self, side: _Side) -> str | None:
        """Let one side act until it says something to the other side. Returns that text."""
        while True:
            if side is self._agent:
                if self.agent_steps >= self.limits.max_turns:
                    raise _Stop("max_turns")
                self.agent_steps += 1
            reply = await side.participant.respond(list(side.view), side.tools())
            reply = reply if isinstance(reply, Reply) else Reply(text=str(reply))
            text = reply.text if reply.text and reply.text.strip() else None
            if not reply.tool_calls:
                if text is None:
                    text = ""  # an empty reply still passes the turn, so a mute model cannot hang the loop
                self._say(side, text)
                return text
            self._record_tool_request(side, text, reply.tool_calls)
            ending = self._run_tools(side, reply.tool_calls)
            if ending is not None:
                raise _Stop(ending)

    def _say(self, side: _Side, text: str, *, generated: bool = True) -> None:
        other = self._user if side is self._agent else self._agent
        entry: JSONObject = {"role": "assistant" if side is self._agent else "user", "content": text}
        if not generated:
            entry["generated"] = False
        elif side is self._agent and text.strip():
            self.agent_turns += 1
        self._append(entry)
        side.view.append({"role": "assistant", "content": text})
        other.view.append({"role": "user", "content": text})

    def _record_tool_request(self, side: _Side, text: str | None, calls: list[ToolCall]) -> None:
        if side is self._agent and text:
            self.agent_turns += 1
        role = "assistant" if side is self._agent else "user"
        entries: list[JSONValue] = [self._own_id(call, position) for position, call in enumerate(calls)]
        self._append({"role": role, "content": text, "tool_calls": entries})
        side.view.append({"role": "assistant", "content": text, "tool_calls": [c.to_openai() for c in calls]})

    def _own_id(self, call: ToolCall, position: int) -> JSONObject:
        """The call's transcript entry; a call without an id, or with one already used, gets its own."""
        entry: JSONObject = {"id": call.id, "name": call.name, "arguments": _arguments_entry(call.arguments)}
        if call.id_generated or call.id in self._call_ids:
            fresh = base = f"tau2_call_{len(self.transcript)}_{position}"
            suffix = 1
            while fresh in self._call_ids:  # a model that itself sends ids of this shape
                fresh, suffix = f"{base}_{suffix}", suffix + 1
            if call.id_generated:
                entry["id_generated"] = True
            else:
                entry["sent_id"] = call.id
            call.id = entry["id"] = fresh
            call.id_generated = False
        self._call_ids.add(call.id)
        if isinstance(entry["arguments"], str):
            entry["invalid_arguments"] = str(parse_arguments(call.arguments))
        return entry

    def _run_tools(self, side: _Side, calls: list[ToolCall]) -> str | None:
        ending: str | None = None
        for call in calls:
            if side.env is None:
                from pytest_tau2.environment.env import ToolResult

                result = ToolResult(f"Error: the {side.name} has no tools.", True)
            else:
                result = side.env.call(call.name, call.arguments)
            self._append(
                {
                    "role": "tool",
                    "requestor": side.name,
                    "tool_call_id": call.id,
                    "name": call.name,
                    "content": result.content,
                    "error": result.error,
                }
            )
            side.view.append({"role": "tool", "tool_call_id": call.id, "content": result.content})
            side.consecutive_errors = side.consecutive_errors + 1 if result.error else 0
            if result.ends_conversation and side is self._agent and ending is None:
                ending = result.ends_conversation
        if ending is not None:
            return ending
        if side.consecutive_errors >= self.limits.max_tool_errors:
            return "too_many_tool_errors"
        return None

    def _append(self, entry: JSONObject) -> None:
        entry["turn_idx"] = len(self.transcript)
        self.transcript.append(entry)


def _arguments_entry(arguments: JSONObject | str) -> JSONObject | str:
    """A call's arguments as the transcript keeps them: parsed when they are a JSON object's text."""
    if not isinstance(arguments, str):
        return arguments
    parsed = parse_arguments(arguments)
    return parsed if isinstance(parsed, dict) else arguments
