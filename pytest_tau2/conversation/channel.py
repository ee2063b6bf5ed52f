"""A seat in the conversation for an agent that drives itself: it *calls*, the loop answers.

The loop pulls an agent's steps (``respond(messages, tools) -> Reply``). Agents built on a
framework, or behind an MCP client, run their own loop instead: they call a tool and wait for its
result, or say something to the user and wait for the answer. :class:`AgentChannel` turns those
calls into the loop's steps, so the loop records, counts and limits them as it does any agent's:

- :meth:`AgentChannel.call_tool` queues a call; the next ``respond`` hands it to the loop (with the
  other calls already queued: parallel calls stay one step), the loop runs it on the scenario's
  seeded state through :class:`ChannelEnvironment`, and the result goes back to the caller;
- :meth:`AgentChannel.send_message` is said to the user; its result is the user's next words,
  with ``over`` set once nothing more will come (the user said a stop token, or the run ended);
- :meth:`AgentChannel.listen` gives the user's words the agent has not heard yet (the opening:
  the runner says the scenario's greeting for the agent, then the user speaks first).

Everything runs on the conversation's event loop (the MCP server's handlers too), so the channel
needs no lock. A failure of the agent's process reaches the loop through :meth:`AgentChannel.fail`;
an agent that stays silent past ``reply_timeout`` is an :class:`InfrastructureError` naming what it
was last asked, with whatever :attr:`AgentChannel.explain` adds (the process's stderr tail).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pytest_tau2.conversation.protocol import Reply, ToolCall, has_stop_token
from pytest_tau2.environment.env import Environment, ToolResult
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.errors import InfrastructureError

ENDED = "The conversation has ended: no further tool calls or messages are taken."


@dataclass(frozen=True)
class UserTurn:
    """What the agent hears back: the user's words, and whether the conversation is over."""

    text: str
    over: bool = False
    """Nothing more will come: the user ended the conversation, or the run stopped."""
    sent: bool = True
    """False when the agent's message was not said because the user had spoken since it last heard
    them (``text`` is then those words): answer them with a new message."""


@dataclass
class _ToolEvent:
    call: ToolCall
    done: asyncio.Future[ToolResult]


@dataclass
class _SayEvent:
    text: str
    done: asyncio.Future[UserTurn]


@dataclass
class _Fault:
    error: BaseException


_Event = _ToolEvent | _SayEvent | _Fault


