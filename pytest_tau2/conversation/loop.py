"""The conversation loop: user and agent take turns; tools act on the scenario's state.

Independent of pytest. Ends on (``stop_reason``):

- ``exit``: the agent called a tool that ends the conversation (EndConversationTool);
- ``transfer``: the agent transferred to a human (transfer_to_human_agents);
- ``user_stop``: the user sent a stop token (with a closing turn: and the agent did not exit in it);
- ``max_turns``: the agent used up ``max_turns`` replies;
- ``max_duration``: ``max_duration`` seconds passed (runs before 0.x called it ``timeout``);
- ``max_tokens`` / ``max_cost`` / ``max_messages``: the conversation's model calls had used
  ``max_tokens`` tokens or ``max_cost`` USD, or its transcript held ``max_messages`` messages,
  when a side was about to take its next step (docs/campaigns.md). Like ``max_turns``, reaching
  one is the agent's outcome: the conversation is scored, never an infrastructure error;
- ``too_many_tool_errors``: ``max_tool_errors`` consecutive failed tool calls by one side;
- ``user_max_steps``: the user simulator used up ``max_user_steps`` replies (tool calls included):
  not the agent's doing, so the conversation also carries an :class:`InfrastructureError`;
- ``error``: an infrastructure failure (LLM transport, WebSocket); the exception is kept.

A tool of a user's domain runs off the event loop (a thread), so a blocking one stalls neither
this conversation's deadline nor the others of the process; one still running when
``max_duration`` passes is named in the ``timeout``'s error.

Only ``exit`` and ``transfer`` (the agent's own exit) count as a clean exit, when the agent has a
closing turn (``--tau2-prompts seed``: after a user stop the agent may say goodbye and end the call;
a state-changing tool call in that turn is refused as a tool error and marked ``"closing_turn":
true``, so the closing turn cannot do the task). Without one (``upstream``, as upstream tau2 ends a
conversation), a user stop ends the conversation at once and ``user_stop`` is a clean exit too.

The transcript holds each tool call's arguments as a JSON object, parsed from the string a model
sends; a string that is not a JSON object is kept as sent, with ``invalid_arguments`` saying why
(the tool refused the call the same way). The participants' own views keep the string exactly as
the model sent it. Every call has its own id in the conversation: a call without one gets
``tau2_call_<turn>_<n>`` (``id_generated``), a call whose id an earlier call already has gets one
too (``sent_id`` keeps the model's); those ids are the ones sent back to the model.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol, cast

from pytest_tau2.conversation.protocol import Participant, Reply, ToolCall, has_stop_token
from pytest_tau2.environment.env import Environment, parse_arguments
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.errors import InfrastructureError

_TOOL_THREADS: list[ThreadPoolExecutor] = []


def _tool_threads() -> ThreadPoolExecutor:
    """The threads user-domain tools run on: not the loop's default executor, which ``asyncio.run``
    joins when it ends (a tool still blocking past its deadline would hold the item until it returns)."""
    if not _TOOL_THREADS:
        _TOOL_THREADS.append(ThreadPoolExecutor(max_workers=32, thread_name_prefix="tau2-tool"))
    return _TOOL_THREADS[0]


class Line(Protocol):
    """What carries an utterance to the other side (a phone call, pytest_tau2/speech/line.py)."""

    async def carry(self, side: str, text: str) -> str:
        """What the other side hears of ``text``, said by ``side`` ("user" or "agent")."""
        ...

    # Optional: ``hang_up()``, called once the conversation is over, before the last utterances
    # are carried (no one answers them, so, for instance, no one cuts in on them).


CLEAN_EXIT_REASONS = frozenset({"exit", "transfer"})
UPSTREAM_CLEAN_EXIT_REASONS = CLEAN_EXIT_REASONS | {"user_stop"}
"""Clean exits when a user stop ends the conversation (no closing turn): the user ended it, or the
agent transferred or exited, without an error or a limit."""
CLOSING_TURN_REFUSAL = (
    "Error: the customer has ended the conversation; this call would change the records and is refused "
    "in the closing turn (say goodbye, or end the conversation)."
)
STOP_REASONS = (
    "exit",
    "transfer",
    "user_stop",
    "max_turns",
    "max_duration",
    "max_tokens",
    "max_cost",
    "max_messages",
    "too_many_tool_errors",
    "user_max_steps",
    "error",
)
LIMIT_STOP_REASONS = frozenset({"max_turns", "max_duration", "max_tokens", "max_cost", "max_messages"})
"""The per-scenario limits of docs/campaigns.md: reaching one stops the conversation, which is scored."""


@dataclass
class Limits:
    max_turns: int = 30
    max_duration: float = 600.0
    max_tool_errors: int = 10
    """Consecutive failed tool calls by one side before the conversation is stopped."""
    max_user_steps: int = 200
    """User-simulator replies (each text or tool-call step) before the conversation is stopped;
    upstream tau2 stops at ``max_steps`` (200) counting both sides."""
    max_tokens: int | None = None
    """Prompt plus completion tokens of the conversation's model calls (agent, user, tools' models)."""
    max_cost: float | None = None
    """USD of the conversation's model calls, priced as the usage meter prices them."""
    max_messages: int | None = None
    """Messages in the transcript (user, agent and tool messages; a greeting and history included)."""


