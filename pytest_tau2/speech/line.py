"""The phone line between the simulated user and the agent, and the record of the call.

:meth:`PhoneLine.carry` takes what one side said: synthesizes it, passes it through the preset's
effects for that direction (the user's: muffling, background and burst noise, the telephone band
and mu-law, frame drops; the agent's: the telephone channel only) and recognizes it; the text
recognized is what the other side hears. The work runs off the event loop (a thread).

Every random choice draws from a generator seeded by (trial seed, utterance index, side): the same
seed gives the same audio bytes. Latency is wall-clock: for each agent utterance, from the moment
the user's previous utterance had been spoken (its audio ready) to the agent's first audio (its
reply synthesized): the agent's recognition, its model turn and tools, and its synthesis.
"""

from __future__ import annotations

import asyncio
import re
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_tau2.speech import audio
from pytest_tau2.speech.engines import SpeechRecognizer, TextToSpeech

RATE = 16000
"""The line's sample rate: the call's WAV and the recognizer's input."""
GAP_S = 0.4
"""Silence between utterances in the call's WAV (fixed, so the file depends on the seed alone)."""
_ACCENTS = ("en-gb-scotland", "en-029", "en-gb-x-rp", "en-gb-x-gbclan", "en-gb")
_CONTROL_TOKENS = re.compile(r"#{2,}[A-Z_]+#{2,}")
_WORD = re.compile(r"[a-z0-9']+")


@dataclass
class Utterance:
    side: str  # "user" | "agent"
    spoken: str
    heard: str
    signal: audio.Signal
    """The audio as it reached the other side, at :data:`RATE`."""
    ready: float
    """Clock time its audio was ready (the user's end of speech; the agent's first audio)."""
    tts_s: float
    asr_s: float


