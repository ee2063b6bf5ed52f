"""The loopback server's audio endpoints (``POST /v1/audio/speech``, ``POST /v1/audio/transcriptions``).

Speech answers a WAV (16-bit mono, 24 kHz, a tone 40 ms per character of the input); a transcription
answers the text of the last speech synthesized (the line carries one utterance at a time), so a call
carried by cloud engines through this server hears exactly what was said. ``fail_status`` makes both
answer that HTTP error. Every request is kept for assertions (the speech requests' JSON; the
transcriptions' sizes).
"""

from __future__ import annotations

import io
import json
import math
import threading
import wave
from dataclasses import dataclass, field
from typing import Any

RATE = 24000


@dataclass
class FakeAudio:
    lock: threading.Lock = field(default_factory=threading.Lock)
    speech: list[dict[str, Any]] = field(default_factory=list)
    transcriptions: list[int] = field(default_factory=list)
    """The byte size of each transcription request (multipart: model, the WAV)."""
    fail_status: int | None = None
    last: str = ""

    def answer(self, path: str, body: bytes) -> tuple[int, bytes, str]:
        """``(status, body, content type)`` for one request to ``path``."""
        if self.fail_status is not None:
            error = {"error": {"message": "fake_openai: audio is down", "type": "server_error"}}
            return self.fail_status, json.dumps(error).encode(), "application/json"
        if path.endswith("/audio/speech"):
            request = json.loads(body or b"{}")
            with self.lock:
                self.speech.append(request)
                self.last = str(request.get("input") or "")
            return 200, tone_wav(self.last), "audio/wav"
        with self.lock:
            self.transcriptions.append(len(body))
            text = self.last
        return 200, json.dumps({"text": text}).encode(), "application/json"


def tone_wav(text: str) -> bytes:
    n = max(RATE // 5, int(RATE * 0.04 * len(text)))
    samples = bytearray()
    for i in range(n):
        value = int(9000 * math.sin(2 * math.pi * 440 * i / RATE))
        samples += value.to_bytes(2, "little", signed=True)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(bytes(samples))
    return buffer.getvalue()


def send(handler: Any, status: int, payload: bytes, content_type: str) -> None:
    """One write, as the chat replies (see fake_openai's docstring)."""
    head = f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {len(payload)}\r\n\r\n"
    try:
        handler.connection.sendall(head.encode("latin-1") + payload)
    except OSError:
        handler.close_connection = True
