"""What a participant kind's factory sees of its trial: :class:`TrialView` (exported as
``pytest_tau2.TrialView``; docs/participants.md).

A trial (run/trial.py) builds its agent, user and judge through the kinds of the participant
table (run/participants.py); each factory gets this view, not the trial: the scenario, the
settings, the gold plan, the trial's number and seed, its model roles (resolved once:
run/models.py), the usage meter metrics.json reports, the cassette of ``--tau2-record-mode``,
and the redaction of the models' credentials. No pytest here, and no import of the kinds' table.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_tau2.conversation.offline import GoldPlan
from pytest_tau2.environment.tools import resolve_tool
from pytest_tau2.errors import SettingsError
from pytest_tau2.llm.usage import UsageMeter
from pytest_tau2.run.models import model_roles
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.trial_ids import trial_id, trial_seed
from pytest_tau2.settings import Settings

if TYPE_CHECKING:
    from pytest_tau2.llm.cassette import Cassette
    from pytest_tau2.llm.config import ModelConfig, RetryPolicy

__all__ = ["TrialView", "gold_plan"]

ROLES = ("agent", "user", "judge")


class TrialView:
    """One trial as a participant kind's factory sees it (``build(view, argument)``).

    - ``scenario``, ``settings``, ``plan`` (the gold plan the oracle, a replay and the scripted
      user take turns on), ``trial`` (1..``--tau2-trials``) and ``seed`` (that trial's seed);
    - ``model_config(role)`` / ``required_model(role)`` (``"agent"``, ``"user"``, ``"judge"``:
      the agent's and the user's carry the trial's ``seed``), ``judges`` (every judge of a
      jury), ``retry_policy()``;
    - ``usage`` (the meter metrics.json reports: a participant that calls a model itself
      records there), ``cassette`` (None unless ``--tau2-record-mode`` records or replays);
    - ``redact(text)`` / ``redact_data(value)``: the models' credentials masked.
    """

    def __init__(
        self,
        scenario: Scenario,
        settings: Settings,
        plan: GoldPlan,
        *,
        trial: int = 1,
        usage: UsageMeter | None = None,
        calls_models: bool = True,
    ) -> None:
        self.scenario = scenario
        self.settings = settings
        self.plan = plan
        self.trial = trial
        self.seed = trial_seed(settings.seed, trial)
        """This trial's seed (scenario/trial_ids.py), passed to the agent and user models."""
        self.usage = usage if usage is not None else UsageMeter()
        self._calls_models = calls_models
        self._roles = model_roles(settings)

    @property
    def result_name(self) -> str:
        """The trial's item id and results folder (its cassette is named after it)."""
        return trial_id(self.scenario.name, self.trial, self.settings.trials)

    # ---- models ----------------------------------------------------------------------------------

    def model_config(self, role: str) -> ModelConfig | None:
        """The role's model, with this trial's ``seed`` for the agent and the user (as upstream; not
        the judge). A ``seed`` given in ``--tau2-<role>-args`` wins: it is the same in every trial."""
        configs = self._roles.get(role) or []
        config = configs[0] if configs else None
        if config is None or role == "judge" or "seed" in config.args:
            return config
        return dataclasses.replace(config, args={**config.args, "seed": self.seed})

    def required_model(self, role: str) -> ModelConfig:
        config = self.model_config(role)
        if config is None:  # validate_settings refuses this before any scenario runs
            raise SettingsError(f"the {role} needs --tau2-{role}-model MODEL")
        return config

    @property
    def judges(self) -> Sequence[ModelConfig]:
        """Every judge (several: a jury, scoring/jury.py), priced at ``--tau2-price``."""
        return tuple(self._roles.get("judge") or ())

    def retry_policy(self) -> RetryPolicy:
        from pytest_tau2.llm.config import RetryPolicy

        s = self.settings
        return RetryPolicy(
            max_retries=s.llm_retries,
            timeout_s=s.llm_timeout,
            transport=s.llm_transport,
            max_connections=s.max_connections,
            rpm=s.rpm,
            tpm=s.tpm,
            rate_limit_timeout_s=s.rate_limit_timeout,
        )

    def models(self) -> dict[str, Any]:
        """The models as metrics.json and metadata.json record them (credentials masked)."""
        out: dict[str, Any] = {}
        for role in ROLES:
            config = self.model_config(role)
            out[role] = config.safe_dict() if config is not None else None
        if len(self.judges) > 1:  # a jury; one judge's file stays as it was
            out["judges"] = [config.safe_dict() for config in self.judges]
        return out

    # ---- the cassette ----------------------------------------------------------------------------

    @functools.cached_property
    def cassette(self) -> Cassette | None:
        """This trial's cassette under ``--tau2-record-mode`` (read once, when first asked for), else None."""
        mode = self.settings.recording
        if mode is None or not self._calls_models:
            return None
        from pytest_tau2.llm.cassette import Cassette

        return Cassette.open(self.settings.cassette_dir or "cassettes", self.result_name, mode)

    @property
    def opened_cassette(self) -> Cassette | None:
        """The cassette if a participant asked for it (the trial saves it with its result), else None."""
        cassette: Cassette | None = self.__dict__.get("cassette")
        return cassette

    # ---- redaction -------------------------------------------------------------------------------

    @functools.cached_property
    def secrets(self) -> list[str]:
        """Credential strings of the configured models (never numbers such as ``max_tokens``)."""
        return [secret for role in ROLES for config in self._roles.get(role) or () for secret in config.secrets()]

    def redact_data(self, value: Any) -> Any:
        """``value`` with every string redacted, walked as data (numbers and structure untouched)."""
        from pytest_tau2.llm.secrets import redact_data

        return redact_data(value, self.secrets)

    def redact(self, text: str) -> str:
        from pytest_tau2.llm.secrets import redact

        return redact(text, self.secrets)


def gold_plan(scenario: Scenario, actions: list[dict[str, Any]] | None = None) -> GoldPlan:
    """The trial's gold plan: ``actions`` (an agent kind that replays others: ``replay:PATH``), else
    the scenario's gold actions. One plan for both sides: the oracle or replay agent and the
    scripted user take turns on it."""
    if actions is None:
        actions = scenario.gold_actions() or []
    return GoldPlan(
        [dict(a) for a in actions],
        ending_tools=_ending_names(scenario),
        communicate=tuple(getattr(scenario, "communicate_info", ())),  # tau2's COMMUNICATE facts
    )


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