class PhoneLine:
    """One call: the preset's conditions, the engines, the trial's seed, and every utterance."""

    def __init__(
        self,
        preset: dict[str, Any],
        seed: int,
        tts: TextToSpeech,
        asr: SpeechRecognizer,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.preset, self.seed, self.tts, self.asr, self.clock = preset, seed, tts, asr, clock
        self.utterances: list[Utterance] = []
        persona = str(preset.get("persona_name") or "plain")
        accented = preset.get("complexity") == "regular" or "accents" in str(preset.get("complexity"))
        pick = zlib.crc32(persona.encode()) % len(_ACCENTS)
        self.voices = {"user": _ACCENTS[pick] if accented else "en-us", "agent": "en-us+f3"}

    async def carry(self, side: str, text: str) -> str:
        """What the other side hears of ``text`` said by ``side`` ("user" or "agent")."""
        return await asyncio.to_thread(self._carry, side, text, len(self.utterances))

    def _carry(self, side: str, text: str, index: int) -> str:
        rng = np.random.default_rng([self.seed & 0xFFFFFFFF, index, 0 if side == "user" else 1])
        said = _CONTROL_TOKENS.sub(" ", text).strip()
        start = self.clock()
        signal = np.zeros(0, dtype=np.float32)
        if said:
            if side == "user":
                said = self._aside(said, rng)
            pcm, rate = self.tts.synthesize(said, self.voices[side])
            signal = audio.resample(audio.from_pcm16(pcm), rate, RATE)
            signal = self._user_effects(signal, rng) if side == "user" else self._channel(signal, rng, drops=False)
        ready = self.clock()
        heard = self.asr.transcribe(audio.to_pcm16(signal)) if len(signal) else ""
        self.utterances.append(Utterance(side, text, heard, signal, ready, ready - start, self.clock() - ready))
        return heard

    def record(self, side: str, spoken: str, heard: str, signal: audio.Signal, ready: float, asr_s: float) -> None:
        """Add an utterance whose audio came from outside the line (a bot's speech over the
        WebSocket, bot/voice_client.py): ``signal`` at :data:`RATE`, ``ready`` its first audio."""
        self.utterances.append(Utterance(side, spoken, heard, signal, ready, 0.0, asr_s))

    def _aside(self, text: str, rng: np.random.Generator) -> str:
        """A phrase said to someone else in the room before ``text`` (``behavior`` presets)."""
        speech = self.preset.get("speech_effects_config") or {}
        phrases = [p.get("text") for p in speech.get("non_directed_phrases") or [] if isinstance(p, dict)]
        per_minute = float(speech.get("speech_insert_events_per_minute") or 0.0)
        minutes = len(text.split()) / 150.0
        if speech.get("enable_non_directed_phrases") and phrases and rng.random() < min(1.0, per_minute * minutes):
            return f"{phrases[int(rng.integers(len(phrases)))]} {text}"
        return text

    def _user_effects(self, signal: audio.Signal, rng: np.random.Generator) -> audio.Signal:
        speech = self.preset.get("speech_effects_config") or {}
        if speech.get("enable_dynamic_muffling") and rng.random() < float(speech.get("muffle_probability") or 0):
            length = int(RATE * float(speech.get("muffle_segment_duration_ms") or 500) / 1000)
            start = int(rng.integers(max(1, len(signal) - length)))
            signal = audio.muffle(signal, RATE, start, length, float(speech.get("muffle_cutoff_freq") or 1500.0))
        source = self.preset.get("source_effects_config") or {}
        if source.get("enable_background_noise"):
            noise = audio.background(self.preset.get("environment"), len(signal), RATE, rng)
            signal = audio.add_at_snr(signal, noise, float(source.get("noise_snr_db") or 15.0))
        files = [str(f) for f in self.preset.get("burst_noise_files") or []] or ["noise"]
        if source.get("enable_burst_noise"):
            low, high = (source.get("burst_snr_range_db") or [-5.0, 10.0])[:2]
            rate = float(source.get("burst_noise_events_per_minute") or 0.0) * len(signal) / RATE / 60.0
            for _ in range(int(rng.poisson(rate))):
                length = min(len(signal), int(RATE * rng.uniform(0.4, 1.0)))
                start = int(rng.integers(max(1, len(signal) - length)))
                burst = audio.burst(files[int(rng.integers(len(files)))], length, RATE, rng)
                scaled = audio.scaled_to_snr(signal, burst, float(rng.uniform(low, high)))
                signal = signal.copy()
                signal[start : start + length] += scaled
        return self._channel(signal, rng, drops=True)

    def _channel(self, signal: audio.Signal, rng: np.random.Generator, *, drops: bool) -> audio.Signal:
        if self.preset.get("telephony_enabled", True):
            signal = audio.telephony(signal, RATE)
        channel = self.preset.get("channel_effects_config") or {}
        if drops and channel.get("enable_frame_drops"):
            duration = float(channel.get("frame_drop_duration_ms") or 150)
            signal = audio.drop_frames(signal, RATE, rng, float(channel.get("frame_drop_rate") or 0.0), duration)
        return signal

    # ---- the call's record ---------------------------------------------------------------------

    def call_wav(self) -> bytes:
        """The call as a stereo WAV at :data:`RATE` (user left, agent right), utterances one after
        the other with :data:`GAP_S` of silence between them."""
        gap = int(GAP_S * RATE)
        total = gap + sum(len(u.signal) + gap for u in self.utterances)
        left, right = np.zeros(total, dtype=np.float32), np.zeros(total, dtype=np.float32)
        cursor = gap
        for u in self.utterances:
            channel = left if u.side == "user" else right
            channel[cursor : cursor + len(u.signal)] = u.signal
            cursor += len(u.signal) + gap
        return audio.wav_bytes([left, right], RATE)

    def latencies(self) -> list[float]:
        """The agent's response latency (s) of each agent utterance that answers a user utterance."""
        out: list[float] = []
        last_user: Utterance | None = None
        for u in self.utterances:
            if u.side == "user":
                last_user = u
            elif last_user is not None:
                out.append(round(u.ready - last_user.ready, 4))
                last_user = None
        return out

    def summary(self) -> dict[str, Any]:
        """metrics.json's ``voice`` object."""
        latencies = self.latencies()
        stats = {f"p{q}": round(float(np.percentile(latencies, q)), 4) if latencies else None for q in (50, 90, 95)}
        sides = ("user", "agent")
        return {
            "complexity": self.preset.get("complexity"),
            "persona": self.preset.get("persona_name"),
            "voices": dict(self.voices),
            "engines": {"tts": self.tts.name, "asr": self.asr.name},
            "audio_s": round(sum(len(u.signal) for u in self.utterances) / RATE, 3),
            "latencies_s": latencies,
            "latency_s": stats,
            "wer": {s: word_error_rate([u for u in self.utterances if u.side == s]) for s in sides},
            "misheard_identifiers": [
                {"side": u.side, "turn": i, "identifier": token}
                for i, u in enumerate(self.utterances)
                for token in misheard(u.spoken, u.heard)
            ],
            "turns": [
                {
                    "side": u.side,
                    "spoken": u.spoken,
                    "heard": u.heard,
                    "audio_s": round(len(u.signal) / RATE, 3),
                    "tts_s": round(u.tts_s, 4),
                    "asr_s": round(u.asr_s, 4),
                }
                for u in self.utterances
            ],
        }


def words(text: str) -> list[str]:
    return _WORD.findall(_CONTROL_TOKENS.sub(" ", text).lower())


def word_error_rate(utterances: list[Utterance]) -> float | None:
    """WER of what was heard against what was spoken, over all of one side's utterances (jiwer)."""
    pairs = [(" ".join(words(u.spoken)), " ".join(words(u.heard))) for u in utterances]
    pairs = [(ref, hyp) for ref, hyp in pairs if ref]
    if not pairs:
        return None
    import jiwer

    return round(float(jiwer.wer([r for r, _ in pairs], [h for _, h in pairs])), 4)


def misheard(spoken: str, heard: str) -> list[str]:
    """The identifiers (tokens with a digit) of ``spoken`` that ``heard`` does not hold."""
    held = set(words(heard))
    return [t for t in dict.fromkeys(words(spoken)) if any(c.isdigit() for c in t) and t not in held]


def phone_line(preset: dict[str, Any], seed: int) -> PhoneLine:
    """A line with the offline engines (:func:`~pytest_tau2.speech.engines.offline_engines`)."""
    from pytest_tau2.speech.engines import offline_engines

    tts, asr = offline_engines()
    return PhoneLine(preset, seed, tts, asr)
