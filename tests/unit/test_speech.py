"""The phone line's pieces: audio helpers and effects, tau2's speech presets, the line with stand-in engines."""

from __future__ import annotations

import asyncio
import io
import shutil
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_tau2.errors import ScenarioDefinitionError
from pytest_tau2.settings import CHOICES
from pytest_tau2.speech import audio
from pytest_tau2.speech.line import PhoneLine, misheard
from pytest_tau2.speech.presets import PRESETS, default_preset, task_preset
from tests.support.tau2_data import DATA_DIR, requires_data

RATE = 16000


def tone(seconds: float = 1.0, freq: float = 440.0) -> audio.Signal:
    t = np.arange(int(RATE * seconds)) / RATE
    return (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def snr_db(signal: audio.Signal, noise: audio.Signal) -> float:
    return 20 * np.log10(audio.rms(signal) / audio.rms(noise))


def test_pcm16_and_mulaw_round_trips() -> None:
    x = tone()
    assert np.max(np.abs(audio.from_pcm16(audio.to_pcm16(x)) - x)) < 1 / 32768 + 1e-6
    back = audio.mulaw_decode(audio.mulaw_encode(x))
    assert snr_db(x, back - x) > 30  # 8-bit mu-law keeps ~38 dB on a loud tone


def test_resampling_keeps_length_ratio_and_tone() -> None:
    x = tone(0.5)
    down = audio.resample(x, RATE, 8000)
    assert len(down) == len(x) // 2
    up = audio.resample(down, 8000, RATE)
    assert snr_db(x, up - x) > 40


def test_telephony_cuts_outside_the_band() -> None:
    low, inside = tone(freq=100.0), tone(freq=1000.0)
    assert audio.rms(audio.telephony(low, RATE)) < 0.05 * audio.rms(low)
    assert audio.rms(audio.telephony(inside, RATE)) > 0.9 * audio.rms(inside)


@pytest.mark.parametrize("snr", [0.0, 10.0, 15.0])
@pytest.mark.parametrize("kind", ["indoor", "outdoor"])
def test_noise_is_added_at_the_snr_and_seeded(kind: str, snr: float) -> None:
    x = tone()
    noise = audio.background(kind, len(x), RATE, np.random.default_rng(3))
    mixed = audio.add_at_snr(x, noise, snr)
    assert abs(snr_db(x, mixed - x) - snr) < 1.0
    again = audio.background(kind, len(x), RATE, np.random.default_rng(3))
    assert audio.to_pcm16(again) == audio.to_pcm16(noise)


@pytest.mark.parametrize("name", ["car_horn.wav", "siren.wav", "engine.wav", "ringing_phone.wav", "dog_bark.wav", "x"])
def test_bursts_are_generated_by_kind(name: str) -> None:
    burst = audio.burst(name, RATE // 2, RATE, np.random.default_rng(1))
    assert len(burst) == RATE // 2 and audio.rms(burst) > 0.01
    assert np.max(np.abs(burst)) <= 1.0


def test_frame_drops_and_muffling() -> None:
    x = tone(2.0)
    dropped = audio.drop_frames(x, RATE, np.random.default_rng(0), 0.5, 100)
    silent = np.mean(dropped.reshape(-1, 1600).any(axis=1) == 0)
    assert 0.2 < silent < 0.8
    assert audio.to_pcm16(audio.drop_frames(x, RATE, np.random.default_rng(0), 0.5, 100)) == audio.to_pcm16(dropped)
    high = tone(1.0, 3000.0)
    muffled = audio.muffle(high, RATE, 4000, 8000, 1500.0)
    assert audio.rms(muffled[4000:12000]) < 0.05 * audio.rms(high[4000:12000])
    assert np.array_equal(muffled[:4000], high[:4000])


def test_presets_are_the_options_choices_and_upstream_ones() -> None:
    assert PRESETS == CHOICES["speech_complexity"]
    with pytest.raises(ScenarioDefinitionError, match="not one of control, regular"):
        default_preset("loud")


@requires_data("retail")
def test_retail_task_0_presets_from_tau2_data() -> None:
    control = task_preset(DATA_DIR, "retail", "0", "control")
    regular = task_preset(DATA_DIR, "retail", "0", "regular")
    assert control["complexity"] == "control" and control["telephony_enabled"]
    assert not control["source_effects_config"]["enable_background_noise"]
    assert regular["source_effects_config"]["enable_background_noise"]
    assert regular["channel_effects_config"]["enable_frame_drops"]
    assert control["persona_name"] and regular["persona_name"]


def test_custom_domains_get_the_presets_defaults(tmp_path: Path) -> None:
    control = task_preset(tmp_path, "restaurant", None, "control")
    assert control["telephony_enabled"] and not control["source_effects_config"]["enable_background_noise"]
    audio_only = default_preset("control_audio")
    assert audio_only["source_effects_config"]["enable_burst_noise"]
    assert not audio_only["speech_effects_config"]["enable_non_directed_phrases"]
    regular = default_preset("regular")
    assert regular["speech_effects_config"]["enable_non_directed_phrases"] and regular["enable_interruptions"]


class Tone:
    """A stand-in synthesizer: one tone per word (no espeak-ng needed)."""

    name = "tone"

    def synthesize(self, text: str, voice: str) -> tuple[bytes, int]:
        return b"".join(audio.to_pcm16(tone(0.2, 300 + 50 * len(w))) for w in text.split()), RATE


class Echo:
    """A stand-in recognizer that hears a fixed text."""

    name = "echo"
    rate = RATE

    def transcribe(self, pcm16: bytes) -> str:
        return "order four five"


def call(seed: int, clock: list[float]) -> PhoneLine:
    line = PhoneLine(default_preset("regular"), seed, Tone(), Echo(), clock=lambda: clock.pop(0))

    async def talk() -> None:
        for side, text in (("agent", "Hello there"), ("user", "Order 45 please ###STOP###"), ("agent", "Done")):
            await line.carry(side, text)

    asyncio.run(talk())
    return line


def test_a_line_is_seeded_and_records_latency_wer_and_misheard_ids() -> None:
    clocks = [0.0, 1.0, 1.5, 10.0, 11.0, 11.5, 12.5, 14.0, 14.5]  # (start, ready, heard) per utterance
    first, second = call(7, list(clocks)), call(7, list(clocks))
    assert first.call_wav() == second.call_wav()
    assert call(8, list(clocks)).call_wav() != first.call_wav()
    with wave.open(io.BytesIO(first.call_wav())) as wav:
        assert wav.getnchannels() == 2 and wav.getframerate() == RATE
    summary = first.summary()
    assert summary["latencies_s"] == [3.0]  # the agent's audio at 14.0, the user's speech ended at 11.0
    assert summary["wer"]["user"] == 0.6667  # "order 45 please" heard as "order four five"
    assert summary["misheard_identifiers"] == [{"side": "user", "turn": 1, "identifier": "45"}]
    assert [t["spoken"] for t in summary["turns"]][1] == "Order 45 please ###STOP###"
    assert misheard("call 555-1234", "call five") == ["555", "1234"]


class Upper:
    """A line that hears everything in capitals, and says in which order it carried what."""

    def __init__(self) -> None:
        self.carried: list[tuple[str, str]] = []

    async def carry(self, side: str, text: str) -> str:
        self.carried.append((side, text))
        return text.upper()


class Said:
    """A participant that says its replies in turn and keeps what it was shown."""

    def __init__(self, *replies: str) -> None:
        self.replies, self.seen = list(replies), []  # type: list[str], list[list[dict[str, Any]]]

    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
        self.seen.append(messages)
        return self.replies.pop(0) if self.replies else "..."


def test_the_loop_hands_each_side_what_it_heard_and_keeps_what_was_said() -> None:
    from pytest_tau2 import EndConversationTool
    from pytest_tau2.conversation.loop import Conversation
    from pytest_tau2.environment.env import Environment

    agent, user, line = Said("How can I help?", "Bye"), Said("order 45", "thanks ###STOP###"), Upper()
    env = Environment("agent", {}, [EndConversationTool({})])
    conversation = Conversation(
        agent=agent, user=user, agent_env=env, user_env=None, agent_prompt="A", user_prompt="U",
        greeting="Hello", line=line,
    )  # fmt: skip
    result = asyncio.run(conversation.run())
    assert result.stop_reason == "user_stop"
    said = [(m["content"], m.get("heard")) for m in result.transcript]
    assert said == [("Hello", "HELLO"), ("order 45", "ORDER 45"), ("How can I help?", "HOW CAN I HELP?"),
                    ("thanks ###STOP###", "THANKS ###STOP###"), ("Bye", "BYE")]  # fmt: skip
    assert line.carried[-1] == ("agent", "Bye")  # the last utterance is carried when the call ends
    assert agent.seen[0][-1] == {"role": "user", "content": "ORDER 45"}
    assert user.seen[0][-1] == {"role": "user", "content": "HELLO"}


def test_the_speech_option_offers_exactly_the_presets() -> None:
    from pytest_tau2.settings import OPTIONS
    from pytest_tau2.speech.presets import PRESETS

    option = next(o for o in OPTIONS if o.name == "speech_complexity")
    assert option.choices == PRESETS


def barging_call(seed: int, *, hang_up: bool = False) -> PhoneLine:
    """A ``control_behavior`` call (interruptions on, the persona cuts in) with long agent turns."""
    preset = default_preset("control_behavior")
    line = PhoneLine(preset, seed, Tone(), Echo())
    long = " ".join(["word"] * 12)  # 2.4 s of tones: long enough to be cut in on

    async def talk() -> None:
        for _ in range(6):
            await line.carry("agent", long)
            await line.carry("user", "yes")
        if hang_up:
            line.hang_up()
        await line.carry("agent", long)

    asyncio.run(talk())
    return line


def test_interruptions_overlap_the_call_and_cut_what_the_user_heard() -> None:
    assert barging_call(3).call_wav() == barging_call(3).call_wav()
    line = next(c for c in map(barging_call, range(20)) if c.summary()["interruptions"])
    summary = line.summary()
    turns = summary["turns"]
    cut = [i for i, t in enumerate(turns) if t["interrupted"]]
    assert summary["interruptions"] == len(cut) > 0
    for i in cut:  # the user starts while the agent still talks; the agent stops OVERLAP_S later
        assert turns[i]["side"] == "agent" and turns[i + 1]["start_s"] < turns[i]["end_s"]
        assert turns[i]["end_s"] - turns[i + 1]["start_s"] == pytest.approx(0.5, abs=1e-3)
        assert turns[i]["end_s"] - turns[i]["start_s"] < turns[i]["audio_s"]
    assert summary["overlap_s"] == pytest.approx(0.5 * len(cut), abs=1e-2)
    with wave.open(io.BytesIO(line.call_wav())) as wav:
        assert wav.getnframes() / RATE == pytest.approx(summary["call_s"], abs=1e-3)
        frames = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").reshape(-1, 2)
    start = int(turns[cut[0] + 1]["start_s"] * RATE)
    both = frames[start : start + int(0.4 * RATE)]
    assert np.abs(both[:, 0]).max() > 0 and np.abs(both[:, 1]).max() > 0  # both sides speak at once


def test_no_one_cuts_in_on_the_utterance_that_ends_the_call() -> None:
    for seed in range(12):
        assert not barging_call(seed, hang_up=True).utterances[-1].cut


def test_default_personas_interrupt_only_under_behavior() -> None:
    assert default_preset("control")["persona_config"]["interrupt_tendency"] == "waits"
    assert default_preset("control_behavior")["persona_config"]["interrupt_tendency"] == "interrupts"
    assert not PhoneLine(default_preset("control_audio"), 1, Tone(), Echo()).barges_in


def test_the_callers_prompt_has_the_voice_guidelines_and_the_persona(tmp_path: Path) -> None:
    from pytest_tau2.speech.caller import MINIMAL_VERBOSITY, PLAIN_CALL_GUIDELINES, voice_guidelines

    preset = default_preset("regular")
    own = voice_guidelines(None, preset, with_tools=False)  # no tau2 data: our own call guidelines
    assert own.startswith(PLAIN_CALL_GUIDELINES.split("<")[0]) and MINIMAL_VERBOSITY in own
    assert "<PERSONA_GUIDELINES>" not in own and "cut in" in own
    folder = tmp_path / "tau2" / "user_simulator"
    folder.mkdir(parents=True)
    (folder / "simulation_guidelines_voice_tools.md").write_text("TOOLS\n<PERSONA_GUIDELINES>\nEND", "utf-8")
    quiet = voice_guidelines(tmp_path, default_preset("control"), with_tools=True)
    assert quiet == f"TOOLS\n\n\n{MINIMAL_VERBOSITY}\n\nEND"  # upstream's blank lines around the persona's part


def test_a_custom_scenarios_own_conditions_lie_over_the_presets() -> None:
    from pytest_tau2.run.pipeline import phone_line_for
    from pytest_tau2.scenario.base import Scenario
    from pytest_tau2.scoring.names import SuccessSignal
    from pytest_tau2.settings import Settings

    class Calling(Scenario):
        name = "calls__own"
        success_signals = (SuccessSignal.CLEAN_EXIT,)

        def speech_conditions(self, complexity: str) -> dict[str, Any]:
            return {"persona_name": "grandma", "persona_config": {"verbosity": "standard"},
                    "source_effects_config": {"noise_snr_db": 5.0}}  # fmt: skip

    settings = Settings(results_dir="unused", speech_complexity="control_audio", data_dir=None)
    line = phone_line_for(Calling(), settings, 1)
    assert line.preset["persona_name"] == "grandma" and line.preset["complexity"] == "control_audio"
    assert line.preset["source_effects_config"]["noise_snr_db"] == 5.0
    assert line.preset["source_effects_config"]["enable_background_noise"]  # the preset's default kept
    assert "Keep it short" not in line.user_prompt and "<scenario>\nYou are" in line.user_prompt

    class Broken(Calling):
        def speech_conditions(self, complexity: str) -> dict[str, Any]:
            return {"persona_config": "chatty"}

    with pytest.raises(ScenarioDefinitionError, match=r"calls__own.speech_conditions\(\): .*'persona_config'"):
        phone_line_for(Broken(), settings, 1)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")
def test_recognition_depends_on_the_audio_alone_not_on_what_came_before() -> None:
    # Under --tau2-concurrency the calls' utterances reach the one recognizer in any order: the
    # text of each must not depend on it (pocketsphinx's normalization adapts unless reset).
    pytest.importorskip("pocketsphinx")
    from pytest_tau2.speech.engines import EspeakTTS, PocketsphinxASR

    tts = EspeakTTS()
    said = ("Hi! How can I help you today?", "My email is yusuf dot rossi at example dot com.")
    pcms = []
    for text in said:
        pcm, rate = tts.synthesize(text, "en-us+f3")
        pcms.append(audio.to_pcm16(audio.telephony(audio.resample(audio.from_pcm16(pcm), rate, RATE), RATE)))
    after_another = PocketsphinxASR()
    after_another.transcribe(pcms[0])
    assert after_another.transcribe(pcms[1]) == PocketsphinxASR().transcribe(pcms[1])


def test_a_cut_near_the_end_still_counts_with_the_overlap_that_was_left() -> None:
    from pytest_tau2.speech.line import Utterance

    line = PhoneLine(default_preset("control_behavior"), 1, Tone(), Echo())
    agent, user = tone(1.6), tone(1.0)
    line.utterances = [Utterance("agent", "a", "", agent, 0.0, 0.0, 0.0, cut=int(1.28 * RATE)),
                       Utterance("user", "b", "", user, 0.0, 0.0, 0.0)]  # fmt: skip
    summary = line.summary()
    assert summary["interruptions"] == 1 and summary["overlap_s"] == pytest.approx(0.32, abs=1e-3)
    assert [t["interrupted"] for t in summary["turns"]] == [True, False]
    assert summary["turns"][1]["start_s"] == pytest.approx(0.4 + 1.28, abs=1e-3)
