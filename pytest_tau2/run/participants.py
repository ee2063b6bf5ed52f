"""Build the agent, the simulated user and the judge a run asks for: participant kinds as one table.

A *kind* is a name (``--tau2-agent NAME`` / ``--tau2-user NAME``, ``NAME:ARGUMENT`` for kinds
that take an argument, like ``replay:PATH``) mapped to a :class:`ParticipantKind`: its
factory, its validation, and how metrics and the run header name it. Built-in agents:
``oracle`` (offline default), ``litellm``, ``replay:PATH``, ``websocket``, ``mcp:COMMAND``
(docs/mcp.md), ``null`` (the do-nothing baseline); built-in users:
``scripted`` (offline default), ``litellm``, ``replay`` (an upstream run's saved user turns).

Another package adds a kind with :func:`register_participant_kind` (from its pytest plugin or
conftest), or by declaring an entry point in the ``pytest_tau2.participants`` group whose
object is a :class:`ParticipantKind` (loaded on the first lookup). See docs/participants.md.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pytest_tau2.conversation.offline import GoldPlan, OracleAgent, ScriptedUser
from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.environment.tools import resolve_tool
from pytest_tau2.errors import ScenarioNotApplicable, SettingsError
from pytest_tau2.extension.registry import Registry, add_group
from pytest_tau2.llm.secrets import mask_url
from pytest_tau2.llm.usage import UsageMeter
from pytest_tau2.run import upstream_replay
from pytest_tau2.run.judges import judge_labels, judge_models
from pytest_tau2.run.models import all_model_configs as all_model_configs  # re-exported: run_folder, budget, estimate
from pytest_tau2.run.models import model_config as model_config
from pytest_tau2.run.trials import trial_id, trial_seed
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.settings import Settings

if TYPE_CHECKING:
    from pytest_tau2.llm.cassette import Cassette
    from pytest_tau2.llm.client import ModelConfig, RetryPolicy
    from pytest_tau2.run.pipeline import Judge

Side = Literal["agent", "user"]
ENTRY_POINT_GROUP = "pytest_tau2.participants"
"""The older entry-point group of participant kinds (still read; new packages use ``pytest_tau2``)."""


class Factory(Protocol):
    def __call__(self, ctx: Context, argument: str | None) -> Participant: ...


@dataclass(frozen=True)
class ParticipantKind:
    name: str
    side: Side
    build: Factory
    help: str = ""
    argument: str = ""
    """Metavar of the kind's argument (``replay:PATH``); empty when it takes none. The argument
    reaches ``build`` and ``validate``."""
    follows_plan: bool = False
    """The agent replays the scenario's gold plan (the scripted user then follows the same plan)."""
    model_side: str | None = None
    """The ``--tau2-<side>-model`` this kind calls through litellm, if any."""
    validate: Callable[[Settings, str | None], None] | None = None
    """Refuse impossible settings up front: raise :class:`~pytest_tau2.errors.SettingsError`."""
    describe: Callable[[Settings, str | None], str] | None = None
    """How metrics and the run header name it (default: the option's value)."""


_KINDS: Registry[tuple[Side, str], ParticipantKind] = Registry(
    "participant kind", describe=lambda kind: f"{kind.side} kind {kind.name!r} built by {kind.build!r}"
)
"""Every participant kind by ``(side, name)`` (extension/registry.py)."""


def register_participant_kind(kind: ParticipantKind, *, replace: bool = False) -> ParticipantKind:
    """Add ``kind`` to the table; an existing name on the same side is refused unless ``replace``."""
    return _KINDS.register((kind.side, kind.name), kind, replace=replace)


def _from_entry_point(kind: object, point: EntryPoint) -> None:
    """The older group ``pytest_tau2.participants``: each entry point names a ParticipantKind."""
    if not isinstance(kind, ParticipantKind):
        raise SettingsError(
            f"entry point {point.name} = {point.value} in group {ENTRY_POINT_GROUP} is a "
            f"{type(kind).__name__}, not a ParticipantKind"
        )
    register_participant_kind(kind)


