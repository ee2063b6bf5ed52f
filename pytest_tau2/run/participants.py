"""Build the agent, the simulated user and the judge a run asks for: participant kinds as one table.

A *kind* is a name (``--tau2-agent NAME`` / ``--tau2-user NAME``, ``NAME:ARGUMENT`` for kinds
that take an argument, like ``replay:PATH``) mapped to a :class:`ParticipantKind`: its
factory, its validation, and how metrics and the run header name it. A factory gets the
trial's :class:`~pytest_tau2.run.view.TrialView` (``pytest_tau2.TrialView``) and the argument.

Built-in agents: ``oracle`` (offline default) and ``litellm``, here; ``replay:PATH``
(run/replay_kinds.py), ``websocket`` (bot/kind.py), ``mcp:COMMAND`` (mcp/kind.py, docs/mcp.md),
``null`` (run/null_kind.py, the do-nothing baseline). Built-in users: ``scripted`` (offline
default) and ``litellm``, here; ``replay`` (run/replay_kinds.py). The kinds that live elsewhere
register themselves when the extension registry loads (extension/registry.py, ``BUILTINS``), so
this table never imports the packages above it.

Another package adds a kind with :func:`register_participant_kind` (from its pytest plugin or
conftest), or through an entry point (the ``pytest_tau2`` group, or the older
``pytest_tau2.participants`` group whose objects are kinds), loaded on the first lookup.
See docs/participants.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import Any, Literal, Protocol

from pytest_tau2.conversation.offline import GoldPlan, OracleAgent, ScriptedUser
from pytest_tau2.conversation.protocol import Participant
from pytest_tau2.errors import SettingsError
from pytest_tau2.extension.registry import Registry, add_group
from pytest_tau2.run.checks import check_options, litellm_needed_for
from pytest_tau2.run.models import all_model_configs as all_model_configs  # re-exported: run_folder, budget, estimate
from pytest_tau2.run.models import model_config as model_config
from pytest_tau2.run.view import TrialView, gold_plan
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.settings import Settings

Side = Literal["agent", "user"]
ENTRY_POINT_GROUP = "pytest_tau2.participants"
"""The older entry-point group of participant kinds (still read; new packages use ``pytest_tau2``)."""


class Factory(Protocol):
    def __call__(self, view: TrialView, argument: str | None) -> Participant: ...


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
    plan: Callable[[Scenario, str | None], list[dict[str, Any]] | None] | None = None
    """An agent kind that replays other actions than the scenario's gold ones (``replay:PATH``):
    the actions of the trial's gold plan, which the scripted user follows too (None: the gold ones)."""


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
    """Refuse impossible combinations up front, naming the option (:class:`SettingsError`): each
    kind's own checks, then the rest of the settings (run/checks.py)."""
    for side, spec in (("agent", settings.agent_kind), ("user", settings.user_kind)):
        kind, argument = lookup(side, spec)  # type: ignore[arg-type]
        if kind.model_side and settings.roles.first(kind.model_side) is None:
            raise SettingsError(f"--tau2-{side} {kind.name} needs --tau2-{kind.model_side}-model MODEL")
        if kind.validate is not None:
            kind.validate(settings, argument)
    check_options(settings)


def uses_llm(settings: Settings) -> bool:
    """True when any side of this run calls a model through litellm."""
    return bool(
        agent_kind(settings)[0].model_side
        or user_kind(settings)[0].model_side
        or settings.roles.judges
        or settings.review
    )


def litellm_needed(settings: Settings) -> bool:
    """Whether this run's model calls need litellm (run/checks.py)."""
    return litellm_needed_for(settings, uses_llm(settings))


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


# ---- a trial's view, and its participants ------------------------------------------------------------


def trial_plan(scenario: Scenario, settings: Settings) -> GoldPlan:
    """The gold plan of a trial of ``scenario``: the agent kind's own actions when it replays others
    (``replay:PATH``), else the scenario's gold actions."""
    kind, argument = agent_kind(settings)
    return gold_plan(scenario, kind.plan(scenario, argument) if kind.plan is not None else None)


def trial_view(scenario: Scenario, settings: Settings, trial: int = 1) -> TrialView:
    """The view of one trial of ``scenario`` that a kind's factory gets (run/trial.py builds one per trial)."""
    return TrialView(scenario, settings, trial_plan(scenario, settings), trial=trial, calls_models=uses_llm(settings))


def make_agent(view: TrialView) -> Participant:
    kind, argument = agent_kind(view.settings)
    return kind.build(view, argument)


def make_user(view: TrialView) -> Participant:
    kind, argument = user_kind(view.settings)
    return kind.build(view, argument)


class Context(TrialView):
    """Deprecated (kept for one release; docs/participants.md taught it): a factory gets a
    :class:`~pytest_tau2.run.view.TrialView`; build one with :func:`trial_view`."""

    def __init__(
        self, scenario: Scenario, settings: Settings, plan: GoldPlan, usage: Any = None, trial: int = 1
    ) -> None:
        _deprecated()
        super().__init__(scenario, settings, plan, trial=trial, usage=usage, calls_models=uses_llm(settings))

    @classmethod
    def for_scenario(cls, scenario: Scenario, settings: Settings, trial: int = 1) -> TrialView:
        _deprecated()
        return trial_view(scenario, settings, trial)


def _deprecated() -> None:
    warnings.warn(
        "pytest_tau2.run.participants.Context is deprecated: a participant kind's factory receives a "
        "pytest_tau2.TrialView (pytest_tau2.run.participants.trial_view builds one)",
        DeprecationWarning,
        stacklevel=3,
    )


# ---- the built-in kinds that run here --------------------------------------------------------------


def _oracle(view: TrialView, argument: str | None) -> Participant:
    return OracleAgent(view.plan, min_turns=max(view.settings.min_agent_turns, 1))


def _litellm_agent(view: TrialView, argument: str | None) -> Participant:
    from pytest_tau2.conversation.llm_participants import LiteLLMAgent

    return LiteLLMAgent(view.required_model("agent"), view.retry_policy(), view.usage, cassette=view.cassette)


def _scripted(view: TrialView, argument: str | None) -> Participant:
    return ScriptedUser(
        view.scenario.user_opening(),
        view.plan,
        patience=max(3, view.settings.min_agent_turns) + 2,
        agent_follows_plan=agent_kind(view.settings)[0].follows_plan,
    )


def _litellm_user(view: TrialView, argument: str | None) -> Participant:
    from pytest_tau2.conversation.llm_participants import LiteLLMUser

    return LiteLLMUser(view.required_model("user"), view.retry_policy(), view.usage, cassette=view.cassette)


for _kind in (
    ParticipantKind("oracle", "agent", _oracle, "replays the gold actions (offline default)", follows_plan=True),
    ParticipantKind("litellm", "agent", _litellm_agent, "any model litellm accepts", model_side="agent",
                    describe=lambda s, _: f"litellm:{s.agent_model}"),
    ParticipantKind("scripted", "user", _scripted, "follows the gold plan (offline default)"),
    ParticipantKind("litellm", "user", _litellm_user, "any model litellm accepts", model_side="user",
                    describe=lambda s, _: f"litellm:{s.user_model}"),
):  # fmt: skip
    register_participant_kind(_kind)
