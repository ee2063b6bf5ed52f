"""tau2's speech presets: a task's persona and acoustic conditions under one complexity.

tau2 domains read ``<data>/tau2/domains/<domain>/tasks_voice.json`` (``{"base_seed", "configs":
{task_id: {"configs": {complexity: {...}}}}}``); a task or domain without one (the custom domains)
gets the preset's defaults (:func:`default_preset`): ``control`` is a clean phone line, ``regular``
turns every effect on, and each ablation turns on the groups its name lists.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_tau2.errors import ScenarioDefinitionError

PRESETS = (
    "control",
    "regular",
    "control_audio",
    "control_accents",
    "control_behavior",
    "control_audio_accents",
    "control_audio_behavior",
    "control_accents_behavior",
)

_REGULAR: dict[str, Any] = {
    "persona_name": None,
    "background_noise_file": "generated_indoor.wav",
    "burst_noise_files": ["generated_horn.wav", "generated_engine.wav"],
    "environment": "indoor",
    "telephony_enabled": True,
    "enable_interruptions": True,
    "channel_effects_config": {"enable_frame_drops": True, "frame_drop_rate": 0.02, "frame_drop_duration_ms": 150},
    "source_effects_config": {
        "enable_background_noise": True,
        "noise_snr_db": 15.0,
        "enable_burst_noise": True,
        "burst_noise_events_per_minute": 1.0,
        "burst_snr_range_db": [-5.0, 10.0],
    },
    "speech_effects_config": {
        "enable_dynamic_muffling": True,
        "muffle_probability": 0.2,
        "muffle_segment_duration_ms": 500,
        "muffle_cutoff_freq": 1500.0,
        "enable_non_directed_phrases": True,
        "non_directed_phrases": [{"text": "Hold on a second."}, {"text": "Just a minute."}, {"text": "One second."}],
        "speech_insert_events_per_minute": 0.7,
    },
    "persona_config": {"verbosity": "minimal", "interrupt_tendency": "interrupts"},
}


def default_preset(complexity: str) -> dict[str, Any]:
    """The conditions of ``complexity`` for a task tau2 gives none: the groups its name turns on
    (``audio``: noise, bursts, frame drops, muffling; ``behavior``: phrases aside, interruptions;
    ``accents``: a persona other than the plain US voice); ``regular`` is all of them."""
    check_complexity(complexity)
    preset = copy.deepcopy(_REGULAR)
    every = complexity == "regular"
    audio, behavior, accents = (every or group in complexity for group in ("audio", "behavior", "accents"))
    source, channel, speech = (
        preset[k] for k in ("source_effects_config", "channel_effects_config", "speech_effects_config")
    )
    source["enable_background_noise"] = source["enable_burst_noise"] = audio
    channel["enable_frame_drops"] = speech["enable_dynamic_muffling"] = audio
    speech["enable_non_directed_phrases"] = preset["enable_interruptions"] = behavior
    preset["persona_config"]["interrupt_tendency"] = "interrupts" if behavior else "waits"
    if not audio:
        preset["background_noise_file"], preset["burst_noise_files"], preset["environment"] = None, [], None
    preset["persona_name"] = "accented" if accents else "plain"
    preset["complexity"] = complexity
    return preset


def check_complexity(complexity: str) -> None:
    if complexity not in PRESETS:
        raise ScenarioDefinitionError(f"--tau2-speech-complexity {complexity!r}: not one of {', '.join(PRESETS)}")


@functools.lru_cache(maxsize=16)
def _voice_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ScenarioDefinitionError(f"{path}: unreadable speech presets: {exc}") from None
    configs = data.get("configs") if isinstance(data, dict) else None
    if not isinstance(configs, dict):
        raise ScenarioDefinitionError(f"{path}: no 'configs' object of tasks")
    return configs


def task_preset(data_dir: Path | None, domain: str, task_id: str | None, complexity: str) -> dict[str, Any]:
    """The task's conditions under ``complexity`` from tau2's ``tasks_voice.json`` (``domain``
    as tau2 names it: retail, airline, ...), else :func:`default_preset`'s."""
    check_complexity(complexity)
    path = data_dir / "tau2" / "domains" / domain / "tasks_voice.json" if data_dir is not None else None
    if path is None or task_id is None or not path.is_file():
        return default_preset(complexity)
    task = _voice_file(path).get(str(task_id))
    preset = task.get("configs", {}).get(complexity) if isinstance(task, dict) else None
    if not isinstance(preset, dict):
        return default_preset(complexity)
    return copy.deepcopy(preset)


def laid_over(base: dict[str, Any], own: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``own`` conditions laid over ``base`` (nested objects key by key); a value of the wrong
    kind is a ScenarioDefinitionError naming ``where`` and the key."""
    out = copy.deepcopy(base)
    for key, value in own.items():
        if isinstance(out.get(key), dict):
            if not isinstance(value, Mapping):
                raise ScenarioDefinitionError(f"{where}: speech condition {key!r} must be an object, got {value!r}")
            out[key] = laid_over(out[key], value, f"{where}.{key}")
        else:
            out[key] = copy.deepcopy(value)
    return out
