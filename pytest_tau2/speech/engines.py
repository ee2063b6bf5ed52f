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


AGENT_VOICE = "en-us+f3"
"""The agent's espeak-ng voice (speech/line.py): cloud speech gives that side its second voice."""
CLOUD_VOICES = ("alloy", "nova")
"""The cloud voices of the user and the agent unless ``--tau2-tts-args`` names one (``voice``)."""


def _cloud_error(option: str, model: str, what: str, exc: Exception) -> InfrastructureError:
    reason = " ".join(str(exc).split())[:300] or type(exc).__name__
    return InfrastructureError(f"{option} {model}: the {what} call failed: {type(exc).__name__}: {reason}")


class LiteLLMSpeech:
    """Text to speech through litellm's ``speech()`` (``--tau2-tts-model``): a WAV asked for and read."""

    def __init__(self, model: str, args: dict[str, Any], timeout: float = 120.0) -> None:
        self.model, self.args, self.timeout = model, dict(args), timeout
        self.name = f"litellm:{model}"

    def synthesize(self, text: str, voice: str) -> tuple[bytes, int]:
        import io
        import wave

        import litellm

        args = dict(self.args)
        chosen = args.pop("voice", None) or CLOUD_VOICES[1 if voice == AGENT_VOICE else 0]
        args.setdefault("timeout", self.timeout)
        try:
            response = litellm.speech(model=self.model, input=text, voice=chosen, response_format="wav", **args)
            data = response.content
        except Exception as exc:  # any provider failure: the scenario's infrastructure error
            raise _cloud_error("--tau2-tts-model", self.model, "speech", exc) from None
        try:
            with wave.open(io.BytesIO(data), "rb") as reader:
                if reader.getsampwidth() != 2:
                    raise wave.Error(f"{8 * reader.getsampwidth()}-bit samples, not 16")
                frames = reader.readframes(reader.getnframes())
                if reader.getnchannels() > 1:  # keep the first channel
                    width = 2 * reader.getnchannels()
                    frames = b"".join(frames[i : i + 2] for i in range(0, len(frames), width))
                return frames, reader.getframerate()
        except (wave.Error, EOFError) as exc:
            raise InfrastructureError(
                f"--tau2-tts-model {self.model}: the speech reply is not a 16-bit WAV ({exc}; {len(data)} bytes)"
            ) from None


class LiteLLMTranscriber:
    """Speech recognition through litellm's ``transcription()`` (``--tau2-asr-model``), sent as a WAV."""

    rate = 16000

    def __init__(self, model: str, args: dict[str, Any], timeout: float = 120.0) -> None:
        self.model, self.args, self.timeout = model, dict(args), timeout
        self.name = f"litellm:{model}"

    def transcribe(self, pcm16: bytes) -> str:
        import litellm

        from pytest_tau2.speech.audio import from_pcm16, wav_bytes

        if not pcm16:
            return ""
        wav = wav_bytes([from_pcm16(pcm16)], self.rate)
        args = dict(self.args)
        args.setdefault("timeout", self.timeout)
        try:
            response = litellm.transcription(model=self.model, file=("speech.wav", wav), **args)
        except Exception as exc:
            raise _cloud_error("--tau2-asr-model", self.model, "transcription", exc) from None
        text = getattr(response, "text", None)
        if not isinstance(text, str):
            raise InfrastructureError(f"--tau2-asr-model {self.model}: the transcription reply has no text")
        return text.strip()


def engines_for(
    tts_model: tuple[str, dict[str, Any]] | None, asr_model: tuple[str, dict[str, Any]] | None, timeout: float = 120.0
) -> tuple[TextToSpeech, SpeechRecognizer]:
    """The engines of a call: the offline pair, each replaced by a cloud model when one is named
    (``(model, litellm arguments)`` of ``--tau2-tts-model`` / ``--tau2-asr-model``)."""
    tts: TextToSpeech
    asr: SpeechRecognizer
    tts, asr = offline_engines()
    if tts_model is not None:
        tts = LiteLLMSpeech(tts_model[0], tts_model[1], timeout)
    if asr_model is not None:
        asr = LiteLLMTranscriber(asr_model[0], asr_model[1], timeout)
    return tts, asr
