"""Signal helpers of the phone line, on float32 arrays in [-1, 1] (numpy only, all deterministic).

Every random choice takes a ``numpy.random.Generator``: the same seed gives the same samples.
"""

from __future__ import annotations

import io
import wave

import numpy as np
from numpy.typing import NDArray

Signal = NDArray[np.float32]

TELEPHONY_RATE = 8000
TELEPHONY_BAND = (300.0, 3400.0)


def from_pcm16(data: bytes) -> Signal:
    return (np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0).astype(np.float32)


def to_pcm16(signal: Signal) -> bytes:
    return (np.clip(signal, -1.0, 32767 / 32768) * 32768.0).round().astype("<i2").tobytes()


def resample(signal: Signal, src: int, dst: int) -> Signal:
    """FFT resampling (the spectrum truncated or zero-padded): band-limited, no extra dependency."""
    if src == dst or len(signal) == 0:
        return signal.astype(np.float32)
    n_out = max(1, round(len(signal) * dst / src))
    spectrum = np.fft.rfft(signal)
    bins = n_out // 2 + 1
    out = np.zeros(bins, dtype=complex)
    keep = min(bins, len(spectrum))
    out[:keep] = spectrum[:keep]
    return (np.fft.irfft(out, n_out) * (n_out / len(signal))).astype(np.float32)


def mulaw_encode(signal: Signal, mu: int = 255) -> NDArray[np.uint8]:
    """G.711-style mu-law companding to 8-bit codes (the continuous law, quantized to 256 levels)."""
    x = np.clip(signal, -1.0, 1.0)
    y = np.sign(x) * np.log1p(mu * np.abs(x)) / np.log1p(mu)
    codes: NDArray[np.uint8] = ((y + 1.0) / 2.0 * mu + 0.5).astype(np.uint8)
    return codes


def mulaw_decode(codes: NDArray[np.uint8], mu: int = 255) -> Signal:
    y = codes.astype(np.float64) / mu * 2.0 - 1.0
    out: Signal = (np.sign(y) * np.expm1(np.abs(y) * np.log1p(mu)) / mu).astype(np.float32)
    return out


def band_pass(signal: Signal, rate: int, low: float, high: float) -> Signal:
    """Zero the spectrum outside [low, high] Hz."""
    if len(signal) == 0:
        return signal
    spectrum = np.fft.rfft(signal)
    freqs = np.fft.rfftfreq(len(signal), 1.0 / rate)
    spectrum[(freqs < low) | (freqs > high)] = 0
    return np.fft.irfft(spectrum, len(signal)).astype(np.float32)


def telephony(signal: Signal, rate: int) -> Signal:
    """A phone channel: down to 8 kHz, the 300-3400 Hz band, mu-law there and back, back to ``rate``."""
    narrow = band_pass(resample(signal, rate, TELEPHONY_RATE), TELEPHONY_RATE, *TELEPHONY_BAND)
    return resample(mulaw_decode(mulaw_encode(narrow)), TELEPHONY_RATE, rate)


def rms(signal: Signal) -> float:
    return float(np.sqrt(np.mean(np.square(signal, dtype=np.float64)))) if len(signal) else 0.0


def scaled_to_snr(signal: Signal, noise: Signal, snr_db: float) -> Signal:
    """``noise`` scaled so that ``signal``'s power over it is ``snr_db`` dB."""
    power = rms(noise)
    if power == 0.0:
        return noise
    return (noise * (rms(signal) / (power * 10 ** (snr_db / 20.0)))).astype(np.float32)


def add_at_snr(signal: Signal, noise: Signal, snr_db: float) -> Signal:
    return (signal + scaled_to_snr(signal, noise[: len(signal)], snr_db)).astype(np.float32)


def _shaped(rng: np.random.Generator, n: int, rate: int, exponent: float, low: float, high: float) -> Signal:
    """Gaussian noise with a 1/f**exponent power spectrum between ``low`` and ``high`` Hz."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1.0 / rate)
    gain = np.where((freqs >= low) & (freqs <= high), 1.0 / np.maximum(freqs, 1.0) ** (exponent / 2), 0.0)
    out = np.fft.irfft(spectrum * gain, n)
    peak = np.max(np.abs(out)) or 1.0
    return (out / peak * 0.5).astype(np.float32)


def background(kind: str | None, n: int, rate: int, rng: np.random.Generator) -> Signal:
    """Generated background noise (upstream's recordings are not in the data): ``indoor`` is a room's
    low hum (pink noise, 60-4000 Hz); ``outdoor`` (and anything else) is wind and traffic (brown-ish
    noise to 8 kHz)."""
    if kind == "indoor":
        return _shaped(rng, n, rate, 1.0, 60.0, 4000.0)
    return _shaped(rng, n, rate, 1.6, 20.0, 8000.0)


def burst(name: str, n: int, rate: int, rng: np.random.Generator) -> Signal:
    """A generated burst named like upstream's file: a horn (two steady tones), a siren (a sweeping
    tone), an engine (low harmonics with a throb), a ringing phone (a trilled tone), a dog's bark
    (short noise pulses); anything else is a noise burst."""
    t = np.arange(n, dtype=np.float64) / rate
    lowered = name.lower()
    if "horn" in lowered:
        wave_ = np.sin(2 * np.pi * 420 * t) + np.sin(2 * np.pi * 500 * t)
    elif "siren" in lowered:
        wave_ = np.sin(2 * np.pi * np.cumsum(800 + 400 * np.sin(2 * np.pi * 0.8 * t)) / rate)
    elif "engine" in lowered:
        wave_ = np.sum([np.sin(2 * np.pi * f * t) / k for k, f in enumerate((40, 80, 120, 160), 1)], axis=0)
        wave_ = wave_ * (1 + 0.5 * np.sin(2 * np.pi * 6 * t))
    elif "ring" in lowered:
        wave_ = np.sin(2 * np.pi * 440 * t) * (np.sin(2 * np.pi * 20 * t) > 0)
    elif "dog" in lowered or "bark" in lowered:
        wave_ = rng.standard_normal(n) * ((t % 0.35) < 0.12)
    else:
        wave_ = rng.standard_normal(n)
    envelope = np.minimum(1.0, np.minimum(t, t[-1] - t if n else t) / 0.02)
    shaped = np.asarray(wave_) * envelope
    return (shaped / (np.max(np.abs(shaped)) or 1.0) * 0.5).astype(np.float32)


def drop_frames(signal: Signal, rate: int, rng: np.random.Generator, probability: float, duration_ms: float) -> Signal:
    """Silence whole frames of ``duration_ms``, each with ``probability`` (lost packets)."""
    size = max(1, int(rate * duration_ms / 1000))
    out = signal.copy()
    for start in range(0, len(out), size):
        if rng.random() < probability:
            out[start : start + size] = 0.0
    return out


def muffle(signal: Signal, rate: int, start: int, length: int, cutoff: float) -> Signal:
    """Low-pass ``cutoff`` Hz over ``[start, start + length)`` (a hand over the microphone)."""
    out = signal.copy()
    segment = out[start : start + length]
    if len(segment):
        out[start : start + length] = band_pass(segment, rate, 0.0, cutoff)
    return out


def wav_bytes(channels: list[Signal], rate: int) -> bytes:
    """A 16-bit PCM WAV of equal-length channels (mono: one, stereo: left then right)."""
    frames = np.stack([np.clip(c, -1.0, 32767 / 32768) for c in channels], axis=1)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(len(channels))
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((frames * 32768.0).round().astype("<i2").tobytes())
    return buffer.getvalue()
