"""The runner's side of the protocol: :class:`WebSocketAgent`, a Participant whose tools run in a bot.

The conversation loop asks an agent for a :class:`Reply` and runs the reply's tool calls on
the agent's Environment. An external bot has already run its tools on its own DB, so this
agent returns the calls the bot *reported*, and :class:`pytest_tau2.bot.remote.BotEnvironment`
hands the loop the bot's results instead of running anything. The loop therefore records the
bot's calls and results in the transcript exactly as it records an in-process agent's, counts
tool errors and agent steps the same way, and ends on the bot's exit as on an exit tool.

It provides its own agent side (:meth:`WebSocketAgent.agent_side`, a
:class:`~pytest_tau2.bot.remote.RemoteAgentSide`), so :func:`pytest_tau2.run.pipeline.run_scenario`
also asks the bot for the scenario summary (recorded actions, DB hash) and scores from it.
"""

from __future__ import annotations

import asyncio
import socket
from collections import deque
from typing import Any

from pytest_tau2.bot.protocol import PROTOCOL_VERSION, close_text, decode, encode, error_frame, excerpt
from pytest_tau2.bot.remote import RemoteAgentSide
from pytest_tau2.bot.voice_client import AudioCall
from pytest_tau2.conversation.protocol import Reply, ToolCall
from pytest_tau2.environment.env import ToolResult
from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.errors import InfrastructureError, ProtocolError
from pytest_tau2.llm.secrets import mask_url
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.settings import Settings

DEFAULT_MAX_SIZE = 256 << 20
"""Largest frame accepted from a bot: a summary may carry a whole DB (airline: ~7 MB)."""
BOT_EXIT_TOOL = "bot_exit"
"""Pseudo tool shown in the transcript when a bot ends the conversation without a tool call."""

try:  # a version string for hello, informational only
    from pytest_tau2 import __version__ as _VERSION
except ImportError:  # pragma: no cover
    _VERSION = "unknown"


