"""The runner's side of an audio call with a bot (docs/voice.md, "Voice agents over WebSocket").

When the bot's ``ready`` says it speaks audio and ``--tau2-speech-complexity`` is on, the
:class:`~pytest_tau2.bot.client.WebSocketAgent` holds an :class:`AudioCall`, and the conversation
loop's phone line is wrapped in a :class:`BotLine`:

- the user's utterance is synthesized and degraded by the phone line as in phase 1 (the line's
  own recognizer writes ``heard``: what an offline recognizer makes of the audio sent), then
  streamed to the bot as Twilio ``media`` events at ``--tau2-audio-pace``, followed by the
  :data:`~pytest_tau2.bot.audio_wire.USER_TURN_END` mark and real-time silence;
- the agent's turn is the bot's ``media`` events and ``tool_call`` frames up to its
  ``agent_message`` / ``exit`` frame, a ``mark``, or :data:`AGENT_SILENCE_S` of silence after
  its audio has played (not for a bot whose ``ready.audio`` says ``ends_turns``); its audio is
  recognized with the line's recognizer, and that is what the simulated user reads (and the
  agent's words in the transcript, unless the bot's ``agent_message`` reports them);
- latency: from the wall-clock moment the user's last speech frame was sent to the first
  ``media`` event of the agent's reply (the phone line's ``latencies_s``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_tau2.bot import audio_wire
from pytest_tau2.bot.protocol import excerpt
from pytest_tau2.errors import InfrastructureError, ProtocolError

if TYPE_CHECKING:
    from pytest_tau2.speech.line import PhoneLine, Utterance

AGENT_SILENCE_S = 1.0
"""Silence (after the agent's audio has played) that ends an agent turn the bot did not end itself."""


@dataclass
class Heard:
    """The agent's audio of one turn, as the runner received and recognized it."""

    signal: Any  # float32 at the line's rate
    first_audio: float
    heard: str
    asr_s: float


@dataclass
class AudioCall:
    """One call's audio state: the stream's ids, what waits to be streamed, what was received."""

    agent: Any
    """The call's :class:`~pytest_tau2.bot.client.WebSocketAgent` (not imported: it imports this module)."""
    pace: float
    ends_turns: bool = False
    """The bot's ``ready.audio.ends_turns``: it ends every turn itself (no silence rule)."""
    stream_sid: str = ""
    call_sid: str = ""
    phone: PhoneLine | None = None
    pending: list[Utterance] = field(default_factory=list)
    """User utterances carried by the line and not yet streamed."""
    received: Heard | None = None
    """The agent's last turn of audio, until the line records it."""
    _sequence: int = 1
    _chunk: int = 0

    async def open(self) -> None:
        session = str((self.agent.ready or {}).get("session_id") or "0")
        self.stream_sid, self.call_sid = f"MZtau2{session}", f"CAtau2{session}"
        await self._send(audio_wire.connected())
        parameters = {"scenario": self.agent.scenario.name, "session_id": session}
        await self._send(audio_wire.start(self.stream_sid, self.call_sid, parameters))

    async def close(self) -> None:
        self._sequence += 1
        await self._send(audio_wire.stop(self.stream_sid, self.call_sid, self._sequence))

    async def _send(self, event: dict[str, Any]) -> None:
        await self.agent._ws.send(json.dumps(event))

    # ---- one turn ----------------------------------------------------------------------------

    async def turn(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Stream the pending user speech, listen to the agent's turn: its tool calls and the frame
        that ends it (an ``agent_message`` made up from the recognized audio when the bot ended the
        turn with a mark or silence)."""
        if self.phone is None or not self.pending:
            raise InfrastructureError("the bot's audio turn has no user speech to stream")
        utterances, self.pending = self.pending, []
        from pytest_tau2.speech import audio
        from pytest_tau2.speech.line import RATE  # the line's signals (and what its recognizer takes)

        signal = np.concatenate([u.signal for u in utterances]) if utterances else np.zeros(0, np.float32)
        narrow = audio.resample(signal.astype(np.float32), RATE, audio_wire.SAMPLE_RATE)
        chunks = audio_wire.frames(audio_wire.ulaw_encode(np.frombuffer(audio.to_pcm16(narrow), "<i2")))
        sender = asyncio.create_task(self._stream(chunks, utterances))
        try:
            calls, end, ulaw, first = await self._listen()
        finally:
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)
        heard = ""
        if first is not None:
            started = time.perf_counter()
            pcm = audio_wire.ulaw_decode(bytes(ulaw)).tobytes()
            agent_signal = audio.resample(audio.from_pcm16(pcm), audio_wire.SAMPLE_RATE, RATE)
            heard = await asyncio.to_thread(self.phone.asr.transcribe, audio.to_pcm16(agent_signal))
            self.received = Heard(agent_signal, first, heard, time.perf_counter() - started)
        if end is None or (end["type"] == "agent_message" and not end["text"].strip()):
            end = {"type": "agent_message", "text": heard}
        elif end["type"] == "exit":
            end = {**end, "text": (end.get("text") or heard) or None}
        # The words of the turn are its audio: a tool call's text would say them twice.
        return [{**c, "text": None} for c in calls], end

    async def _stream(self, chunks: list[bytes], utterances: list[Utterance]) -> None:
        """The user's speech at the pace, the end-of-utterance mark, then silence in real time."""
        from websockets.exceptions import ConnectionClosed

        clock = self.phone.clock if self.phone is not None else time.monotonic
        step = audio_wire.FRAME_MS / 1000
        try:
            began = time.monotonic()
            for index, chunk in enumerate(chunks):
                await self._media(chunk)
                if self.pace > 0:
                    await asyncio.sleep(max(0.0, began + (index + 1) * step / self.pace - time.monotonic()))
            spoken = clock()
            for u in utterances:
                u.ready = spoken  # the end of the user's speech, as the bot got it
            self._sequence += 1
            await self._send(audio_wire.mark(self.stream_sid, audio_wire.USER_TURN_END, self._sequence))
            began = time.monotonic()
            for index in itertools.count():  # a phone line keeps carrying the room's silence
                await self._media(audio_wire.silence())
                await asyncio.sleep(max(0.0, began + (index + 1) * step - time.monotonic()))
        except ConnectionClosed:
            return  # the listener reports the closed connection

    async def _media(self, chunk: bytes) -> None:
        self._sequence += 1
        self._chunk += 1
        await self._send(audio_wire.media(self.stream_sid, chunk, sequence=self._sequence, chunk=self._chunk))

    async def _listen(self) -> tuple[list[dict[str, Any]], dict[str, Any] | None, bytearray, float | None]:
        from websockets.exceptions import ConnectionClosed

        agent = self.agent
        clock = self.phone.clock if self.phone is not None else time.monotonic
        calls: list[dict[str, Any]] = []
        ulaw = bytearray()
        first: float | None = None
        played_until = 0.0
        waiting_for = "the agent's audio reply"
        while True:
            now = time.monotonic()
            waits_on_silence = first is not None and not self.ends_turns
            timeout = max(0.01, played_until + AGENT_SILENCE_S - now) if waits_on_silence else agent.reply_timeout
            try:
                raw = await asyncio.wait_for(agent._ws.recv(), timeout)
            except TimeoutError:
                if waits_on_silence:
                    return calls, None, ulaw, first  # silence after its speech: the agent's turn is over
                raise await agent._abort(
                    "timeout",
                    f"no frame from the bot at {agent.shown_url} within {agent.reply_timeout:g} s while waiting "
                    f"for {waiting_for} (the user's speech was streamed)",
                    InfrastructureError,
                ) from None
            except ConnectionClosed as exc:
                raise agent.closed_error(exc, waiting_for) from None
            frame = await agent.decode_frame(raw, waiting_for)
            kind = audio_wire.kind(frame)
            if kind == "media":
                data = audio_wire.payload(frame)
                arrived = time.monotonic()
                if first is None:
                    first = clock()
                seconds = len(data) / audio_wire.SAMPLE_RATE
                played_until = max(played_until, arrived) + (seconds / self.pace if self.pace > 0 else 0.0)
                ulaw += data
            elif kind == "mark":
                if first is not None:
                    return calls, None, ulaw, first  # the bot marked the end of its speech
            elif kind == "clear":
                continue  # the bot dropped its own queued speech: what arrived was still heard
            elif kind == "error":
                await agent.aclose()
                raise ProtocolError(
                    f"the bot at {agent.shown_url} sent error {frame['code']!r}: {frame['message']} "
                    f"(while the runner waited for {waiting_for})"
                )
            elif kind == "tool_call":
                calls.append(frame)
                if len(calls) > agent.max_tool_calls_per_turn:
                    raise await agent._abort(
                        "too_many_tool_calls",
                        f"the bot reported more than {agent.max_tool_calls_per_turn} tool calls in one turn: "
                        f"{excerpt(frame)}",
                    )
            elif kind in ("agent_message", "exit"):
                return calls, frame, ulaw, first
            else:
                raise await agent._abort(
                    "unexpected_message",
                    f"unexpected {kind} frame from the bot while waiting for {waiting_for}: {excerpt(raw)}",
                )


class BotLine:
    """The loop's line when the bot speaks audio: the user's side is synthesized and degraded by the
    phone line, then streamed by the call; the agent's side is the audio the bot sent."""

    def __init__(self, phone: PhoneLine, call: AudioCall) -> None:
        self.phone, self.call = phone, call
        call.phone = phone

    async def carry(self, side: str, text: str) -> str:
        if side == "user":
            heard = await self.phone.carry(side, text)
            self.call.pending.append(self.phone.utterances[-1])
            return heard
        received, self.call.received = self.call.received, None
        if received is None:  # the greeting, or a turn without audio: the line speaks the words
            return await self.phone.carry(side, text)
        self.phone.record(side, text, received.heard, received.signal, received.first_audio, received.asr_s)
        return received.heard

    def hang_up(self) -> None:
        """The conversation is over (conversation/loop.py): the line cuts in on nothing after this."""
        self.phone.hang_up()
