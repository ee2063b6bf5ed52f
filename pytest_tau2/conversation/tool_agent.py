"""An agent that wants OpenAI tool schemas and a ``call_tool(name, args)`` callable, as a Participant.

Many Python agents run their own tool loop: given the conversation so far and the tools as
OpenAI-style schemas, they call tools through a function they are handed and return what to say.
:class:`ToolCallingAgent` seats such an agent in the conversation loop: each agent turn runs the
agent's ``turn`` function, its ``call_tool`` calls become the loop's tool calls (run on the
scenario's seeded state, recorded, counted and limited as any agent's), and the text it returns is
said to the user. The agent needs no MCP (docs/mcp.md, "Python agents without MCP")::

    async def turn(messages, tools, call_tool):          # or a plain def: it runs on a thread
        return await my_agent.reply(messages, tools=tools, call_tool=call_tool)

    @pytest.fixture
    def tau2_agent():
        return ToolCallingAgent(turn)

``messages`` is the agent's view in OpenAI chat format (its system prompt, the user's words, its
earlier replies with their tool calls and results); ``call_tool(name, arguments)`` takes the
arguments as a mapping or JSON text and returns the result text the litellm agent would read.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping

from pytest_tau2.conversation.channel import AgentChannel
from pytest_tau2.conversation.protocol import Reply
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue

__all__ = ["AsyncCallTool", "SyncCallTool", "ToolCallingAgent"]

AsyncCallTool = Callable[[str, "Mapping[str, JSONValue] | str | None"], Awaitable[str]]
SyncCallTool = Callable[[str, "Mapping[str, JSONValue] | str | None"], str]
Turn = Callable[..., "Awaitable[str | None] | str | None"]
"""``turn(messages, tools, call_tool)``: async with an :data:`AsyncCallTool`, or plain with a :data:`SyncCallTool`."""


class ToolCallingAgent:
    """A Participant running ``turn(messages, tools, call_tool) -> text`` once per agent turn.

    ``turn`` may be ``async def`` (``call_tool`` is then awaited) or a plain function, which runs
    on a worker thread with a blocking ``call_tool``. An exception it raises ends the conversation
    as the same exception from an in-process agent would.
    """

    def __init__(self, turn: Turn, *, reply_timeout: float = 600.0) -> None:
        self.turn = turn
        self.channel = AgentChannel(reply_timeout=reply_timeout)
        self._task: asyncio.Future[None] | None = None
        self._finishing = False  # the running turn returned its text and is saying it
        self._is_async = inspect.iscoroutinefunction(turn) or inspect.iscoroutinefunction(
            getattr(turn, "__call__", None)  # noqa: B004  # an object with an async __call__
        )

    async def respond(self, messages: list[JSONObject], tools: list[JSONObject]) -> Reply:
        channel = self.channel
        channel.deliver(messages)
        task = self._task
        if task is not None and self._finishing and not channel.saying:
            await asyncio.wait([task])  # the user answered the turn's last words: the turn is over
        if task is not None and task.done():
            task.result()  # the agent's own exception, raised where the loop asked for its step
            self._task = None
        if self._task is None:
            channel.hear_all()
            self._finishing = False
            self._task = asyncio.ensure_future(self._run_turn(list(messages), list(tools)))
            self._task.add_done_callback(self._failed)
        return await channel.next_reply()

    async def _run_turn(self, messages: list[JSONObject], tools: list[JSONObject]) -> None:
        channel = self.channel
        if self._is_async:
            text = await self.turn(messages, tools, self._async_call_tool)  # type: ignore[misc]
        else:
            loop = asyncio.get_running_loop()

            def call_tool(name: str, arguments: Mapping[str, JSONValue] | str | None = None) -> str:
                return asyncio.run_coroutine_threadsafe(self._async_call_tool(name, arguments), loop).result()

            text = await asyncio.to_thread(self.turn, messages, tools, call_tool)
        self._finishing = True
        await channel.send_message(str(text or ""))

    async def _async_call_tool(self, name: str, arguments: Mapping[str, JSONValue] | str | None = None) -> str:
        return (await self.channel.call_tool(name, arguments)).content

    def _failed(self, task: asyncio.Future[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self.channel.fail(task.exception())  # type: ignore[arg-type]

    async def aclose(self) -> None:
        await self.channel.aclose()
        task, self._task = self._task, None
        if task is not None and not task.done():
            # The turn still runs (the loop stopped it: max_turns, an exit tool): its pending calls
            # were answered "ended"; give it a moment to return, then cancel it.
            try:
                await asyncio.wait_for(asyncio.shield(task), 1.0)
            except BaseException:  # its own failure or our timeout: it is over either way
                task.cancel()
