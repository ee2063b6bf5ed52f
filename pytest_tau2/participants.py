"""Build the agent, the simulated user and the judge a run asks for.

Built-in agents: ``oracle`` (offline default), ``litellm`` (any model litellm accepts),
``replay:PATH`` (recorded tool calls), ``websocket`` (``--tau2-agent-url``). Built-in users:
``scripted`` (offline default), ``litellm``. A user's own agent is any object with the
:class:`pytest_tau2.conversation.protocol.Participant` protocol, returned from an overridden
``tau2_agent`` fixture.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_tau2.conversation.offline import GoldPlan, OracleAgent, ScriptedUser
from pytest_tau2.environment.tools import resolve_tool
from pytest_tau2.llm.usage import UsageMeter
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.settings import Settings

AGENTS = ("oracle", "litellm", "replay:PATH", "websocket")
USERS = ("scripted", "litellm")


def validate_settings(settings: Settings) -> None:
    """Refuse impossible combinations up front, naming the option (a pytest usage error)."""
    agent = settings.agent_kind
    if not (agent in ("oracle", "litellm", "websocket") or agent.startswith("replay:")):
        raise pytest.UsageError(f"--tau2-agent {agent!r} is not a built-in agent; choose one of {', '.join(AGENTS)}")
    if agent == "litellm" and not settings.agent_model:
        raise pytest.UsageError("--tau2-agent litellm needs --tau2-agent-model MODEL")
    if agent == "websocket" and not settings.agent_url:
        raise pytest.UsageError("--tau2-agent websocket needs --tau2-agent-url ws://HOST:PORT")
    if settings.user_kind not in USERS:
        raise pytest.UsageError(
            f"--tau2-user {settings.user_kind!r} is not a built-in user; choose one of {', '.join(USERS)}"
        )
    if settings.user_kind == "litellm" and not settings.user_model:
        raise pytest.UsageError("--tau2-user litellm needs --tau2-user-model MODEL")
    for name in ("agent", "user", "judge"):
        try:
            _model_config(settings, name)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
    if agent.startswith("replay:"):
        from pytest_tau2.conversation.replay import ReplayFileError, load_replay_file

        try:
            load_replay_file(agent.split(":", 1)[1])
        except ReplayFileError as exc:
            raise pytest.UsageError(str(exc)) from None
    if settings.telecom_tasks not in ("base", "full"):
        raise pytest.UsageError(f"--tau2-telecom-tasks must be 'base' or 'full', got {settings.telecom_tasks!r}")


def _model_config(settings: Settings, side: str) -> Any:
    from pytest_tau2.llm.client import ModelConfig

    return ModelConfig.from_option(
        getattr(settings, f"{side}_model"), getattr(settings, f"{side}_args"), option_name=f"--tau2-{side}-args"
    )


def uses_llm(settings: Settings) -> bool:
    """True when any side of this run calls a model through litellm."""
    return settings.agent_kind == "litellm" or settings.user_kind == "litellm" or bool(settings.judge_model)


def _custom(participant: Any) -> str | None:
    """``python:<module>.<class>`` for a participant that is not one of ours (an overridden fixture)."""
    if participant is None or type(participant).__module__.startswith("pytest_tau2."):
        return None
    return f"python:{type(participant).__module__}.{type(participant).__qualname__}"


def describe_agent(settings: Settings, agent: Any = None) -> str:
    """How metrics and the run header name the agent: the option used, or the Python class."""
    custom = _custom(agent)
    if custom is not None:
        return custom
    kind = settings.agent_kind
    if kind == "litellm":
        return f"litellm:{settings.agent_model}"
    if kind == "websocket":
        return f"websocket:{settings.agent_url}"
    return kind


def describe_user(settings: Settings, user: Any = None) -> str:
    custom = _custom(user)
    if custom is not None:
        return custom
    kind = settings.user_kind
    return f"litellm:{settings.user_model}" if kind == "litellm" else kind


@dataclass
class Context:
    """What the built-in participants of one scenario share."""

    scenario: Scenario
    settings: Settings
    plan: GoldPlan
    usage: UsageMeter = field(default_factory=UsageMeter)

    @classmethod
    def for_scenario(cls, scenario: Scenario, settings: Settings) -> Context:
        actions = _replayed_actions(settings, scenario)
        if actions is None:
            actions = scenario.gold_actions() or []
        # One plan for both sides: the oracle/replay agent and the scripted user take turns on it.
        return cls(scenario, settings, GoldPlan([dict(a) for a in actions], ending_tools=_ending_names(scenario)))

    def retry_policy(self) -> Any:
        from pytest_tau2.llm.client import RetryPolicy

        return RetryPolicy(max_retries=self.settings.llm_retries, timeout_s=self.settings.llm_timeout)

    def model_config(self, side: str) -> Any:
        return _model_config(self.settings, side)

    def models(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for side in ("agent", "user", "judge"):
            config = self.model_config(side)
            out[side] = config.safe_dict() if config is not None else None
        return out

    @functools.cached_property
    def secrets(self) -> list[str]:
        """Credential strings of the configured models (never numbers such as ``max_tokens``)."""
        found: list[str] = []
        for side in ("agent", "user", "judge"):
            config = self.model_config(side)
            if config is not None:
                found += config.secrets()
        return found

    def redact_data(self, value: Any) -> Any:
        """``value`` with every string redacted, walked as data (numbers and structure untouched)."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {k: self.redact_data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.redact_data(v) for v in value]
        return value

    def redact(self, text: str) -> str:
        from pytest_tau2.llm.client import redact

        return redact(text, self.secrets)

    def data_pin(self) -> dict[str, Any] | None:
        return self.scenario.data_pin(self.settings)

    def metadata(self) -> dict[str, Any]:
        s = self.scenario
        return {
            "scenario": s.name,
            "domain": s.domain,
            "class": f"{type(s).__module__}.{type(s).__qualname__}",
            "description": s.description,
            "success_signals": [sig.value for sig in s.success_signals],
            "max_turns": s.max_turns,
            "max_duration": s.max_duration,
            "nl_assertions": s.nl_assertions,
            "db_state_assertions": s.db_state_assertions,
            "initialization_actions": s.initialization_actions,
            "reference_answer": s.reference_answer,
            "gold_actions": s.gold_actions(),
            "agent": describe_agent(self.settings),
            "user": describe_user(self.settings),
            "models": self.models(),
            "labels": {"behavior_config": s.user_persona.behavior_config, "voice_config": s.user_persona.voice_config},
        }

    def tool_schemas(self) -> dict[str, list[dict[str, Any]]]:
        s = self.scenario
        out = {"agent": [resolve_tool(s.namespace, n).openai_schema() for n in s.agent_resources.tools]}
        if "user" in s.sides:
            out["user"] = [resolve_tool(s.user_namespace, n).openai_schema() for n in s.user_resources.tools]
        return out