add_group(ENTRY_POINT_GROUP, _from_entry_point)


def kinds(side: Side) -> list[ParticipantKind]:
    return [kind for (s, _), kind in _KINDS.items() if s == side]


def lookup(side: Side, spec: str) -> tuple[ParticipantKind, str | None]:
    """The kind named by an option value (``NAME`` or ``NAME:ARGUMENT``) and its argument."""
    name, sep, argument = spec.partition(":")
    kind = _KINDS.get((side, name))
    if kind is None or bool(sep) != bool(kind.argument):
        choices = ", ".join(k.name + (f":{k.argument}" if k.argument else "") for k in kinds(side))
        raise SettingsError(f"--tau2-{side} {spec!r} is not a built-in {side}; choose one of {choices}")
    return kind, (argument if sep else None)


def agent_kind(settings: Settings) -> tuple[ParticipantKind, str | None]:
    return lookup("agent", settings.agent_kind)


def user_kind(settings: Settings) -> tuple[ParticipantKind, str | None]:
    return lookup("user", settings.user_kind)


def validate_settings(settings: Settings) -> None:
    """Refuse impossible combinations up front, naming the option (:class:`SettingsError`)."""
    for side, spec in (("agent", settings.agent_kind), ("user", settings.user_kind)):
        kind, argument = lookup(side, spec)  # type: ignore[arg-type]
        if kind.model_side and not getattr(settings, f"{kind.model_side}_model"):
            raise SettingsError(f"--tau2-{side} {kind.name} needs --tau2-{kind.model_side}-model MODEL")
        if kind.validate is not None:
            kind.validate(settings, argument)
    for side in ("agent", "user", "judge"):
        try:
            configs = all_model_configs(settings, side)
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
        for config in configs if settings.recording != "none" else ():  # a replay-only run calls no provider
            from pytest_tau2.llm.providers import provider_problem

            problem = provider_problem(config.model, config.args, f"--tau2-{side}-model")
            if problem is not None:
                raise SettingsError(problem)
    if settings.telecom_tasks not in ("base", "full"):
        raise SettingsError(f"--tau2-telecom-tasks must be 'base' or 'full', got {settings.telecom_tasks!r}")
    from pytest_tau2.domains.tau2_banking_knowledge.retrieval import check_retrieval

    problem = check_retrieval(settings.retrieval)
    if problem is not None:
        raise SettingsError(problem)
    if settings.verdict not in ("six-signal", "tau2-reward"):
        raise SettingsError(f"--tau2-verdict must be 'six-signal' or 'tau2-reward', got {settings.verdict!r}")
    if settings.trials < 1:
        raise SettingsError(f"--tau2-trials must be at least 1, got {settings.trials}")
    if settings.price:
        from pytest_tau2.llm.prices import parse_prices

        try:  # refused at start even when no model of this run is named in it
            parse_prices(settings.price)
        except ValueError as exc:
            raise SettingsError(str(exc)) from None


def uses_llm(settings: Settings) -> bool:
    """True when any side of this run calls a model through litellm."""
    return bool(agent_kind(settings)[0].model_side or user_kind(settings)[0].model_side or judge_models(settings))


def litellm_needed(settings: Settings) -> bool:
    """Whether this run's model calls need litellm: a model the OpenAI wire path cannot carry
    (another provider, ``--tau2-llm-transport litellm``), or one litellm may have to price."""
    if not uses_llm(settings):
        return False
    if settings.llm_transport == "litellm":
        return True
    from pytest_tau2.llm.openai_wire import route
    from pytest_tau2.llm.pricing import maybe_priced

    for side in ("agent", "user", "judge"):
        for config in all_model_configs(settings, side):
            if route(config.model, config.args, []) is None or maybe_priced([config.model]):
                return True
    return False


def _name(side: Side, settings: Settings) -> str:
    kind, argument = lookup(side, settings.agent_kind if side == "agent" else settings.user_kind)
    if kind.describe is not None:
        return kind.describe(settings, argument)
    return kind.name + (f":{argument}" if argument is not None else "")


