"""The :class:`Scenario` base class: what one evaluation run is, and how it is scored.

A concrete scenario sets ``name`` (``<domain>__<case>``) and inherits everything else from an
unregistered domain base class. The success-signal contract is checked when the class is
defined, so a scenario that cannot be scored is a collection error naming the class.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pytest_tau2.data.parsing import read_json, read_toml
from pytest_tau2.errors import DataError, ScenarioDefinitionError
from pytest_tau2.scenario.model import Actions, Persona, Resources, Task
from pytest_tau2.scoring.names import SuccessSignal, is_signal
from pytest_tau2.scoring.rule import default_combinator, strict_and_outcome

if TYPE_CHECKING:
    from pytest_tau2.environment.jsontypes import JSONObject
    from pytest_tau2.scoring.action_match import MatchResult
    from pytest_tau2.settings import Settings

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*?__[A-Za-z0-9_.-]+")


class Scenario:
    """Base of every evaluation scenario. See docs/authoring-scenarios.md."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    reference_answer: ClassVar[Any] = None
    """What ACTION_MATCH compares the recorded write actions with (None: not applicable)."""
    max_duration: ClassVar[float] = 600.0
    """Wall-clock limit of the conversation, in seconds."""
    max_turns: ClassVar[int] = 30
    """Limit on agent turns (agent replies, tool-call rounds included)."""
    max_tokens: ClassVar[int | None] = None
    """Limit on the conversation's model tokens, prompt plus completion, agent and user together
    (None: none; ``--tau2-max-tokens`` overrides it). docs/campaigns.md."""
    max_cost: ClassVar[float | None] = None
    """Limit on the conversation's model cost in USD (None: none; ``--tau2-max-cost``)."""
    max_messages: ClassVar[int | None] = None
    """Limit on the transcript's messages (None: none; ``--tau2-max-messages``)."""
    nl_assertions: ClassVar[list[str] | None] = None
    db_state_assertions: ClassVar[list[dict[str, Any]] | None] = None
    initialization_actions: ClassVar[list[dict[str, Any]] | None] = None
    message_history: ClassVar[list[dict[str, Any]] | None] = None
    """Messages before the conversation (tau2's ``initial_state.message_history``): they open the
    transcript and both sides' views (``conversation/loop.py``)."""
    ignore_capitalization: ClassVar[bool] = True
    ignore_punctuation: ClassVar[bool] = True
    clean_text: ClassVar[bool] = True
    disallow_extra_items: ClassVar[bool] = False
    success_signals: ClassVar[Sequence[SuccessSignal]]

    tool_namespace: ClassVar[str | None] = None
    """Namespace the agent's tool class names are resolved in; the domain by default."""
    user_tool_namespace: ClassVar[str | None] = None
    """Namespace the user's tool class names are resolved in; the agent's by default."""
    agent_greeting: ClassVar[str | None] = None
    """If set, the agent opens the conversation with this fixed text (tau2 does)."""
    tags: ClassVar[Sequence[str]] = ()
    """Extra pytest markers for this scenario (e.g. ``tau2_split_test``)."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            return
        if not isinstance(cls.name, str) or not _NAME.fullmatch(cls.name):
            raise ScenarioDefinitionError(
                f"scenario class {_qualname(cls)} has name={cls.name!r}; expected '<domain>__<case>' made of "
                "letters, digits, '_', '.' and '-', e.g. 'restaurant__pizza_pepperoni'"
            )
        resolved = _lookup_class_attr(cls, "success_signals")
        if resolved is None:
            raise ScenarioDefinitionError(
                f"scenario class {_qualname(cls)} (name {cls.name!r}) does not define success_signals; "
                "set a ClassVar tuple of SuccessSignal members or a cached_property returning one, "
                "on the class or its domain base"
            )
        if not isinstance(resolved, (property, functools.cached_property)) and not callable(resolved):
            _check_signals(cls, resolved)

    # ---- identity -------------------------------------------------------------------------

    @property
    def domain(self) -> str:
        """The part of ``name`` before ``__``."""
        return self.name.split("__", 1)[0]

    @property
    def namespace(self) -> str:
        return self.tool_namespace or self.domain

    @property
    def predicate_domain(self) -> str:
        """Registry bucket of this scenario's DB-state predicates."""
        return self.domain

    @property
    def user_namespace(self) -> str:
        return self.user_tool_namespace or self.namespace

    # ---- the eight per-side properties ------------------------------------------------------

    @property
    def user_persona(self) -> Persona:
        return Persona(role="customer", name="Customer")

    @property
    def user_task(self) -> Task:
        return Task(goal=self.description)

    @property
    def user_actions(self) -> Actions:
        return Actions()

    @property
    def user_resources(self) -> Resources:
        return Resources()

    @property
    def agent_persona(self) -> Persona:
        return Persona(role="customer service agent", name="Agent")

    @property
    def agent_task(self) -> Task:
        return Task(goal="Help the customer with their request, following your instructions.")

    @property
    def agent_actions(self) -> Actions:
        return Actions()

    @property
    def agent_resources(self) -> Resources:
        return Resources(tools={"EndConversationTool": {}})

    # ---- prompts --------------------------------------------------------------------------

    def get_user_prompt(self) -> str:
        """System prompt of the simulated user."""
        return render_prompt(self.user_persona, self.user_task, self.user_actions, self.user_resources, audience="user")

    def get_agent_prompt(self) -> str:
        """System prompt of the agent under test."""
        return render_prompt(
            self.agent_persona, self.agent_task, self.agent_actions, self.agent_resources, audience="agent"
        )

    def user_opening(self) -> str:
        """What a scripted user says first: the goal."""
        return self.user_task.goal

    # ---- a phone call (--tau2-speech-complexity, docs/voice.md) ------------------------------

    def get_call_user_prompt(self, guidelines: str) -> str:
        """System prompt of the simulated user on a phone call: ``guidelines`` (how to talk on a
        call, the persona's behaviour included) before this scenario's own user prompt."""
        return f"{guidelines}\n\n<scenario>\n{self.get_user_prompt()}\n</scenario>"

    def speech_conditions(self, complexity: str) -> Mapping[str, Any] | None:
        """This scenario's own call under the preset ``complexity``: any keys of a tau2
        ``tasks_voice.json`` entry (``persona_name``, ``persona_config``, ``environment``,
        ``source_effects_config``, ...), laid over the preset's defaults. None (the default): the
        preset's defaults, or for a tau2 task its entry in ``tasks_voice.json``."""
        return None

    # ---- state ----------------------------------------------------------------------------

    @property
    def sides(self) -> tuple[str, ...]:
        """The sides that hold state and tools: ``("agent",)`` or ``("agent", "user")``."""
        return ("agent", "user") if self.user_resources.tools else ("agent",)

    def data_root(self, settings: Settings) -> Path:
        """The folder ``db_path`` values are resolved against."""
        return Path(settings.eval_data_root)

    def bind(self, settings: Settings) -> Scenario:
        """Resolve what the scenario needs from the run's settings (data roots). Returns self."""
        return self

    def data_pin(self, settings: Settings) -> JSONObject | None:
        """Provenance of the data this scenario reads (tau2 domains record the upstream pin)."""
        return None

    def setup_shared_state(self, state: dict[str, object], side: str) -> None:
        """Seed a side's state. A ``db_path`` value is replaced by the loaded DB (``state["db"]``)."""

    def read_db(self, path: Path, side: str) -> object:
        """Parse a DB file (JSON or TOML by extension). Domains override for their format."""
        return read_db_file(path)

    def sync_state(self, agent_state: dict[str, object], user_state: dict[str, object] | None) -> None:
        """Propagate state between the sides after each successful tool call (dual-side domains)."""

    def run_initialization_action(
        self, action: Mapping[str, object], states: Mapping[str, Mapping[str, object]]
    ) -> object:
        """Apply one ``initialization_actions`` entry before the conversation."""
        raise NotImplementedError(
            f"{type(self).__name__} declares initialization_actions but does not implement run_initialization_action"
        )

    # ---- gold -----------------------------------------------------------------------------

    def gold_actions(self) -> list[JSONObject] | None:
        """Reference tool calls ``{"name", "arguments", "requestor"}`` replayed to build the expected DB.

        None means the scenario has no gold trajectory: DB_STATE_MATCH is not applicable.
        """
        return None

    # ---- scoring --------------------------------------------------------------------------

    def action_match(self, recorded_actions: list[JSONObject], transcript: list[JSONObject]) -> MatchResult | None:
        """ACTION_MATCH as a ``MatchResult``, or None when not applicable (no reference answer)."""
        if self.reference_answer is None:
            return None
        from pytest_tau2.scoring.action_match import TextFlags, match_reference

        flags = TextFlags(
            ignore_capitalization=self.ignore_capitalization,
            ignore_punctuation=self.ignore_punctuation,
            clean_text=self.clean_text,
            disallow_extra_items=self.disallow_extra_items,
        )
        return match_reference(self.reference_answer, recorded_actions, flags)

    @default_combinator
    def compute_is_successful(self, signals: Mapping[str, object]) -> bool | str:
        """Combine the signal values into the verdict: strict AND over the whitelist (see scoring).

        Override to decide otherwise; the verdict (``scoring.verdict.scenario_verdict``) asks an
        override only, and keeps the strict-AND breakdown beside its answer.
        """
        return strict_and_outcome(signals, tuple(self.success_signals))


