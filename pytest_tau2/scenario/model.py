"""The per-side descriptions a scenario is made of, and the six success signals."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class SuccessSignal(enum.Enum):
    """The checks a scenario can be scored on; a scenario whitelists the ones that gate it."""

    ACTION_MATCH = "action_match"
    DB_STATE_MATCH = "db_state_match"
    DB_STATE_ASSERTION = "db_state_assertion"
    NL_ASSERTION = "nl_assertion"
    JUDGE_PASSED = "judge_passed"
    CLEAN_EXIT = "clean_exit"

    @property
    def metric(self) -> str:
        """The field name of this signal in ``metrics.json``."""
        return _METRIC_FIELDS[self]


_METRIC_FIELDS = {
    SuccessSignal.ACTION_MATCH: "is_action_match",
    SuccessSignal.DB_STATE_MATCH: "db_state_match",
    SuccessSignal.DB_STATE_ASSERTION: "db_state_assertion_pass_rate",
    SuccessSignal.NL_ASSERTION: "nl_assertion_pass_rate",
    SuccessSignal.JUDGE_PASSED: "judge_passed",
    SuccessSignal.CLEAN_EXIT: "clean_exit",
}


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
