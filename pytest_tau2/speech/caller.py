"""The simulated user on a phone call: the system prompt an LLM-played user gets under
``--tau2-speech-complexity`` (docs/voice.md, "The user on the call").

As upstream tau2 composes it (the facts carried over): tau2's voice guidelines
(``<data>/tau2/user_simulator/simulation_guidelines_voice.md``, the ``_tools`` variant when the
user has tools) take the text guidelines' place, their ``<PERSONA_GUIDELINES>`` mark is replaced
by what the preset's ``persona_config`` asks of the user, and the scenario follows as for text.
The guidelines are read at run time from the data folder, never kept here; a project without
tau2's data gets :data:`PLAIN_CALL_GUIDELINES` (ours) instead. The persona's sentences are ours
too (upstream writes its own in code), so a call's user prompt is not upstream's byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

VOICE_GUIDELINES = "tau2/user_simulator/simulation_guidelines_voice.md"
VOICE_GUIDELINES_TOOLS = "tau2/user_simulator/simulation_guidelines_voice_tools.md"
PERSONA_MARK = "<PERSONA_GUIDELINES>"

PLAIN_CALL_GUIDELINES = f"""# You are on a phone call

You are a customer calling a customer service line. Everything you write is spoken aloud by a
speech synthesizer, and what the agent says reaches you through a speech recognizer, so:
- say one short utterance at a time, in plain spoken words, the way people talk on the phone;
- never use lists, markdown, emojis or symbols: say "at" and "dot" in an email address;
- spell identifiers (order numbers, codes, names) one character at a time, separated by commas;
- what you hear may be garbled or cut short: ask the agent to repeat when it does not make sense;
- follow your scenario, and end the call with the tokens it tells you to use.
{PERSONA_MARK}"""
"""The voice guidelines of a project without tau2's data (our own words)."""

MINIMAL_VERBOSITY = """## Keep it short
You say as little as the moment needs: when a word or two answers the agent, say only that
("Yes.", "The blue one."); when a short phrase does, skip the full sentence. Leave out
pleasantries and filler unless they are needed. Still sound like a person talking, not a list
of keywords joined together."""

INTERRUPTS = """## You may cut in
You do not always wait for the agent to finish: on this call you sometimes start talking while
the agent is still speaking. When that happens you answer what you heard up to then, which may
be the first part of what the agent meant to say."""


class Calling(Protocol):
    """What of a scenario the prompt needs (``pytest_tau2.scenario.base.Scenario`` has both)."""

    @property
    def sides(self) -> tuple[str, ...]: ...

    def get_call_user_prompt(self, guidelines: str) -> str: ...


def persona_guidelines(preset: Mapping[str, object]) -> str:
    """What the preset's ``persona_config`` asks of the user (empty when nothing)."""
    found = preset.get("persona_config")
    config: Mapping[str, object] = found if isinstance(found, Mapping) else {}
    parts = []
    if config.get("verbosity") == "minimal":
        parts.append(MINIMAL_VERBOSITY)
    if config.get("interrupt_tendency") == "interrupts" and preset.get("enable_interruptions"):
        parts.append(INTERRUPTS)
    return "\n\n".join(parts)


def voice_guidelines(data_dir: Path | None, preset: Mapping[str, object], *, with_tools: bool) -> str:
    """tau2's voice guidelines for the user (with the persona's part in place), else ours."""
    name = VOICE_GUIDELINES_TOOLS if with_tools else VOICE_GUIDELINES
    path = data_dir / name if data_dir is not None else None
    text = path.read_text("utf-8") if path is not None and path.is_file() else PLAIN_CALL_GUIDELINES
    persona = persona_guidelines(preset)
    return text.replace(PERSONA_MARK, f"\n\n{persona}\n" if persona else "")


def call_user_prompt(scenario: Calling, preset: Mapping[str, object], data_dir: Path | None) -> str:
    """The simulated user's system prompt on this scenario's call (``Scenario.get_call_user_prompt``)."""
    with_tools = "user" in scenario.sides
    return scenario.get_call_user_prompt(voice_guidelines(data_dir, preset, with_tools=with_tools))
