"""The bot protocol's audio: Twilio Media Streams events on the same WebSocket (docs/voice.md).

A bot that speaks audio says so in its ``ready`` frame (``"audio": {"format": "twilio", ...}``).
Under ``--tau2-speech-complexity`` the runner then plays Twilio's part: after ``initialized`` it
sends ``connected`` and ``start``, streams each user utterance as ``media`` events (20 ms of
8 kHz G.711 mu-law, base64), marks the end of the utterance with a ``mark`` named
:data:`USER_TURN_END`, and keeps streaming silence until the agent's turn ends. The bot answers
with ``media`` events of its own (any length), its tool calls as ``tool_call`` frames, and ends its
turn with ``agent_message`` / ``exit``, a ``mark``, or silence. ``stop`` ends the stream.

Events are told from protocol frames by their ``event`` key (frames have ``type``). They are
checked by hand here (the shapes Twilio and pipecat's ``TwilioFrameSerializer`` use; extra fields
are allowed, as Twilio adds some). The mu-law codec is G.711's (the segment table Twilio and
``audioop.lin2ulaw`` use), in numpy.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.errors import ProtocolError

FORMAT = "twilio"
ENCODING = "audio/x-mulaw"
SAMPLE_RATE = 8000
FRAME_MS = 20
FRAME_BYTES = SAMPLE_RATE * FRAME_MS // 1000
"""One media event of the runner: 20 ms of 8 kHz mu-law, 160 bytes (Twilio's size)."""
USER_TURN_END = "user_turn_end"
"""The ``mark`` the runner sends after the last frame of a user utterance."""
AUDIO_OFFER: dict[str, Any] = {"format": FORMAT, "encoding": ENCODING, "sample_rate": SAMPLE_RATE}
"""What a bot puts under ``ready.audio`` to be spoken to in audio."""

RUNNER_EVENTS = ("connected", "start", "media", "mark", "stop")
BOT_EVENTS = ("media", "mark", "clear")

Sender = Literal["runner", "bot"]
_BIAS = 0x84
_SEGMENT_ENDS = np.array([0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF])
_SILENCE = 0xFF  # mu-law code of 0


def is_event(frame: object) -> bool:
    return isinstance(frame, dict) and "event" in frame and "type" not in frame


def kind(frame: dict[str, Any]) -> str:
    """A frame's ``type``, or an event's ``event``."""
    return str(frame.get("type") or frame.get("event"))


def check_event(frame: dict[str, Any], sender: Sender, quoted: str) -> dict[str, Any]:
    """Validate one Media Streams event sent by ``sender``; returns it, or raises ProtocolError."""
    event = frame.get("event")
    allowed = RUNNER_EVENTS if sender == "runner" else BOT_EVENTS
    if event not in allowed:
        raise ProtocolError(f"event from the {sender} is {event!r}; expected one of {', '.join(allowed)}: {quoted}")

    def need(path: str, value: Any, types: type | tuple[type, ...]) -> None:
        if not isinstance(value, types):
            raise ProtocolError(f"{event} event from the {sender}: '{path}' missing or of the wrong type: {quoted}")

    if event in ("media", "mark", "clear", "stop") or (sender == "runner" and event == "start"):
        need("streamSid", frame.get("streamSid"), str)
    if event == "media":
        media = frame.get("media")
        need("media", media, dict)
        need("media/payload", (media or {}).get("payload"), str)
        try:
            base64.b64decode(frame["media"]["payload"], validate=True)
        except (binascii.Error, ValueError):
            raise ProtocolError(f"media event from the {sender}: payload is not base64: {quoted}") from None
    elif event == "mark":
        need("mark", frame.get("mark"), dict)
        need("mark/name", frame["mark"].get("name"), str)
    elif event == "start":
        need("start", frame.get("start"), dict)
        need("start/mediaFormat", frame["start"].get("mediaFormat"), dict)
    return frame


# ---- G.711 mu-law ------------------------------------------------------------------------------


def ulaw_encode(pcm16: NDArray[np.int16]) -> bytes:
    """16-bit linear samples to G.711 mu-law bytes (on 14 bits, as CPython's ``audioop`` does)."""
    x = pcm16.astype(np.int32) >> 2
    negative = x < 0
    magnitude = np.minimum(np.where(negative, -x, x), 8159) + 0x21
    segment = np.searchsorted(_SEGMENT_ENDS, magnitude)
    code = np.where(segment > 7, 0x7F, (segment << 4) | ((magnitude >> (segment + 1)) & 0x0F))
    return (code ^ np.where(negative, 0x7F, 0xFF)).astype(np.uint8).tobytes()


def ulaw_decode(data: bytes) -> NDArray[np.int16]:
    """G.711 mu-law bytes to 16-bit linear samples."""
    u = ~np.frombuffer(data, dtype=np.uint8).astype(np.int32) & 0xFF
    exponent = (u >> 4) & 0x07
    magnitude = ((((u & 0x0F) << 3) + _BIAS) << exponent) - _BIAS
    return np.where(u & 0x80, -magnitude, magnitude).astype(np.int16)


def silence(n_bytes: int = FRAME_BYTES) -> bytes:
    return bytes([_SILENCE]) * n_bytes


def frames(ulaw: bytes, size: int = FRAME_BYTES) -> list[bytes]:
    """``ulaw`` cut into media payloads of ``size`` bytes (the last one padded with silence)."""
    out = [ulaw[i : i + size] for i in range(0, len(ulaw), size)]
    if out and len(out[-1]) < size:
        out[-1] = out[-1] + silence(size - len(out[-1]))
    return out


# ---- events ------------------------------------------------------------------------------------


def media(stream_sid: str, payload: bytes, *, sequence: int | None = None, chunk: int | None = None) -> JSONObject:
    """A ``media`` event (the runner's carries Twilio's sequence number, chunk and timestamp)."""
    body: JSONObject = {"payload": base64.b64encode(payload).decode("ascii")}
    event: JSONObject = {"event": "media", "streamSid": stream_sid, "media": body}
    if sequence is not None and chunk is not None:
        event["sequenceNumber"] = str(sequence)
        body.update(track="inbound", chunk=str(chunk), timestamp=str((chunk - 1) * FRAME_MS))
    return event


def payload(event: dict[str, Any]) -> bytes:
    return base64.b64decode(event["media"]["payload"])


def mark(stream_sid: str, name: str, sequence: int | None = None) -> JSONObject:
    event: JSONObject = {"event": "mark", "streamSid": stream_sid, "mark": {"name": name}}
    if sequence is not None:
        event["sequenceNumber"] = str(sequence)
    return event


def connected() -> JSONObject:
    return {"event": "connected", "protocol": "Call", "version": "1.0.0"}


def start(stream_sid: str, call_sid: str, parameters: dict[str, str]) -> JSONObject:
    custom: JSONObject = {**parameters}
    return {
        "event": "start",
        "sequenceNumber": "1",
        "streamSid": stream_sid,
        "start": {
            "accountSid": "ACpytesttau2",
            "streamSid": stream_sid,
            "callSid": call_sid,
            "tracks": ["inbound"],
            "mediaFormat": {"encoding": ENCODING, "sampleRate": SAMPLE_RATE, "channels": 1},
            "customParameters": custom,
        },
    }


def stop(stream_sid: str, call_sid: str, sequence: int) -> JSONObject:
    return {
        "event": "stop",
        "sequenceNumber": str(sequence),
        "streamSid": stream_sid,
        "stop": {"accountSid": "ACpytesttau2", "callSid": call_sid},
    }