def _replayed_actions(settings: Settings, scenario: Scenario) -> list[dict[str, Any]] | None:
    """The recorded actions of ``scenario`` with ``--tau2-agent replay:PATH`` (None: not replaying / absent)."""
    kind = settings.agent_kind
    if not kind.startswith("replay:"):
        return None
    from pytest_tau2.conversation.replay import load_replay_file

    return load_replay_file(kind.split(":", 1)[1]).get(scenario.name)


def _ending_names(scenario: Scenario) -> frozenset[str]:
    """Tool and action names of the agent tools that end the conversation."""
    names = set()
    for cls_name in scenario.agent_resources.tools:
        cls = resolve_tool(scenario.namespace, cls_name)
        if cls.ends_conversation:
            names.add(cls.name)
            if cls.action_name:
                names.add(cls.action_name)
    return frozenset(names)


def make_agent(ctx: Context) -> Any:
    kind = ctx.settings.agent_kind
    if kind == "oracle":
        return OracleAgent(ctx.plan, min_turns=max(ctx.settings.min_agent_turns, 1))
    if kind.startswith("replay:"):
        if _replayed_actions(ctx.settings, ctx.scenario) is None:
            pytest.skip(f"{ctx.scenario.name} is not in the replay file {kind.split(':', 1)[1]}")
        return OracleAgent(ctx.plan, min_turns=max(ctx.settings.min_agent_turns, 1))
    if kind == "websocket":
        from pytest_tau2.bot.client import WebSocketAgent

        return WebSocketAgent(
            ctx.settings.agent_url or "", ctx.scenario, ctx.settings, reply_timeout=ctx.settings.agent_timeout
        )
    from pytest_tau2.conversation.llm_participants import LiteLLMAgent

    return LiteLLMAgent(ctx.model_config("agent"), ctx.retry_policy(), ctx.usage)


def make_user(ctx: Context) -> Any:
    if ctx.settings.user_kind == "scripted":
        kind = ctx.settings.agent_kind
        return ScriptedUser(
            ctx.scenario.user_opening(),
            ctx.plan,
            patience=max(3, ctx.settings.min_agent_turns) + 2,
            agent_follows_plan=kind == "oracle" or kind.startswith("replay:"),
        )
    from pytest_tau2.conversation.llm_participants import LiteLLMUser

    return LiteLLMUser(ctx.model_config("user"), ctx.retry_policy(), ctx.usage)


def make_judge(ctx: Context) -> Any:
    config = ctx.model_config("judge")
    if config is None:
        return None
    from pytest_tau2.scoring.judge import LLMJudge

    return LLMJudge(config, ctx.retry_policy(), ctx.usage)