class WebSocketAgent:
    """The agent under test, running in an external bot reached at ``url`` (``ws://HOST:PORT``).

    One connection per scenario: :meth:`start` (also done by the first :meth:`respond`) sends
    ``hello`` and ``apply_initialization``; each :meth:`respond` sends the new user utterance
    and reads the bot's frames up to its ``agent_message`` or ``exit``; :meth:`summary` asks
    for the recorded actions and DB hash; :meth:`aclose` closes. Every failure (refused
    connection, closed socket, invalid frame, error frame, timeout) raises
    :class:`~pytest_tau2.errors.InfrastructureError` (:class:`~pytest_tau2.errors.ProtocolError`
    for protocol violations) naming what happened, with an excerpt of the frame involved.
    """

    def __init__(
        self,
        url: str,
        scenario: Scenario,
        settings: Settings | None = None,
        *,
        reply_timeout: float | None = None,
        connect_timeout: float = 10.0,
        max_size: int = DEFAULT_MAX_SIZE,
        max_tool_calls_per_turn: int = 200,
    ) -> None:
        settings = settings or Settings()
        self.url = url
        self.shown_url = mask_url(url)
        """The URL as messages show it: a password in its userinfo masked."""
        self.scenario = scenario
        self.reply_timeout = float(reply_timeout or settings.agent_timeout)
        """Seconds to wait for each frame of the bot (per message, not per conversation)."""
        self.connect_timeout = connect_timeout
        self.max_size = max_size
        self.max_tool_calls_per_turn = max_tool_calls_per_turn
        self.ready: dict[str, Any] | None = None
        """The bot's ``ready`` frame (protocol version, session id)."""
        self.initialized: dict[str, Any] | None = None
        """The bot's ``initialized`` frame (initial DB hash, tool names)."""
        self.tool_calls: list[dict[str, Any]] = []
        """Every ``tool_call`` frame the bot reported, in order."""
        self.exit: dict[str, Any] | None = None
        """The bot's ``exit`` frame, once it ended the conversation."""
        self.pending_user_tool_calls: list[dict[str, Any]] = []
        """The user's own tool calls not yet sent; they travel with the next ``user_message``."""
        self._ws: Any = None
        self._closed = False
        self._last_sent = "(nothing sent yet)"
        self._users_sent = 0
        self._buffered_text: str | None = None
        self._results: deque[tuple[str, ToolResult]] = deque()
        self.speech = bool(settings.speech_complexity)
        self.audio_pace = settings.audio_pace
        self.audio: AudioCall | None = None
        """The call's audio, when the bot speaks audio and the scenario is a phone call (voice_client.py)."""

    # ---- session ---------------------------------------------------------------------------------

    def agent_side(self) -> RemoteAgentSide:
        """This agent's side of the world is the bot: the pipeline scores from its reports."""
        return RemoteAgentSide(self)

    async def start(self) -> dict[str, Any]:
        """Connect, say hello, send the scenario's initialization. Returns the ``initialized`` frame."""
        if self.initialized is not None:
            return self.initialized
        if self._closed:
            raise InfrastructureError(f"the connection to the bot at {self.shown_url} is already closed")
        await self._connect()
        scenario = self.scenario
        await self._send(
            {
                "type": "hello",
                "protocol_version": PROTOCOL_VERSION,
                "scenario": scenario.name,
                "client": f"pytest-tau2/{_VERSION}",
            }
        )
        self.ready = await self._receive("ready", "the answer to hello")
        if self.ready["protocol_version"] != PROTOCOL_VERSION:
            raise await self._abort(
                "unsupported_version",
                f"the bot at {self.shown_url} speaks protocol version {self.ready['protocol_version']}, "
                f"this runner {PROTOCOL_VERSION}: {excerpt(self.ready)}",
            )
        await self._send(initialization_frame(scenario))
        self.initialized = await self._receive("initialized", "the answer to apply_initialization")
        if self.speech and self.ready.get("audio"):
            self.audio = AudioCall(self, self.audio_pace, bool(self.ready["audio"].get("ends_turns")))
            await self.audio.open()
        return self.initialized

    async def respond(self, messages: list[JSONObject], tools: list[JSONObject]) -> Reply:
        """Send the new user utterance; return the bot's tool calls (with results queued) or its words."""
        if self._buffered_text is not None:  # the words that followed the tool calls returned last time
            text, self._buffered_text = self._buffered_text, None
            return Reply(text=text)
        await self.start()
        if self.exit is not None:
            raise InfrastructureError(
                f"the bot at {self.shown_url} already ended the conversation: {excerpt(self.exit)}"
            )
        utterances = [m for m in messages if m.get("role") == "user"][self._users_sent :]
        if not utterances:
            raise InfrastructureError("the agent was asked to act with no new user utterance to send to the bot")
        if self.audio is not None:
            if self.pending_user_tool_calls:
                raise InfrastructureError(
                    "the user's tool calls (dual-side domains) are not carried in an audio call yet (docs/voice.md)"
                )
            self._users_sent += len(utterances)
            heard_calls, end = await self.audio.turn()
            self.tool_calls.extend(heard_calls)
            return self._reply(heard_calls, end)
        for message in utterances:
            frame: dict[str, Any] = {"type": "user_message", "text": str(message.get("content") or "")}
            if self.pending_user_tool_calls:
                frame["user_tool_calls"], self.pending_user_tool_calls = self.pending_user_tool_calls, []
            await self._send(frame)
            self._users_sent += 1
        calls: list[dict[str, Any]] = []
        while True:
            frame = await self._receive(("tool_call", "agent_message", "exit"), "the agent's reply to user_message")
            if frame["type"] != "tool_call":
                break
            calls.append(frame)
            if len(calls) > self.max_tool_calls_per_turn:
                raise await self._abort(
                    "too_many_tool_calls",
                    f"the bot reported more than "
                    f"{self.max_tool_calls_per_turn} tool calls in one turn: {excerpt(frame)}",
                )
        self.tool_calls.extend(calls)
        return self._reply(calls, frame)

    def _reply(self, calls: list[dict[str, Any]], end: dict[str, Any]) -> Reply:
        if end["type"] == "agent_message":
            if not calls:
                return Reply(text=end["text"])
            self._buffered_text = end["text"]  # said on the next step, after the loop records the results
            ending_id = None
        else:
            self.exit = end
            if not calls:
                # No tool ended the call (a voice pipeline hanging up): a pseudo call carries the
                # exit through the loop, which ends conversations on tool results only.
                calls = [
                    {
                        "id": "bot_exit",
                        "name": BOT_EXIT_TOOL,
                        "arguments": {"reason": end["reason"]},
                        "result": f"The agent ended the conversation ({end['reason']}).",
                        "error": False,
                    }
                ]
            ending_id = end.get("tool_call_id") or calls[-1]["id"]
            if ending_id not in {c["id"] for c in calls}:
                raise ProtocolError(
                    f"exit frame names tool_call_id {ending_id!r}, which the bot did not report "
                    f"in this turn: {excerpt(end)}"
                )
        for call in calls:
            ends = end["reason"] if call["id"] == ending_id else None
            self._results.append((call["name"], ToolResult(call["result"], bool(call["error"]), ends)))
        texts = [c["text"] for c in calls if c.get("text")]
        if end["type"] == "exit" and end.get("text"):
            texts.append(end["text"])
        return Reply(
            text="\n".join(texts) or None, tool_calls=[ToolCall(c["name"], c["arguments"], c["id"]) for c in calls]
        )

    def take_result(self, name: str) -> ToolResult:
        """The bot's result for the next reported call (the loop asks in reply order)."""
        if not self._results:
            raise InfrastructureError(f"the loop ran tool {name!r}, which the bot did not report")
        reported, result = self._results.popleft()
        if reported != name:
            raise InfrastructureError(f"the loop ran tool {name!r} where the bot reported {reported!r}")
        return result

    async def summary(self, include_db: bool = False) -> dict[str, Any]:
        """``{"actions", "db_hash"}`` (and ``"db"`` with ``include_db``) from the bot's scenario summary."""
        if self.initialized is None:
            raise InfrastructureError("scenario summary asked before the session started")
        await self._send({"type": "get_scenario_summary", "include_db": include_db})
        frame = await self._receive("scenario_summary", "the answer to get_scenario_summary")
        return {key: frame[key] for key in ("actions", "db_hash", "db") if key in frame}

    async def aclose(self) -> None:
        """Close the connection (normal closure); safe to call twice."""
        self._closed = True
        if self.audio is not None and self._ws is not None:
            try:
                await asyncio.wait_for(self.audio.close(), 2.0)
            except Exception:  # the bot may be gone: the stop event is a courtesy
                pass
            self.audio = None
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                await ws.close()
            except Exception:  # already gone: nothing left to release
                pass

    # ---- I/O -------------------------------------------------------------------------------------

    async def _connect(self) -> None:
        from websockets.asyncio.client import connect  # deferred: only websocket runs need it

        try:
            # proxy=None: the bot is addressed directly, whatever HTTP(S)_PROXY says.
            self._ws = await connect(
                self.url, open_timeout=self.connect_timeout, max_size=self.max_size, proxy=None, close_timeout=2.0
            )
        except TimeoutError:
            raise InfrastructureError(
                f"no WebSocket handshake from the bot at {self.shown_url} within {self.connect_timeout:g} s"
            ) from None
        except ConnectionRefusedError as exc:
            # Every later scenario would be refused too: fatal stops the run after this one
            # instead of paying a connection attempt per remaining scenario.
            raise InfrastructureError(
                f"cannot connect to the bot at {self.shown_url}: connection refused ({exc}); "
                "is the bot running (python -m pytest_tau2.bot)? Stopping the run.",
                fatal=True,
            ) from None
        except socket.gaierror as exc:
            raise InfrastructureError(
                f"cannot connect to the bot at {self.shown_url}: unknown host ({exc}). Stopping the run.", fatal=True
            ) from None
        except Exception as exc:  # bad URI, not a WebSocket server, TLS...
            raise InfrastructureError(
                f"cannot connect to the bot at {self.shown_url}: {type(exc).__name__}: {mask_url(str(exc))}"
            ) from None

    async def _send(self, frame: dict[str, Any]) -> None:
        from websockets.exceptions import ConnectionClosed

        text = encode(frame, "runner")
        self._last_sent = excerpt(text)
        try:
            await self._ws.send(text)
        except ConnectionClosed as exc:
            raise InfrastructureError(
                f"the bot at {self.shown_url} closed the connection ({close_text(exc)}) before the "
                f"runner could send: {self._last_sent}"
            ) from None

    def closed_error(self, exc: Exception, waiting_for: str) -> InfrastructureError:
        """The bot closed the connection while the runner waited for ``waiting_for`` (a frame the
        runner refused as too large says so, with what to change)."""
        too_large = _too_large(exc)
        if too_large is not None:
            return InfrastructureError(
                f"the bot at {self.shown_url} sent a frame too large ({too_large}) while the runner "
                f"waited for {waiting_for}, and the runner ended the session (close code 1009). Send smaller "
                f"frames (a DB only when asked), or raise the agent's max_size; last frame sent: "
                f"{self._last_sent}"
            )
        return InfrastructureError(
            f"the bot at {self.shown_url} closed the connection ({close_text(exc)}) while the "
            f"runner waited for {waiting_for}; last frame sent: {self._last_sent}"
        )

    async def decode_frame(self, raw: str | bytes, waiting_for: str) -> dict[str, Any]:
        """A frame from the bot, decoded and checked; an invalid one ends the session (``invalid_frame``)."""
        try:
            return decode(raw, "bot")
        except ProtocolError as exc:
            raise await self._abort("invalid_frame", f"{exc} (while waiting for {waiting_for})") from None

    async def _receive(self, expected: str | tuple[str, ...], waiting_for: str) -> dict[str, Any]:
        from websockets.exceptions import ConnectionClosed

        try:
            raw = await asyncio.wait_for(self._ws.recv(), self.reply_timeout)
        except TimeoutError:
            raise await self._abort(
                "timeout",
                f"no frame from the bot at {self.shown_url} within {self.reply_timeout:g} s "
                f"while waiting for {waiting_for}; last frame sent: {self._last_sent}",
                InfrastructureError,
            ) from None
        except ConnectionClosed as exc:
            raise self.closed_error(exc, waiting_for) from None
        frame = await self.decode_frame(raw, waiting_for)
        if frame["type"] == "error":
            await self.aclose()
            raise ProtocolError(
                f"the bot at {self.shown_url} sent error {frame['code']!r}: {frame['message']} "
                f"(while the runner waited for {waiting_for}; last frame sent: {self._last_sent})"
            )
        allowed = (expected,) if isinstance(expected, str) else expected
        if frame["type"] not in allowed:
            raise await self._abort(
                "unexpected_message",
                f"unexpected {frame['type']} frame from the bot while "
                f"waiting for {waiting_for} ({' or '.join(allowed)}): {excerpt(raw)}",
            )
        return frame

    async def _abort(
        self, code: str, message: str, error: type[InfrastructureError] = ProtocolError
    ) -> InfrastructureError:
        """Tell the bot why the runner gives up (best effort), close, and return the error to raise."""
        if self._ws is not None:
            try:
                await asyncio.wait_for(self._ws.send(encode(error_frame(code, message[:2000]), "runner")), 2.0)
            except Exception:  # the bot may be gone or stuck: the runner's error is what matters
                pass
        await self.aclose()
        return error(message)


def initialization_frame(scenario: Scenario) -> dict[str, Any]:
    """The ``apply_initialization`` frame of ``scenario``: its agent side's shared-state init and set-up."""
    state: dict[str, Any] = {}
    scenario.setup_shared_state(state, "agent")
    return {
        "type": "apply_initialization",
        "scenario": scenario.name,
        "side": "agent",
        "shared_state_init": state,
        "initialization_actions": list(scenario.initialization_actions or []),
        "greeting": scenario.agent_greeting,
    }


def _too_large(exc: Exception) -> str | None:
    """``"N bytes > L-byte limit"`` when the runner closed because a frame was over ``max_size``."""
    from websockets.exceptions import PayloadTooBig

    cause = exc.__cause__
    if isinstance(cause, PayloadTooBig) and cause.message is None:
        if cause.size is not None:
            return f"{cause.size} bytes > {cause.max_size}-byte limit"
        return f"over the {cause.max_size}-byte limit once decompressed"
    sent = getattr(exc, "sent", None)
    if sent is not None and sent.code == 1009:  # "message too big", sent by this side
        return sent.reason or "over the size limit"
    return None
