"""The per-side descriptions a scenario is made of (the success signals' names live in scoring.names)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_tau2.scoring.names import SuccessSignal

__all__ = ["Actions", "Persona", "Resources", "SuccessSignal", "Task"]


@dataclass(frozen=True)
class Persona:
    """Who a side is. ``behavior_config``/``voice_config`` are labels for slicing metrics only."""

    role: str
    name: str
    background: str = ""
    personality: str = ""
    behavior_config: Any = None
    voice_config: Any = None


@dataclass(frozen=True)
class Task:
    """What a side wants to achieve."""

    goal: str
    background: str = ""


@dataclass(frozen=True)
class Actions:
    """How a side should go about it."""

    instructions: list[str] = field(default_factory=list)
    guidelines: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Resources:
    """What a side can use: tool class names with their configuration, and facts it knows."""

    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    information: list[str] = field(default_factory=list)
