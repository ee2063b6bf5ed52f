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
BARGE_IN_CHANCE = 0.4
"""Under interruptions, the chance that the user cuts in on an agent utterance long enough (seeded)."""
BARGE_IN_MIN_S = 1.5
"""Agent utterances shorter than this are never cut in on."""
BARGE_IN_SPAN = (0.4, 0.8)
"""Where in the agent's utterance the user starts talking (a fraction of its length, uniform)."""
OVERLAP_S = 0.5
"""How long the agent keeps talking over the user before it stops (the overlap in the call's WAV)."""
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
    cut: int | None = None
    """An agent utterance the user cut in on: the sample where the user started talking (the
    user heard the audio up to there)."""


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
        self.user_prompt = ""
        """The simulated user's system prompt on this call (speech/caller.py; set by the runner)."""
        persona = str(preset.get("persona_name") or "plain")
        accented = preset.get("complexity") == "regular" or "accents" in str(preset.get("complexity"))
        pick = zlib.crc32(persona.encode()) % len(_ACCENTS)
        self.voices = {"user": _ACCENTS[pick] if accented else "en-us", "agent": "en-us+f3"}
        persona_config = preset.get("persona_config") or {}
        self.barges_in = bool(preset.get("enable_interruptions")) and persona_config.get("interrupt_tendency") == (
            "interrupts"
        )
        """Whether the user may cut in on the agent (the preset's interruptions and the persona's tendency)."""
        self.hung_up = False
        """Set by :meth:`hang_up`: what is still carried ends the call, so no one cuts in on it."""

    def hang_up(self) -> None:
        """The conversation is over: the utterances still to carry get no answer (the loop calls it)."""
        self.hung_up = True

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
        cut = self._barge_in(len(signal), index) if side == "agent" else None
        heard = self.asr.transcribe(audio.to_pcm16(signal[:cut])) if len(signal) else ""
        self.utterances.append(Utterance(side, text, heard, signal, ready, ready - start, self.clock() - ready, cut))
        return heard

    def record(self, side: str, spoken: str, heard: str, signal: audio.Signal, ready: float, asr_s: float) -> None:
        """Add an utterance whose audio came from outside the line (a bot's speech over the
        WebSocket, bot/voice_client.py): ``signal`` at :data:`RATE`, ``ready`` its first audio."""
        self.utterances.append(Utterance(side, spoken, heard, signal, ready, 0.0, asr_s))

    def _barge_in(self, length: int, index: int) -> int | None:
        """Where the user cuts in on an agent utterance of ``length`` samples (None: it does not),
        drawn from its own generator (the effects' draws stay as they were)."""
        if not self.barges_in or self.hung_up or length < BARGE_IN_MIN_S * RATE:
            return None
        rng = np.random.default_rng([self.seed & 0xFFFFFFFF, index, 2])
        if rng.random() >= BARGE_IN_CHANCE:
            return None
        return int(length * rng.uniform(*BARGE_IN_SPAN))

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

    def timeline(self) -> list[tuple[int, int]]:
        """``(start, length)`` in samples of each utterance in the call's WAV: one after the other
        with :data:`GAP_S` of silence between them; an agent utterance the user cut in on plays
        until :data:`OVERLAP_S` after the user started, and the user's utterance starts at the cut."""
        gap = int(GAP_S * RATE)
        out: list[tuple[int, int]] = []
        cursor = gap
        cut_in = set(self.cut_in())
        for i, u in enumerate(self.utterances):
            if i in cut_in and u.cut is not None:
                out.append((cursor, min(len(u.signal), u.cut + int(OVERLAP_S * RATE))))
                cursor += u.cut
            else:
                out.append((cursor, len(u.signal)))
                cursor += len(u.signal) + gap
        return out

    def cut_in(self) -> list[int]:
        """The indexes of the agent utterances the user cut in on (the next utterance is the user's)."""
        utterances = self.utterances
        return [
            i for i, u in enumerate(utterances) if u.cut is not None and i + 1 < len(utterances)
            and utterances[i + 1].side == "user"
        ]  # fmt: skip

    def call_wav(self) -> bytes:
        """The call as a stereo WAV at :data:`RATE` (user left, agent right), laid out by :meth:`timeline`."""
        spans = self.timeline()
        total = max([start + length for start, length in spans], default=0) + int(GAP_S * RATE)
        left, right = np.zeros(total, dtype=np.float32), np.zeros(total, dtype=np.float32)
        for u, (start, length) in zip(self.utterances, spans, strict=True):
            channel = left if u.side == "user" else right
            channel[start : start + length] += u.signal[:length]
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
        spans = self.timeline()
        cut = self.cut_in()
        overlap = sum(max(0, spans[i][0] + spans[i][1] - spans[i + 1][0]) for i in cut)
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
            "interruptions": len(cut),
            "overlap_s": round(overlap / RATE, 3),
            "call_s": round((max([a + n for a, n in spans], default=0) + int(GAP_S * RATE)) / RATE, 3),
            "turns": [
                {
                    "side": u.side,
                    "spoken": u.spoken,
                    "heard": u.heard,
                    "audio_s": round(len(u.signal) / RATE, 3),
                    "tts_s": round(u.tts_s, 4),
                    "asr_s": round(u.asr_s, 4),
                    "start_s": round(start / RATE, 3),
                    "end_s": round((start + length) / RATE, 3),
                    "interrupted": i in cut,
                }
                for i, (u, (start, length)) in enumerate(zip(self.utterances, spans, strict=True))
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