@dataclass(frozen=True)
class Spend:
    """What the conversation's model calls have used so far: the limits' measure."""

    tokens: int = 0
    cost: float | None = 0.0
    """None when a call was unpriced (``--tau2-max-cost`` refuses such models up front)."""
    by_side: tuple[tuple[str, int, float | None], ...] = ()
    """``(side, tokens, cost)`` of each side that made calls, for the stop's explanation."""


@dataclass
class ConversationResult:
    transcript: list[JSONObject]
    stop_reason: str
    agent_turns: int
    duration_s: float
    error: BaseException | None = None
    limit: str | None = None
    """With a limit's stop reason: which limit, its value and what was used (the clean-exit check says it)."""
    clean_reasons: frozenset[str] = CLEAN_EXIT_REASONS
    """The stop reasons that are a clean exit (:data:`UPSTREAM_CLEAN_EXIT_REASONS` without a closing turn)."""

    @property
    def clean_exit(self) -> bool:
        return self.stop_reason in self.clean_reasons


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
    def __init__(self, reason: str, error: InfrastructureError | None = None, limit: str | None = None) -> None:
        self.reason = reason
        self.error = error
        self.limit = limit


class SavedLimitReached(_Stop):
    """Raised by a side that says a saved conversation again (``pytest-tau2 rescore``) once it has
    said every saved turn of a run that ended on ``max_tokens`` or ``max_cost``: a replay spends no
    tokens, so the limit is not reached by itself; the conversation ends as the saved one did."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, limit=f"{reason} reached in the saved run (re-scored from its transcript)")


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
    history: list[JSONObject] = field(default_factory=list)
    """Messages that happened before this run (tau2's ``message_history``), in transcript form:
    ``{"role": "user"|"assistant", "content", "tool_calls": [{"id", "name", "arguments"}]}`` and
    ``{"role": "tool", "tool_call_id", "content", "requestor"}``. They open the transcript
    (marked ``"history": true``) and both sides' views; no greeting is sent then, and the side
    that did not speak last takes the first turn. Their effect on the DBs is the scenario's
    business (seeding replays them)."""
    spend: Callable[[], Spend] | None = None
    """What the conversation's model calls have used so far (the trial's usage meter, the judge
    left out: it runs after the conversation); needed by ``max_tokens`` and ``max_cost``."""
    closing_turn: bool = True
    """True: after a user stop the agent gets one closing turn (state-changing calls refused there).
    False: a user stop ends the conversation, as upstream tau2's orchestrator does."""
    line: Line | None = None
    """A phone line (``--tau2-speech-complexity``): what one side says reaches the other side's view
    as the line carried it; the transcript keeps ``content`` (spoken) and adds ``heard``. An
    utterance is carried when the other side is about to answer it (and the last at the end)."""

    def __post_init__(self) -> None:
        self.transcript: list[JSONObject] = []
        self._call_ids: set[str] = set()
        self.agent_turns = 0
        self.agent_steps = 0
        self.user_steps = 0
        self._running: tuple[str, str, float] | None = None  # (side, tool, started) of an off-loop call
        self._closing = False  # in the agent's closing turn, after a user stop
        self._unheard: list[tuple[str, str, JSONObject, JSONObject]] = []  # (side, text, entry, view message)
        self._agent = _Side("agent", self.agent, self.agent_prompt, self.agent_env)
        self._user = _Side("user", self.user, self.user_prompt, self.user_env)
        for side in (self._agent, self._user):
            side.view.append({"role": "system", "content": side.system_prompt})
        for message in self.history:
            self._replay_history(message)

    async def run(self) -> ConversationResult:
        start = self.clock()
        error: BaseException | None = None
        self._limit: str | None = None
        try:
            reason, error = await asyncio.wait_for(self._play_heard(), timeout=self.limits.max_duration)
        except TimeoutError:
            reason = "max_duration"
            self._limit = f"max_duration {self.limits.max_duration:g} s reached"
            if self._running is not None:
                side, tool, started = self._running
                error = InfrastructureError(
                    f"the {side}'s tool {tool!r} was still running when max_duration "
                    f"({self.limits.max_duration:g} s) passed, after {self.clock() - started:.1f} s: the tool "
                    "blocks (it runs off the event loop, and is left to finish); not the agent's fault"
                )
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
        duration = self.clock() - start
        clean = CLEAN_EXIT_REASONS if self.closing_turn else UPSTREAM_CLEAN_EXIT_REASONS
        return ConversationResult(self.transcript, reason, self.agent_turns, duration, error, self._limit, clean)

    async def _play(self) -> tuple[str, BaseException | None]:
        try:
            if self.greeting and not self.history:
                self._say(self._agent, self.greeting, generated=False)
            if self._last_speaker() == "user":
                await self._take_turn(self._agent)
            while True:
                user_text = await self._take_turn(self._user)
                if has_stop_token(user_text):
                    if self.closing_turn:  # one turn to say goodbye and end the conversation itself
                        self._closing = True
                        await self._take_turn(self._agent)
                    return "user_stop", None
                await self._take_turn(self._agent)
        except _Stop as stop:
            self._limit = stop.limit
            return stop.reason, stop.error

    async def _play_heard(self) -> tuple[str, BaseException | None]:
        outcome = await self._play()
        hang_up = getattr(self.line, "hang_up", None)  # a line may want to know the call is over
        if hang_up is not None:
            hang_up()
        await self._hear()
        return outcome

    async def _hear(self) -> None:
        """Carry what was said and not yet heard over the line (nothing without one)."""
        while self.line is not None and self._unheard:
            name, text, entry, message = self._unheard.pop(0)
            entry["heard"] = message["content"] = await self.line.carry(name, text)

    async def _take_turn(self, side: _Side) -> str | None:
        """Let one side act until it says something to the other side. Returns that text."""
        await self._hear()
        while True:
            self._check_limits()
            if side is self._agent:
                if self.agent_steps >= self.limits.max_turns:
                    raise _Stop("max_turns", limit=f"max_turns {self.limits.max_turns} reached")
                self.agent_steps += 1
            else:
                if self.user_steps >= self.limits.max_user_steps:
                    raise _Stop("user_max_steps", self._user_limit_error())
                self.user_steps += 1
            reply = await side.participant.respond(list(side.view), side.tools())
            reply = reply if isinstance(reply, Reply) else Reply(text=str(reply))
            text = reply.text if reply.text and reply.text.strip() else None
            if not reply.tool_calls:
                if text is None:
                    text = ""  # an empty reply still passes the turn, so a mute model cannot hang the loop
                self._say(side, text, note=reply.note)
                return text
            self._record_tool_request(side, text, reply.tool_calls, reply.note)
            ending = await self._run_tools(side, reply.tool_calls)
            if ending is not None:
                raise _Stop(ending)

    def _check_limits(self) -> None:
        """Stop before the next step once a resource limit is reached (checked between steps: a
        model call in flight is never cut, so the last call may carry the count past the limit)."""
        limits = self.limits
        if limits.max_messages is not None and len(self.transcript) >= limits.max_messages:
            held = len(self.transcript)
            raise _Stop("max_messages", limit=f"max_messages {limits.max_messages} reached: {held} messages")
        if self.spend is None or (limits.max_tokens is None and limits.max_cost is None):
            return
        used = self.spend()
        sides = ", ".join(f"{name} {tokens}" for name, tokens, _ in used.by_side)
        if limits.max_tokens is not None and used.tokens >= limits.max_tokens:
            raise _Stop("max_tokens", limit=f"max_tokens {limits.max_tokens} reached: {used.tokens} tokens ({sides})")
        if limits.max_cost is not None and used.cost is not None and used.cost >= limits.max_cost:
            costs = ", ".join(f"{name} ${cost:.4f}" for name, _, cost in used.by_side if cost is not None)
            raise _Stop("max_cost", limit=f"max_cost ${limits.max_cost:g} reached: ${used.cost:.4f} ({costs})")

    def _user_limit_error(self) -> InfrastructureError:
        return InfrastructureError(
            f"the user simulator took {self.user_steps} steps (replies and tool calls) without ending the "
            f"conversation (max_user_steps {self.limits.max_user_steps}, --tau2-max-user-steps); "
            "stopped as the user simulator's doing, not the agent's"
        )

    def _say(self, side: _Side, text: str, *, generated: bool = True, note: str | None = None) -> None:
        other = self._user if side is self._agent else self._agent
        entry: JSONObject = {"role": "assistant" if side is self._agent else "user", "content": text}
        if note:
            entry["content_note"] = note
        if not generated:
            entry["generated"] = False
        elif side is self._agent and text.strip():
            self.agent_turns += 1
        self._append(entry)
        side.view.append({"role": "assistant", "content": text})
        message: JSONObject = {"role": "user", "content": text}
        other.view.append(message)
        if self.line is not None:
            self._unheard.append((side.name, text, entry, message))

    def _record_tool_request(self, side: _Side, text: str | None, calls: list[ToolCall], note: str | None) -> None:
        if side is self._agent and text:
            self.agent_turns += 1
        role = "assistant" if side is self._agent else "user"
        entries: list[JSONValue] = [self._own_id(call, position) for position, call in enumerate(calls)]
        entry: JSONObject = {"role": role, "content": text, "tool_calls": entries}
        if note:
            entry["content_note"] = note
        self._append(entry)
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

    async def _run_tools(self, side: _Side, calls: list[ToolCall]) -> str | None:
        ending: str | None = None
        for call in calls:
            refused = self._closing and side is self._agent and side.env is not None and side.env.mutates(call.name)
            if side.env is None or refused:
                from pytest_tau2.environment.env import ToolResult

                result = ToolResult(CLOSING_TURN_REFUSAL if refused else f"Error: the {side.name} has no tools.", True)
            elif side.env.runs_inline(call.name):
                result = side.env.call(call.name, call.arguments)  # built-in tools: fast, pure Python
            else:
                self._running = (side.name, call.name, self.clock())
                try:
                    loop = asyncio.get_running_loop()
                    # In a copy of this task's context: a tool calling a model finds the trial's scope (llm/scope.py).
                    run = contextvars.copy_context().run
                    result = await loop.run_in_executor(_tool_threads(), run, side.env.call, call.name, call.arguments)
                except asyncio.CancelledError:
                    raise  # the deadline passed while the tool ran: ``_running`` names it in run()
                except BaseException:
                    self._running = None
                    raise
                self._running = None
            self._append(
                {
                    "role": "tool",
                    "requestor": side.name,
                    "tool_call_id": call.id,
                    "name": call.name,
                    "content": result.content,
                    "error": result.error,
                    **({"closing_turn": True} if refused else {}),
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

    def _replay_history(self, message: JSONObject) -> None:
        """One message of the prior history into the transcript and the views (never run again)."""
        role = message.get("role")
        entry: JSONObject = {k: v for k, v in message.items() if k != "turn_idx"}
        entry["history"] = True
        if role == "tool":
            requestor = "user" if message.get("requestor") == "user" else "agent"
            call_id = message.get("tool_call_id", message.get("id"))
            entry = {
                "role": "tool",
                "requestor": requestor,
                "tool_call_id": call_id,
                "content": message.get("content"),
                "error": bool(message.get("error")),
                "history": True,
            }
            side = self._user if requestor == "user" else self._agent
            side.view.append({"role": "tool", "tool_call_id": call_id, "content": message.get("content")})
            self._append(entry)
            return
        side = self._agent if role == "assistant" else self._user
        other = self._user if side is self._agent else self._agent
        text = message.get("content")
        listed = cast("list[JSONObject]", message.get("tool_calls") or [])  # the history's {"id", "name", "arguments"}
        calls = [
            ToolCall(str(c.get("name")), cast("JSONObject | str", c.get("arguments") or {}), str(c.get("id") or ""))
            for c in listed
        ]
        if calls:
            entry["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]
            side.view.append({"role": "assistant", "content": text, "tool_calls": [c.to_openai() for c in calls]})
        else:
            side.view.append({"role": "assistant", "content": text})
            other.view.append({"role": "user", "content": text})
        self._append(entry)

    def _last_speaker(self) -> str | None:
        """``"user"`` or ``"assistant"``: who spoke last (text, not tool calls) in the history."""
        for message in reversed(self.history):
            if message.get("role") in ("user", "assistant") and not message.get("tool_calls"):
                return str(message["role"])
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