def describe_agent(settings: Settings) -> str:
    """How metrics and the run header name the agent a kind builds: the option used (a participant
    no kind built is named by its class: run/trial.py)."""
    return _name("agent", settings)


def describe_user(settings: Settings) -> str:
    return _name("user", settings)


# ---- the per-scenario context ------------------------------------------------------------------


@dataclass
class Context:
    """What the built-in participants of one scenario share."""

    scenario: Scenario
    settings: Settings
    plan: GoldPlan
    usage: UsageMeter = field(default_factory=UsageMeter)
    trial: int = 1
    """Which trial of the scenario this is (1..``--tau2-trials``)."""

    @classmethod
    def for_scenario(cls, scenario: Scenario, settings: Settings, trial: int = 1) -> Context:
        actions = _replayed_actions(settings, scenario)
        if actions is None:
            actions = scenario.gold_actions() or []
        # One plan for both sides: the oracle/replay agent and the scripted user take turns on it.
        plan = GoldPlan(
            [dict(a) for a in actions],
            ending_tools=_ending_names(scenario),
            communicate=tuple(getattr(scenario, "communicate_info", ())),  # tau2's COMMUNICATE facts
        )
        return cls(scenario, settings, plan, trial=trial)

    @property
    def seed(self) -> int:
        """This trial's seed (run/trials.py), passed to the agent and user models."""
        return trial_seed(self.settings.seed, self.trial)

    @property
    def result_name(self) -> str:
        """The trial's item id and results folder (its cassette is named after it)."""
        return trial_id(self.scenario.name, self.trial, self.settings.trials)

    def retry_policy(self) -> RetryPolicy:
        from pytest_tau2.llm.client import RetryPolicy

        return RetryPolicy(
            max_retries=self.settings.llm_retries,
            timeout_s=self.settings.llm_timeout,
            transport=self.settings.llm_transport,
            max_connections=self.settings.max_connections,
            rpm=self.settings.rpm,
            tpm=self.settings.tpm,
            rate_limit_timeout_s=self.settings.rate_limit_timeout,
        )

    def model_config(self, side: str) -> ModelConfig | None:
        """The side's model, with this trial's ``seed`` for the agent and the user (as upstream; not
        the judge). A ``seed`` given in ``--tau2-<side>-args`` wins: it is the same in every trial."""
        config = model_config(self.settings, side)
        if config is None or side == "judge" or "seed" in config.args:
            return config
        return dataclasses.replace(config, args={**config.args, "seed": self.seed})

    def required_model(self, side: str) -> ModelConfig:
        config = self.model_config(side)
        if config is None:  # validate_settings refuses this before any scenario runs
            raise SettingsError(f"the {side} needs --tau2-{side}-model MODEL")
        return config

    def models(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for side in ("agent", "user", "judge"):
            config = self.model_config(side)
            out[side] = config.safe_dict() if config is not None else None
        judges = all_model_configs(self.settings, "judge")
        if len(judges) > 1:  # a jury; one judge's file stays as it was
            out["judges"] = [config.safe_dict() for config in judges]
        return out

    @functools.cached_property
    def cassette(self) -> Cassette | None:
        """This trial's cassette under ``--tau2-record-mode`` (read once, here), else None."""
        mode = self.settings.recording
        if mode is None or not uses_llm(self.settings):
            return None
        from pytest_tau2.llm.cassette import Cassette

        return Cassette.open(self.settings.cassette_dir or "cassettes", self.result_name, mode)

    def save_cassette(self) -> dict[str, Any] | None:
        """Write the cassette if this run recorded calls; what metrics.json says about it (None: off;
        with ``error`` when the cassette could not be written)."""
        cassette: Cassette | None = self.__dict__.get("cassette")  # None: off, or never opened
        if cassette is None:
            return None
        try:
            cassette.save()
        except OSError as exc:  # a full cassette folder loses the recording, never the scored result
            from pytest_tau2.report.files import describe_os_error

            return {**cassette.stats(), "error": f"cassette {cassette.path}: {describe_os_error(exc)}"}
        return cassette.stats()

    @functools.cached_property
    def secrets(self) -> list[str]:
        """Credential strings of the configured models (never numbers such as ``max_tokens``)."""
        found: list[str] = []
        for side in ("agent", "user", "judge"):
            for config in all_model_configs(self.settings, side):
                found += config.secrets()
        return found

    def redact_data(self, value: Any) -> Any:
        """``value`` with every string redacted, walked as data (numbers and structure untouched)."""
        from pytest_tau2.llm.secrets import redact_data

        return redact_data(value, self.secrets)

    def redact(self, text: str) -> str:
        from pytest_tau2.llm.client import redact

        return redact(text, self.secrets)


def _replayed_actions(settings: Settings, scenario: Scenario) -> list[dict[str, Any]] | None:
    """The recorded actions of ``scenario`` with ``--tau2-agent replay:PATH`` (None: not replaying / absent)."""
    kind, argument = agent_kind(settings)
    if kind.name != "replay" or argument is None or upstream_replay.replays_results(argument):
        return None  # an upstream run replays its saved turns (run/upstream_replay.py), not a plan
    from pytest_tau2.conversation.replay import load_replay_file

    return load_replay_file(argument).get(scenario.name)


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


def make_agent(ctx: Context) -> Participant:
    kind, argument = agent_kind(ctx.settings)
    return kind.build(ctx, argument)


def make_user(ctx: Context) -> Participant:
    kind, argument = user_kind(ctx.settings)
    return kind.build(ctx, argument)


def make_judge(ctx: Context) -> Judge | None:
    """The judge of a trial: one LLM judge, or a jury of several (``--tau2-judge-model A,B,C``)."""
    configs = all_model_configs(ctx.settings, "judge")  # priced at --tau2-price
    if not configs:
        return None
    from pytest_tau2.scoring.judge import LLMJudge

    judges = [
        LLMJudge(config, ctx.retry_policy(), ctx.usage, cassette=ctx.cassette, prompt=ctx.settings.judge_prompt)
        for config in configs
    ]
    if len(judges) == 1:
        return judges[0]
    from pytest_tau2.scoring.jury import Jury

    return Jury(judges, judge_labels(configs))


# ---- the built-in kinds ---------------------------------------------------------------------------


def _oracle(ctx: Context, argument: str | None) -> Participant:
    return OracleAgent(ctx.plan, min_turns=max(ctx.settings.min_agent_turns, 1))


def _null(ctx: Context, argument: str | None) -> Participant:
    from pytest_tau2.conversation.null_agent import NullAgent

    return NullAgent(min_turns=max(ctx.settings.min_agent_turns, 1))


def _replay(ctx: Context, argument: str | None) -> Participant:
    if upstream_replay.replays_results(argument):
        return upstream_replay.agent(ctx.scenario, ctx.settings, ctx.trial)
    if _replayed_actions(ctx.settings, ctx.scenario) is None:
        raise ScenarioNotApplicable(f"{ctx.scenario.name} is not in the replay file {argument}")
    return OracleAgent(ctx.plan, min_turns=max(ctx.settings.min_agent_turns, 1))


def _validate_replay(settings: Settings, argument: str | None) -> None:
    from pytest_tau2.conversation.replay import ReplayFileError, load_replay_file

    if upstream_replay.replays_results(argument):
        upstream_replay.validate(settings, argument or "")
        return
    try:
        load_replay_file(argument or "")
    except ReplayFileError as exc:
        raise SettingsError(str(exc)) from None


def _websocket(ctx: Context, argument: str | None) -> Participant:
    from pytest_tau2.bot.client import WebSocketAgent

    scenario = ctx.scenario
    if scenario.message_history:
        raise ScenarioNotApplicable(
            f"{scenario.name} opens with a message history, which the bot protocol does not carry (run it in process)"
        )
    if getattr(scenario, "sides_share_db", False) and "user" in scenario.sides:
        raise ScenarioNotApplicable(
            f"{scenario.name}: agent and customer share one DB, which a bot cannot hold for both (run it in process)"
        )
    return WebSocketAgent(
        ctx.settings.agent_url or "", ctx.scenario, ctx.settings, reply_timeout=ctx.settings.agent_timeout
    )


def _validate_websocket(settings: Settings, argument: str | None) -> None:
    if not settings.agent_url:
        raise SettingsError("--tau2-agent websocket needs --tau2-agent-url ws://HOST:PORT")


def _mcp(ctx: Context, argument: str | None) -> Participant:
    from pytest_tau2.mcp.agent import McpAgent

    if ctx.scenario.message_history:
        raise ScenarioNotApplicable(
            f"{ctx.scenario.name} opens with a message history, which the MCP user channel does not carry "
            "(run it in process)"
        )
    env = {"TAU2_SEED": str(ctx.seed)}
    return McpAgent(argument, ctx.scenario, reply_timeout=ctx.settings.agent_timeout, env=env)


MCP_INSTALL = 'pip install -e ".[mcp]"'
"""The README's set-up line, which installs the MCP SDK (the ``mcp`` extra) with the plugin."""


def _validate_mcp(settings: Settings, argument: str | None) -> None:
    if not (argument or "").strip():
        raise SettingsError(
            '--tau2-agent mcp:COMMAND needs the command that starts the agent, e.g. --tau2-agent mcp:"python agent.py"'
        )
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        raise SettingsError(
            "--tau2-agent mcp needs the MCP SDK (the mcp package), which this environment lacks: "
            f'{MCP_INSTALL} in the pytest-tau2 clone, or pip install "mcp>=2.3,<3" (docs/mcp.md)'
        )


def _litellm_agent(ctx: Context, argument: str | None) -> Participant:
    from pytest_tau2.conversation.llm_participants import LiteLLMAgent

    return LiteLLMAgent(ctx.required_model("agent"), ctx.retry_policy(), ctx.usage, cassette=ctx.cassette)


def _scripted(ctx: Context, argument: str | None) -> Participant:
    return ScriptedUser(
        ctx.scenario.user_opening(),
        ctx.plan,
        patience=max(3, ctx.settings.min_agent_turns) + 2,
        agent_follows_plan=agent_kind(ctx.settings)[0].follows_plan,
    )


def _litellm_user(ctx: Context, argument: str | None) -> Participant:
    from pytest_tau2.conversation.llm_participants import LiteLLMUser

    return LiteLLMUser(ctx.required_model("user"), ctx.retry_policy(), ctx.usage, cassette=ctx.cassette)


for _kind in (
    ParticipantKind("oracle", "agent", _oracle, "replays the gold actions (offline default)", follows_plan=True),
    ParticipantKind("litellm", "agent", _litellm_agent, "any model litellm accepts", model_side="agent",
                    describe=lambda s, _: f"litellm:{s.agent_model}"),
    ParticipantKind("replay", "agent", _replay, "recorded tool calls from a replay file", argument="PATH",
                    follows_plan=True, validate=_validate_replay),
    ParticipantKind("websocket", "agent", _websocket, "an external bot (--tau2-agent-url)",
                    validate=_validate_websocket, describe=lambda s, _: f"websocket:{mask_url(s.agent_url or '')}"),
    ParticipantKind("mcp", "agent", _mcp, "an agent process that speaks MCP, started per scenario (docs/mcp.md)",
                    argument="COMMAND", validate=_validate_mcp),
    ParticipantKind("null", "agent", _null, "do-nothing baseline: polite, calls no domain tool, ends the call"),
    ParticipantKind("scripted", "user", _scripted, "follows the gold plan (offline default)"),
    ParticipantKind("litellm", "user", _litellm_user, "any model litellm accepts", model_side="user",
                    describe=lambda s, _: f"litellm:{s.user_model}"),
    ParticipantKind("replay", "user", lambda ctx, _: upstream_replay.user(ctx.scenario, ctx.settings, ctx.trial),
                    "the saved user turns of --tau2-agent replay:RESULTS (upstream runs)",
                    validate=upstream_replay.validate_user),
):  # fmt: skip
    register_participant_kind(_kind)