@dataclass(repr=False)
class AgentChannel:
    """One conversation's channel between a self-driving agent and the loop (a ``Participant``)."""

    reply_timeout: float = 120.0
    """Seconds the loop waits for the agent's next call before the scenario is an error."""
    explain: Callable[[], str] | None = None
    """More about a silent or failed agent (its process, its connection), appended to the error."""
    ended: str | None = field(default=None, init=False)
    """Why the channel closed (the conversation is over), or None while it runs."""
    waiting: bool = field(default=False, init=False)
    """True while the loop waits on the agent (a deadline passing then is the agent's hang)."""
    last_request: str = field(default="nothing yet", init=False)
    user_left: bool = field(default=False, init=False)
    """The agent has heard the user's stop token: only its closing turn remains."""

    def __post_init__(self) -> None:
        self._pending: deque[_Event] = deque()  # the agent's calls the loop has not taken yet
        self._wake: asyncio.Event | None = None
        self._in_flight: deque[_ToolEvent] = deque()  # handed to the loop, results not yet back
        self._results: deque[ToolResult] = deque()  # what ChannelEnvironment saw, in call order
        self._saying: _SayEvent | None = None  # said to the user, waiting for the answer
        self._listeners: list[asyncio.Future[UserTurn]] = []
        self._user_texts: list[str] = []  # the user's words so far, as the agent's view holds them
        self._heard = 0  # how many of them the agent has been given

    # ---- the agent's side ----------------------------------------------------------------------

    async def call_tool(self, name: str, arguments: Mapping[str, JSONValue] | str | None) -> ToolResult:
        """Run one tool of the agent's side through the loop; its result (an error result once ended)."""
        if self.ended is not None:
            return ToolResult(ENDED, True)
        args: JSONObject | str = arguments if isinstance(arguments, str) else dict(arguments or {})
        event = _ToolEvent(ToolCall(name, args), asyncio.get_running_loop().create_future())
        self.last_request = f"tool call {name!r}"
        self._push(event)
        return await event.done

    async def send_message(self, text: str) -> UserTurn:
        """Say ``text`` to the user; their answer. An empty ``text`` before hearing them only listens."""
        if self.ended is not None:
            return UserTurn("", over=True, sent=False)
        if self._saying is not None:
            raise InfrastructureError("send_message_to_user called while an earlier message still waits for the user")
        self.last_request = "send_message_to_user" + ("" if text else " (listening)")
        if not text and self._heard == 0:
            # A listen before the loop has handed over the user's opening (an agent that connects
            # before the user's model answered): wait for it, never say an empty first message.
            return await self.listen()
        unheard = self._unheard()
        if unheard is not None:
            # The user spoke since the agent last heard them: a reply written without reading them
            # would answer nothing; they get the words instead (an empty text is a plain listen).
            return unheard if not text else UserTurn(unheard.text, unheard.over, sent=False)
        event = _SayEvent(text, asyncio.get_running_loop().create_future())
        self._push(event)
        return await event.done

    async def listen(self) -> UserTurn:
        """The user's words the agent has not heard yet, waiting for them if the user has not spoken."""
        if self.ended is not None:
            return UserTurn("", over=True, sent=False)
        unheard = self._unheard()
        if unheard is not None:
            return unheard
        future: asyncio.Future[UserTurn] = asyncio.get_running_loop().create_future()
        self._listeners.append(future)
        return await future

    async def opening(self) -> str:
        """The user's first words (waiting for them); asked again later, the same words, not new ones."""
        if not self._user_texts:
            return (await self.listen()).text
        self._heard = max(self._heard, 1)
        return self._user_texts[0]

    def hear_all(self) -> None:
        """Count every user message the agent's view holds as heard (an adapter gives them whole)."""
        self._heard = len(self._user_texts)

    def fail(self, error: BaseException) -> None:
        """The agent failed outside a call (its process exited): the waiting loop raises ``error``.

        Once the user has left (a stop token heard), an agent that goes away has simply finished:
        its closing turn is then an empty reply, as a mute in-process agent's would be."""
        if self.ended is not None:
            return
        if self.user_left:
            self._push(_SayEvent("", asyncio.get_running_loop().create_future()))
        else:
            self._push(_Fault(error))

    @property
    def saying(self) -> bool:
        """A message of the agent waits for the user's answer."""
        return self._saying is not None

    # ---- the loop's side -----------------------------------------------------------------------

    async def respond(self, messages: list[JSONObject], tools: list[JSONObject]) -> Reply:
        self.deliver(messages)
        return await self.next_reply()

    def deliver(self, messages: list[JSONObject]) -> None:
        """Hand back what the loop did since the last step: tool results, the user's new words."""
        if self._in_flight:
            answers = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
            while self._in_flight:
                event = self._in_flight.popleft()
                if self._results:  # the loop ran it through ChannelEnvironment: the result itself
                    result = self._results.popleft()
                else:  # a plain environment: the result text as the agent's view holds it
                    text = str(answers.get(event.call.id, "Error: the call got no result"))
                    result = ToolResult(text, text.startswith("Error:"))
                _settle(event.done, result)
        self._user_texts = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
        if self._saying is not None and len(self._user_texts) > self._heard:
            saying, self._saying = self._saying, None
            _settle(saying.done, self._take_unheard())
        while self._listeners and len(self._user_texts) > self._heard:
            _settle(self._listeners.pop(0), self._take_unheard())

    async def next_reply(self) -> Reply:
        """The agent's next step: its queued tool calls, or what it says to the user."""
        wake = self._wakeup()
        self.waiting = True
        try:
            async with asyncio.timeout(self.reply_timeout):
                while not self._pending:
                    wake.clear()
                    await wake.wait()
        except TimeoutError:
            raise InfrastructureError(
                self.describe(f"the agent made no call within {self.reply_timeout:g} s")
            ) from None
        self.waiting = False
        event = self._pending.popleft()
        if isinstance(event, _Fault):
            raise event.error
        if isinstance(event, _SayEvent):
            self._saying = event
            return Reply(text=event.text)
        calls = [event]
        while self._pending and isinstance(self._pending[0], _ToolEvent):
            calls.append(self._pending.popleft())  # type: ignore[arg-type]  # checked on the line above
        self._in_flight.extend(calls)
        return Reply(tool_calls=[c.call for c in calls])

    def record(self, result: ToolResult) -> None:
        """A result of one of the agent's calls, as the loop ran it (ChannelEnvironment)."""
        self._results.append(result)

    def describe(self, what: str) -> str:
        extra = self.explain() if self.explain is not None else ""
        return f"{what} (last request: {self.last_request})" + (f"; {extra}" if extra else "")

    async def aclose(self) -> None:
        """The conversation is over: every waiting call gets its answer, later calls are refused."""
        if self.ended is None:
            self.ended = "closed"
        self.deliver_end()

    def deliver_end(self) -> None:
        for event in self._in_flight:
            result = self._results.popleft() if self._results else ToolResult(ENDED, True)
            _settle(event.done, result)
        self._in_flight.clear()
        over = UserTurn("", over=True, sent=False)
        if self._saying is not None:
            _settle(self._saying.done, UserTurn("", over=True))
            self._saying = None
        for future in self._listeners:
            _settle(future, over)
        self._listeners.clear()
        while self._pending:
            queued = self._pending.popleft()
            if isinstance(queued, _ToolEvent):
                _settle(queued.done, ToolResult(ENDED, True))
            elif isinstance(queued, _SayEvent):
                _settle(queued.done, over)

    # ---- helpers -------------------------------------------------------------------------------

    def _wakeup(self) -> asyncio.Event:
        if self._wake is None:  # made on first use: on the loop the conversation runs on
            self._wake = asyncio.Event()
        return self._wake

    def _push(self, event: _Event) -> None:
        self._pending.append(event)
        self._wakeup().set()

    def _unheard(self) -> UserTurn | None:
        return self._take_unheard() if len(self._user_texts) > self._heard else None

    def _take_unheard(self) -> UserTurn:
        texts = self._user_texts[self._heard :]
        self._heard = len(self._user_texts)
        over = any(has_stop_token(t) for t in texts)
        self.user_left = self.user_left or over
        return UserTurn("\n\n".join(texts), over=over)


class ChannelEnvironment(Environment):
    """The agent's environment as the loop sees it: calls run on ``inner`` (the seeded state, where
    actions and errors are recorded as in process) and each result is noted for the channel."""

    def __init__(self, inner: Environment, channel: AgentChannel) -> None:
        super().__init__(inner.side, {}, [])
        self.inner = inner
        self.channel = channel

    def schemas(self) -> list[JSONObject]:
        return self.inner.schemas()

    def has_tool(self, name: str) -> bool:
        return self.inner.has_tool(name)

    def runs_inline(self, name: str) -> bool:
        return self.inner.runs_inline(name)

    def call(self, name: str, arguments: Mapping[str, JSONValue] | str | None) -> ToolResult:
        result = self.inner.call(name, arguments)
        self.channel.record(result)  # deque.append: safe from the tool thread a slow tool runs on
        return result


def _settle(future: asyncio.Future[ToolResult] | asyncio.Future[UserTurn], value: object) -> None:
    if not future.done():
        future.set_result(value)  # type: ignore[arg-type]
