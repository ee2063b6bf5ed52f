"""A minimal pipecat voice bot speaking pytest-tau2's audio protocol (docs/voice.md's worked example).

A real pipecat ``Pipeline``: pipecat's own single-client WebSocket server transport with pipecat's
``TwilioFrameSerializer`` (Twilio Media Streams: base64 8 kHz mu-law ``media`` events), then
speech recognition, the agent, speech synthesis, and the transport's output. The only additions a
pipecat bot needs for pytest-tau2:

- the serializer hands the protocol's JSON frames (``"type"``) and the runner's end-of-utterance
  ``mark`` to the pipeline as ``InputTransportMessageFrame`` (Twilio's serializer drops them);
- the agent answers those frames (``ready`` with ``"audio"``, ``initialized``, the summary) and
  reports each tool call, as ``OutputTransportMessageUrgentFrame``; ``exit`` goes out as an
  ``OutputTransportMessageFrame``, so it leaves after the goodbye's audio.

The agent here is the reference bot's session (pytest_tau2.bot.session.BotSession) with the oracle;
a real bot has its LLM service and tools there. STT and TTS are small FrameProcessors around the
offline engines (pocketsphinx, espeak-ng). The bot does not say when its turn ends: the runner
ends it on silence.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Mapping
from typing import Any

from pipecat.frames.frames import (
    Frame,
    InputAudioRawFrame,
    InputTransportMessageFrame,
    OutputAudioRawFrame,
    OutputTransportMessageFrame,
    OutputTransportMessageUrgentFrame,
    TextFrame,
    TranscriptionFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.serializers.twilio import TwilioFrameSerializer
from pipecat.transports.websocket.server import (
    SingleClientWebsocketServerParams,
    SingleClientWebsocketServerTransport,
)
from pipecat.workers.runner import WorkerRunner

from pytest_tau2.bot.session import BotConfig, BotSession

AUDIO = {"format": "twilio", "encoding": "audio/x-mulaw", "sample_rate": 8000}


class Tau2TwilioSerializer(TwilioFrameSerializer):
    """Twilio's serializer, plus the protocol's JSON frames and marks as transport messages."""

    async def deserialize(self, data: str | bytes) -> Frame | None:
        try:
            message = json.loads(data)
        except ValueError:
            return None
        if "type" in message or message.get("event") == "mark":
            return InputTransportMessageFrame(message=message)
        if message.get("event") == "start":
            self._stream_sid = message["streamSid"]
        return await super().deserialize(data)


class OfflineSTT(FrameProcessor):
    """The caller's audio until the runner's end-of-utterance mark, then one transcription."""

    def __init__(self, asr: Any) -> None:
        super().__init__()
        self.asr, self.pcm = asr, bytearray()

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InputAudioRawFrame):
            if self.pcm or any(frame.audio[1::2]):  # leading digital silence is not speech
                self.pcm += frame.audio
            return
        if isinstance(frame, InputTransportMessageFrame) and frame.message.get("event") == "mark":
            pcm, self.pcm = bytes(self.pcm), bytearray()
            text = await asyncio.to_thread(self.asr.transcribe, pcm) if pcm else ""
            await self.push_frame(TranscriptionFrame(text=text, user_id="caller", timestamp=""))
            return
        await self.push_frame(frame, direction)


class OracleAgent(FrameProcessor):
    """The agent: one BotSession per call; the protocol's frames answered, the agent's words pushed on."""

    def __init__(self, config: BotConfig, scenarios: Mapping[str, Any]) -> None:
        super().__init__()
        self.config, self.scenarios = config, scenarios
        self.session = BotSession(config, scenarios)

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InputTransportMessageFrame) and "type" in frame.message:
            if frame.message["type"] == "hello":
                self.session = BotSession(self.config, self.scenarios)  # a new call
            async for out in self.session.handle(frame.message):
                if out["type"] == "ready":
                    out["audio"] = AUDIO
                await self.push_frame(OutputTransportMessageUrgentFrame(message=out))
        elif isinstance(frame, TranscriptionFrame):
            words: list[str] = []
            async for out in self.session.handle({"type": "user_message", "text": frame.text}):
                if out.get("text"):
                    words.append(out["text"])
                if out["type"] == "tool_call":
                    await self.push_frame(OutputTransportMessageUrgentFrame(message=out))
                    continue
                # the end of the turn: its words spoken, then an exit queued behind their audio
                if words:
                    await self.push_frame(TextFrame(text=" ".join(words)))
                if out["type"] == "exit":
                    await self.push_frame(OutputTransportMessageFrame(message=out))
        else:
            await self.push_frame(frame, direction)


class OfflineTTS(FrameProcessor):
    """The agent's words as audio (one OutputAudioRawFrame; the transport cuts and paces it)."""

    def __init__(self, tts: Any, voice: str = "en-us+f3") -> None:
        super().__init__()
        self.tts, self.voice = tts, voice

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, TextFrame) and not isinstance(frame, TranscriptionFrame):
            pcm, rate = await asyncio.to_thread(self.tts.synthesize, frame.text, self.voice)
            await self.push_frame(OutputAudioRawFrame(audio=pcm, sample_rate=rate, num_channels=1))
            return
        await self.push_frame(frame, direction)


def build(config: BotConfig, scenarios: Mapping[str, Any], port: int) -> PipelineWorker:
    from pytest_tau2.speech.engines import offline_engines

    tts, asr = offline_engines()
    serializer = Tau2TwilioSerializer(stream_sid="", params=TwilioFrameSerializer.InputParams(auto_hang_up=False))
    params = SingleClientWebsocketServerParams(serializer=serializer, audio_in_enabled=True, audio_out_enabled=True)
    transport = SingleClientWebsocketServerTransport(params, host="127.0.0.1", port=port)
    pipeline = Pipeline(
        [transport.input(), OfflineSTT(asr), OracleAgent(config, scenarios), OfflineTTS(tts), transport.output()]
    )
    return PipelineWorker(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=asr.rate, audio_out_sample_rate=16000),
        idle_timeout_secs=None,
        enable_rtvi=False,
    )


class PipecatBotThread:
    """The pipeline on its own event loop in a thread (``with PipecatBotThread(...) as url``)."""

    def __init__(self, config: BotConfig, scenarios: Mapping[str, Any], port: int) -> None:
        self.config, self.scenarios, self.port = config, scenarios, port
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._runner: WorkerRunner | None = None
        self.error: BaseException | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def main() -> None:
            self._runner = WorkerRunner(handle_sigint=False)
            await self._runner.add_workers(build(self.config, self.scenarios, self.port))
            await self._runner.run()

        try:
            self._loop.run_until_complete(main())
        except BaseException as exc:  # reported by the test
            self.error = exc

    def __enter__(self) -> str:
        self._thread.start()
        return f"ws://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cancel(), self._loop).result(30)
        self._thread.join(30)
