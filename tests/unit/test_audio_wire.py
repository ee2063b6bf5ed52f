"""The bot protocol's audio events (pytest_tau2/bot/audio_wire.py): G.711 mu-law, the events' checks,
and frames and events told apart on the same connection."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pytest_tau2.bot import audio_wire
from pytest_tau2.bot.protocol import decode, encode
from pytest_tau2.errors import ProtocolError


def test_mulaw_is_g711() -> None:
    # G.711 as CPython's audioop writes it: silence is 0xFF, the extremes the two ends of the code space
    samples = np.array([0, -1, 32767, -32768, 1000, -1000], dtype=np.int16)
    assert list(audio_wire.ulaw_encode(samples)) == [0xFF, 0x7E, 0x80, 0x00, 0xCE, 0x4E]
    assert list(audio_wire.ulaw_decode(bytes([0xFF, 0x80, 0x00, 0xCE]))) == [0, 32124, -32124, 988]
    ramp = np.linspace(-30000, 30000, 4001).astype(np.int16)
    back = audio_wire.ulaw_decode(audio_wire.ulaw_encode(ramp)).astype(np.int32)
    assert np.all(np.abs(back - ramp) <= np.abs(ramp.astype(np.int32)) / 16 + 8)  # 4 mantissa bits


def test_frames_cut_twilio_sized_payloads() -> None:
    chunks = audio_wire.frames(b"\x01" * 330)
    assert [len(c) for c in chunks] == [160, 160, 160] and chunks[-1].endswith(b"\xff" * 150)
    event = audio_wire.media("MZ1", chunks[0], sequence=3, chunk=1)
    assert event["media"] == {"payload": event["media"]["payload"], "track": "inbound", "chunk": "1", "timestamp": "0"}
    assert audio_wire.payload(event) == chunks[0]


def test_events_and_frames_share_the_connection() -> None:
    mark = decode(encode(audio_wire.mark("MZ1", audio_wire.USER_TURN_END, 4), "runner"), "bot")
    assert audio_wire.kind(mark) == "mark" and mark["mark"] == {"name": "user_turn_end"}
    assert audio_wire.kind(decode(json.dumps({"type": "agent_message", "text": "hi"}), "bot")) == "agent_message"
    with pytest.raises(ProtocolError, match="payload is not base64"):
        decode(json.dumps({"event": "media", "streamSid": "MZ1", "media": {"payload": "%%%"}}), "bot")
    with pytest.raises(ProtocolError, match="event from the bot is 'start'"):
        decode(json.dumps(audio_wire.start("MZ1", "CA1", {})), "bot")
    with pytest.raises(ProtocolError, match="'mark/name' missing"):
        decode(json.dumps({"event": "mark", "streamSid": "MZ1", "mark": {}}), "runner")