def render_prompt(persona: Persona, task: Task, actions: Actions, resources: Resources, *, audience: str) -> str:
    """Render the per-side dataclasses into a system prompt (labels in Persona stay out)."""
    lines = [f"You are {persona.name}, a {persona.role}."]
    if persona.background:
        lines += ["", "## Background", persona.background]
    if persona.personality:
        lines += ["", "## Personality", persona.personality]
    lines += ["", "## Your goal", task.goal]
    if task.background:
        lines += ["", "## Context", task.background]
    if actions.instructions:
        lines += ["", "## Steps"] + [f"{i}. {s}" for i, s in enumerate(actions.instructions, 1)]
    if actions.guidelines:
        lines += ["", "## Guidelines"] + [f"- {g}" for g in actions.guidelines]
    if resources.information:
        lines += ["", "## Information"] + [f"- {i}" for i in resources.information]
    if audience == "user":
        lines += [
            "",
            "Speak as the customer, one message at a time. When your goal is met, or the agent "
            "cannot help, say goodbye and end your message with ###STOP###.",
        ]
    return "\n".join(lines)


@functools.cache
def _read_cached(path: Path) -> object:
    # A file that does not parse is a DataError naming it and the line, not a bare JSONDecodeError.
    return read_toml(path) if path.suffix == ".toml" else read_json(path)


