"""The parts of tau2-bench's ``Results`` file that pytest-tau2 writes and reads, as pydantic models.

Written from upstream's data model at the pin (``src/tau2/data_model/simulation.py`` and
``message.py``): the same field names, types and meanings, only the fields this project fills or
reads. Every model keeps the keys it does not know (``extra="allow"``), so an upstream file read
here loses nothing that :meth:`Results.document` would write back, and an upstream file with
newer fields still loads.

What the shapes are, in short (docs/leaderboard.md, "Export to tau2's formats"):

- ``Results``: ``info`` (run configuration), ``tasks`` (upstream's task objects, kept exactly as
  the pinned data holds them: upstream compares them by hash), ``simulations``;
- ``SimulationRun``: one conversation of one task and one trial (upstream numbers trials from 0);
- messages: ``assistant`` / ``user`` (text, ``tool_calls``) and ``tool`` (one result, ``id`` the
  call's id, ``requestor`` ``assistant`` or ``user``), numbered by ``turn_idx``;
- ``RewardInfo``: the reward, its basis and breakdown by component, and the checks behind them.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TERMINATION_REASONS = (
    "user_stop", "agent_stop", "max_steps", "timeout", "too_many_errors", "agent_error", "user_error",
    "infrastructure_error", "context_window_exceeded", "unexpected_error",
)  # fmt: skip
"""Upstream's ``TerminationReason`` values at the pin; only the first two are ever scored."""
SCORED_TERMINATIONS = frozenset({"user_stop", "agent_stop"})
REWARD_TYPES = ("DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE")
UPSTREAM_DOMAINS = {
    "tau2_retail": "retail",
    "tau2_airline": "airline",
    "tau2_telecom": "telecom",
    "tau2_banking_knowledge": "banking_knowledge",
    "tau2_mock": "mock",
}
"""Our domain (metrics.json's ``domain``) -> upstream's ``domain_name``."""


class Shape(BaseModel):
    """A part of an upstream file: unknown keys kept (upstream has many more), written without nulls."""

    model_config = ConfigDict(extra="allow")


class ToolCall(Shape):
    id: str = ""
    name: str
    arguments: dict[str, Any]
    requestor: Literal["assistant", "user"] = "assistant"


class ParticipantMessage(Shape):
    """An ``assistant`` or ``user`` message (upstream's AssistantMessage / UserMessage), or a system one."""

    role: Literal["assistant", "user", "system"]
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    turn_idx: int | None = None
    timestamp: str | None = None
    cost: float | None = None


class ToolMessage(Shape):
    """One tool result; ``id`` is the id of the call it answers."""

    role: Literal["tool"]
    id: str
    content: str | None = None
    requestor: Literal["assistant", "user"] = "assistant"
    error: bool = False
    turn_idx: int | None = None
    timestamp: str | None = None


Message = Annotated[ParticipantMessage | ToolMessage, Field(discriminator="role")]


class DBCheck(Shape):
    db_match: bool
    db_reward: float


class CommunicateCheck(Shape):
    info: str
    met: bool
    justification: str


class NLAssertionCheck(Shape):
    nl_assertion: str
    met: bool
    justification: str


class RewardInfo(Shape):
    reward: float
    db_check: DBCheck | None = None
    env_assertions: list[dict[str, Any]] | None = None
    action_checks: list[dict[str, Any]] | None = None
    nl_assertions: list[NLAssertionCheck] | None = None
    communicate_checks: list[CommunicateCheck] | None = None
    reward_basis: list[str] | None = None
    reward_breakdown: dict[str, float] | None = None
    info: dict[str, Any] | None = None


class SimulationRun(Shape):
    id: str
    task_id: str
    timestamp: str | None = None
    start_time: str
    end_time: str
    duration: float
    termination_reason: Literal[TERMINATION_REASONS]  # type: ignore[valid-type]
    agent_cost: float | None = None
    user_cost: float | None = None
    reward_info: RewardInfo | None = None
    messages: list[Message] | None = None
    trial: int | None = None
    seed: int | None = None
    mode: str = "half_duplex"
    info: dict[str, Any] | None = None

    def turns(self) -> list[ParticipantMessage | ToolMessage]:
        return list(self.messages or [])


class AgentInfo(Shape):
    implementation: str
    llm: str | None = None
    llm_args: dict[str, Any] | None = None


class UserInfo(Shape):
    implementation: str
    llm: str | None = None
    llm_args: dict[str, Any] | None = None


class EnvironmentInfo(Shape):
    domain_name: str
    policy: str
    tool_defs: dict[str, Any] | None = None


class Info(Shape):
    git_commit: str
    num_trials: int
    max_steps: int
    max_errors: int
    user_info: UserInfo
    agent_info: AgentInfo
    environment_info: EnvironmentInfo
    seed: int | None = None
    retrieval_config: str | None = None
    pytest_tau2: dict[str, Any] | None = None
    """Ours (upstream ignores it): where the export came from and how our limits count."""


class Results(Shape):
    """One upstream results file: one domain, its tasks, every simulation."""

    timestamp: str | None = None
    info: Info
    tasks: list[dict[str, Any]]
    """Upstream's task objects, exactly as the data folder holds them (never re-serialised)."""
    simulations: list[SimulationRun] = []

    @property
    def domain(self) -> str:
        return self.info.environment_info.domain_name

    def document(self) -> dict[str, Any]:
        """Plain JSON values: nulls left out (upstream's defaults stand for them) except inside the
        tasks, which are the pinned task objects as they are."""
        data = self.model_dump(mode="json", exclude_none=True, exclude={"tasks"})
        return {"timestamp": data.pop("timestamp", None), "info": data.pop("info"), "tasks": self.tasks, **data}

    def text(self) -> str:
        return json.dumps(self.document(), indent=2, ensure_ascii=False) + "\n"
