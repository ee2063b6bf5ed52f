"""The reference bot's voice (``pytest-tau2 bot --voice``): ASR -> its agent -> TTS over the audio events.

A session of a voice bot announces ``audio`` in ``ready``. When the runner streams a call
(audio_wire.py), :class:`BotVoice` collects the user's ``media`` into one utterance, recognizes it
at the :data:`~pytest_tau2.bot.audio_wire.USER_TURN_END` mark, lets the session's agent answer the
recognized text (tools run and are reported as ``tool_call`` frames, as for text), and speaks the
agent's words back as ``media`` events before the ``agent_message`` / ``exit`` frame that ends
its turn. Engines: the offline pair (espeak-ng, pocketsphinx) unless others are given.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_tau2.bot import audio_wire
from pytest_tau2.environment.jsontypes import JSONObject

AGENT_VOICE = "en-us+f3"
CHUNK_BYTES = 800
"""The bot's media events: 100 ms of 8 kHz mu-law each."""
_SILENT_CODES = frozenset((0xFF, 0x7F))


@dataclass
class VoiceEngines:
    """What the bot speaks and hears with (speech/engines.py protocols)."""

    tts: Any
    asr: Any
    voice: str = AGENT_VOICE

    @staticmethod
    def missing() -> str | None:
        """What the offline pair lacks here, as the install line (None: both are there)."""
        import importlib.util
        import shutil

        if shutil.which("espeak-ng") is None:
            return "install espeak-ng (apt-get install espeak-ng)"
        if importlib.util.find_spec("pocketsphinx") is None:
            return "install pocketsphinx (pip install 'pytest-tau2[voice]')"
        return None

    @classmethod
    def offline(cls) -> VoiceEngines:
        from pytest_tau2.speech.engines import offline_engines

        tts, asr = offline_engines()
        return cls(tts, asr)


@dataclass
class BotVoice:
    """One session's audio: the stream id, the user's speech so far, the engines."""

    engines: VoiceEngines
    stream_sid: str = ""
    heard: list[str] = field(default_factory=list)
    """What the bot recognized of each user utterance (for its log and tests)."""
    _ulaw: bytearray = field(default_factory=bytearray)

    def on_event(self, event: dict[str, Any]) -> bool:
        """Take one runner event; True when a user utterance has ended (its mark arrived)."""
        name = event["event"]
        if name == "start":
            self.stream_sid = event["streamSid"]
        elif name == "media":
            data = audio_wire.payload(event)
            if self._ulaw or not _SILENT_CODES.issuperset(data):  # leading silence is not speech
                self._ulaw += data
        elif name == "mark" and event["mark"]["name"] == audio_wire.USER_TURN_END:
            return True
        return False

    async def recognize(self) -> str:
        """The user's utterance as text (the buffer is emptied)."""
        data, self._ulaw = bytes(self._ulaw), bytearray()
        if not data:
            return ""
        text = await asyncio.to_thread(self._transcribe, data)
        self.heard.append(text)
        return text

    def _transcribe(self, ulaw: bytes) -> str:
        from pytest_tau2.speech import audio

        signal = audio.from_pcm16(audio_wire.ulaw_decode(ulaw).tobytes())
        rate = int(self.engines.asr.rate)
        return str(self.engines.asr.transcribe(audio.to_pcm16(audio.resample(signal, audio_wire.SAMPLE_RATE, rate))))

    async def speak(self, text: str) -> AsyncIterator[JSONObject]:
        """``media`` events of ``text`` spoken in the agent's voice."""
        if not text.strip():
            return
        ulaw = await asyncio.to_thread(self._synthesize, text)
        for start in range(0, len(ulaw), CHUNK_BYTES):
            yield audio_wire.media(self.stream_sid, ulaw[start : start + CHUNK_BYTES])

    def _synthesize(self, text: str) -> bytes:
        from pytest_tau2.speech import audio

        pcm, rate = self.engines.tts.synthesize(text, self.engines.voice)
        narrow = audio.resample(audio.from_pcm16(pcm), rate, audio_wire.SAMPLE_RATE)
        return audio_wire.ulaw_encode(np.frombuffer(audio.to_pcm16(narrow), "<i2"))


async def spoken_turn(voice: BotVoice, frames: AsyncIterator[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    """An agent turn's frames with its words spoken: tool calls pass as they come; the words of the
    turn (a tool call's text, the closing message) are spoken before the frame that ends the turn."""
    words: list[str] = []
    async for frame in frames:
        if frame["type"] == "tool_call":
            if frame.get("text"):
                words.append(frame["text"])
            yield frame
            continue
        if frame["type"] == "agent_message" and frame["text"]:
            words.append(frame["text"])
        elif frame["type"] == "exit" and frame.get("text"):
            words.append(frame["text"])
        async for event in voice.speak(" ".join(words)):
            yield event
        yield frame