def read_db_file(path: Path) -> object:
    """JSON or TOML by extension (the result is the caller's to copy, never to mutate)."""
    return _read_cached(path)


def _lookup_class_attr(cls: type, attr: str) -> object:
    for klass in cls.__mro__:
        if attr in klass.__dict__:
            return klass.__dict__[attr]
    return None


def _check_signals(cls: type, signals: object, source: str = "has") -> None:
    valid = isinstance(signals, (tuple, list)) and signals and all(is_signal(s) for s in signals)
    if not valid:
        raise ScenarioDefinitionError(
            f"scenario class {_qualname(cls)} {source} success_signals={signals!r}; expected a non-empty "
            "sequence of SuccessSignal members (or the .signal of specs added with register_signal)"
        )


SIGNALS_VOUCHED_FOR = "_tau2_signals_vouched_for"
"""Set to True in a generated class's own namespace (never inherited) by a scenario source that
guarantees every instance's ``success_signals`` resolve to valid signals: collection then does
not resolve them. The tau2 sources set it for their classes on checksum-verified data, where
resolving meant parsing the domain's tasks.json (14 MB for telecom) during collection."""


def signals_vouched_for(cls: type) -> bool:
    """Whether ``cls``'s own source vouched for its success signals (see ``SIGNALS_VOUCHED_FOR``)."""
    return cls.__dict__.get(SIGNALS_VOUCHED_FOR) is True


def check_success_signals(scenario: Scenario) -> None:
    """Resolve a scenario's success signals now and refuse a bad value, naming the class.

    A ClassVar is checked when the class is defined; a property can only be read on an instance
    (bound to the run's settings when it reads task data). The plugin calls this at collection
    for every selected scenario whose source did not vouch for it, so a property returning ``()``
    or a plain string is a collection error rather than a verdict of N/A after the conversation ran.
    """
    cls = type(scenario)
    resolved = _lookup_class_attr(cls, "success_signals")
    if not isinstance(resolved, (property, functools.cached_property)) and not callable(resolved):
        return  # a plain value: checked when the class was defined
    try:
        signals = scenario.success_signals
    except DataError:
        raise  # the data's problem, reported as such
    except Exception as exc:
        raise ScenarioDefinitionError(
            f"scenario class {_qualname(cls)} (name {cls.name!r}): reading its success_signals property "
            f"raised {type(exc).__name__}: {exc}"
        ) from exc
    _check_signals(cls, signals, "(name " + repr(cls.name) + "): its success_signals property returned")


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"
