"""Speech engines behind two small protocols: :class:`TextToSpeech` and :class:`SpeechRecognizer`.

The offline pair: espeak-ng (Debian's package, run as a process) and pocketsphinx (its PyPI wheel
ships an English model). Either is imported or looked up only when a call is placed; one that is
missing raises a one-line :class:`~pytest_tau2.errors.InfrastructureError` saying how to install it.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import threading
from typing import Any, Protocol

from pytest_tau2.errors import InfrastructureError


class TextToSpeech(Protocol):
    name: str

    def synthesize(self, text: str, voice: str) -> tuple[bytes, int]:
        """Mono 16-bit little-endian PCM of ``text`` spoken in ``voice``, and its sample rate."""
        ...


class SpeechRecognizer(Protocol):
    name: str
    rate: int
    """The sample rate it takes."""

    def transcribe(self, pcm16: bytes) -> str: ...


class EspeakTTS:
    """espeak-ng at ``speed`` words per minute; the same text and voice give the same bytes."""

    name = "espeak-ng"
    _WAV_HEADER = 44  # the header's frame count is wrong on stdout: the samples are what follows it

    def __init__(self, speed: int = 160) -> None:
        self.speed = speed
        self._cache: dict[tuple[str, str, int], tuple[bytes, int]] = {}
        self._lock = threading.Lock()

    def synthesize(self, text: str, voice: str) -> tuple[bytes, int]:
        key = (text, voice, self.speed)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            return hit
        binary = shutil.which("espeak-ng")
        if binary is None:
            raise InfrastructureError("--tau2-speech-complexity: install espeak-ng (apt-get install espeak-ng)")
        done = subprocess.run(
            [binary, "-v", voice, "-s", str(self.speed), "--stdout", text], capture_output=True, check=False
        )
        if done.returncode != 0 or len(done.stdout) < self._WAV_HEADER:
            reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise InfrastructureError(
                f"espeak-ng failed on voice {voice!r}: {reason[-1] if reason else done.returncode}"
            )
        rate = int.from_bytes(done.stdout[24:28], "little")
        result = (done.stdout[self._WAV_HEADER :], rate)
        with self._lock:
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = result
        return result


class PocketsphinxASR:
    """pocketsphinx's bundled US English model at 16 kHz; one decoder, one utterance at a time.

    Each utterance is decoded from the decoder's initial state (its feature normalization
    otherwise adapts to what it heard before, so the text of an utterance depended on the
    calls decoded before it: on the order conversations ran in). The same audio therefore gives
    the same text, and the text of audio already recognized in this process is reused.
    """

    name = "pocketsphinx"
    rate = 16000

    def __init__(self) -> None:
        self._decoder: Any = None
        self._lock = threading.Lock()
        self._heard: dict[bytes, str] = {}  # sha-256 of the audio -> its text

    def _load(self) -> Any:
        try:
            from pocketsphinx import Decoder
        except ImportError:
            raise InfrastructureError(
                "--tau2-speech-complexity: install pocketsphinx (pip install 'pytest-tau2[voice]')"
            ) from None
        # A narrower search than the default (at most 2000 HMMs a frame, no second flat-lexicon
        # pass): 2.4-3.6x less CPU for the same word error rate on this line (bench/results/voice.md).
        return Decoder(samprate=self.rate, logfn="/dev/null", maxhmmpf=2000, fwdflat=False)

    def transcribe(self, pcm16: bytes) -> str:
        key = hashlib.sha256(pcm16).digest()
        with self._lock:
            hit = self._heard.get(key)
            if hit is not None:
                return hit
            if self._decoder is None:
                self._decoder = self._load()
            decoder = self._decoder
            decoder.reinit_feat()  # from the initial normalization: the text depends on this audio alone
            decoder.start_utt()
            decoder.process_raw(pcm16, full_utt=True)
            decoder.end_utt()
            hyp = decoder.hyp()
            text = str(hyp.hypstr) if hyp is not None else ""
            if len(self._heard) > 4096:
                self._heard.clear()
            self._heard[key] = text
            return text


_SHARED: dict[str, Any] = {}


def offline_engines() -> tuple[EspeakTTS, PocketsphinxASR]:
    """The process's offline engines (one cache of synthesized audio, one loaded model)."""
    if not _SHARED:
        _SHARED["tts"], _SHARED["asr"] = EspeakTTS(), PocketsphinxASR()
    return _SHARED["tts"], _SHARED["asr"]
