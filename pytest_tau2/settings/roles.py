"""The models a run calls, each resolved once into one typed value: a :class:`ModelRole`.

A role (the agent, the simulated user, each judge of a jury, a domain's embedding or reranker
model) is given on the command line as two strings, ``--tau2-<role>-model`` and
``--tau2-<role>-args``. They are parsed here, once per :class:`~pytest_tau2.settings.Settings`
(``settings.roles``), priced at the ``--tau2-price`` given for the model, and read everywhere
else as typed values; nobody parses the strings again.

- ``--tau2-judge-model A`` is one judge; ``A,B,C`` (or the flag repeated) is a *jury*: each
  assertion is judged by every judge, the verdict is the majority (scoring/jury.py).
- ``--tau2-judge-args`` is one JSON object for every judge, or a JSON list of objects, one per
  judge in order.
- ``--tau2-judge-prompt upstream`` without a ``--tau2-judge-model`` brings upstream's judge model,
  ``gpt-4.1-2025-04-14`` at temperature 0 (tau2-reference.md §4.5).

A leaf of the settings package: it imports only :mod:`pytest_tau2.llm`'s leaves (the config,
the prices, the masking), never the Settings class (which imports it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from pytest_tau2.errors import SettingsError
from pytest_tau2.llm.config import ModelConfig
from pytest_tau2.llm.secrets import mask_json_text

__all__ = ["UPSTREAM_JUDGE_ARGS", "UPSTREAM_JUDGE_MODEL", "ModelRole", "Roles", "model_role", "resolve_roles"]

UPSTREAM_JUDGE_MODEL = "gpt-4.1-2025-04-14"
"""Upstream's ``DEFAULT_LLM_NL_ASSERTIONS`` at the pinned commit (a litellm model string as is)."""
UPSTREAM_JUDGE_ARGS: dict[str, object] = {"temperature": 0.0}
"""Upstream's ``DEFAULT_LLM_NL_ASSERTIONS_ARGS``."""


@dataclass(frozen=True)
class ModelRole:
    """One model a run calls, resolved once: which role, its model and parsed arguments, its price.

    ``config`` is what the model client takes (:class:`~pytest_tau2.llm.config.ModelConfig`:
    model, args, the ``--tau2-price`` price); ``option`` names the flag that gave the model, for
    messages; ``label`` is how reports name it (a jury's second judge of the same model: ``#2``).
    """

    role: str
    """``agent``, ``user``, ``judge``, or a domain's role (``embedding``, ``reranker``)."""
    config: ModelConfig
    option: str
    """The flag that names the model (``--tau2-agent-model``), for messages about it."""
    label: str = ""

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def args(self) -> dict[str, Any]:
        return self.config.args

    @property
    def price(self) -> tuple[float, float] | None:
        """USD per million prompt and completion tokens from ``--tau2-price``, if one was given."""
        return self.config.price

    def secrets(self) -> list[str]:
        return self.config.secrets()

    def __repr__(self) -> str:  # the config masks credentials
        return f"ModelRole({self.role!r}, {self.config!r})"


@dataclass(frozen=True)
class Roles:
    """Every model role of a run's core: ``settings.roles`` (a domain's own roles: its option section)."""

    agent: ModelRole | None = None
    user: ModelRole | None = None
    judges: tuple[ModelRole, ...] = ()
    """The judges of NL assertions, in order: none (NL checks skipped), one, or a jury."""
    tts: ModelRole | None = None
    """``--tau2-tts-model``: a cloud speech synthesizer for phone calls (None: the offline engine)."""
    asr: ModelRole | None = None
    """``--tau2-asr-model``: a cloud speech recognizer for phone calls (None: the offline engine)."""

    @property
    def judge(self) -> ModelRole | None:
        """The first judge (the only one unless a jury)."""
        return self.judges[0] if self.judges else None

    def side(self, side: str) -> tuple[ModelRole, ...]:
        """The roles of ``agent``, ``user`` or ``judge`` (every judge of a jury)."""
        if side == "judge":
            return self.judges
        if side not in ("agent", "user"):
            raise KeyError(f"no model side {side!r} (agent, user, judge)")
        role = self.agent if side == "agent" else self.user
        return () if role is None else (role,)

    def first(self, side: str) -> ModelRole | None:
        found = self.side(side)
        return found[0] if found else None

    def all(self) -> tuple[ModelRole, ...]:
        """Every role: the agent, the user, the judges."""
        return (*self.side("agent"), *self.side("user"), *self.judges)

    def speech(self) -> tuple[ModelRole, ...]:
        """The cloud speech engines named for phone calls (``tts``, ``asr``), if any."""
        return tuple(role for role in (self.tts, self.asr) if role is not None)

    def secrets(self) -> list[str]:
        return [value for role in (*self.all(), *self.speech()) for value in role.secrets()]


def model_role(
    role: str, model: str | None, args_json: str | None, prices: dict[str, tuple[float, float]], *, label: str = ""
) -> ModelRole | None:
    """The role given by ``--tau2-<role>-model`` and ``--tau2-<role>-args`` (None: no model); a
    ValueError naming the option when the arguments are not a JSON object or come without a model."""
    config = ModelConfig.from_option(model, args_json, option_name=f"--tau2-{role}-args")
    if config is None:
        return None
    price = prices.get(config.model)
    if price is not None:
        config = replace(config, price=price)
    return ModelRole(role, config, f"--tau2-{role}-model", label or config.model)


def resolve_roles(
    *,
    agent_model: str | None,
    agent_args: str | None,
    user_model: str | None,
    user_args: str | None,
    judge_model: str | None,
    judge_args: str | None,
    judge_prompt: str,
    price: str | None,
    tts_model: str | None = None,
    tts_args: str | None = None,
    asr_model: str | None = None,
    asr_args: str | None = None,
) -> Roles:
    """The run's core roles from the option values; a SettingsError naming the option when one is wrong."""
    try:
        prices = parse_price_option(price)
        agent = model_role("agent", agent_model, agent_args, prices)
        user = model_role("user", user_model, user_args, prices)
        tts = model_role("tts", tts_model, tts_args, prices)
        asr = model_role("asr", asr_model, asr_args, prices)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    return Roles(agent, user, _judges(judge_model, judge_args, judge_prompt, prices), tts, asr)


def parse_price_option(text: str | None) -> dict[str, tuple[float, float]]:
    """``--tau2-price`` as ``{model: (in, out)}`` (a ValueError naming the entry that is wrong)."""
    from pytest_tau2.llm.prices import parse_prices

    return {model: (price.input, price.output) for model, price in parse_prices(text).items()}


def judge_model_names(judge_model: str | None, judge_prompt: str) -> list[str]:
    """The judge model strings, in order (empty: no judge)."""
    if judge_model is None or not judge_model.strip():
        return [UPSTREAM_JUDGE_MODEL] if judge_prompt == "upstream" else []
    models = [part.strip() for part in judge_model.split(",")]
    if any(not model for model in models):
        raise SettingsError(f"--tau2-judge-model {judge_model!r}: an empty model name between commas")
    return models


def _judges(
    judge_model: str | None, judge_args: str | None, judge_prompt: str, prices: dict[str, tuple[float, float]]
) -> tuple[ModelRole, ...]:
    models = judge_model_names(judge_model, judge_prompt)
    given_args = judge_args is not None and judge_args.strip() != ""
    if not models:
        if given_args:  # the same refusal as for the other roles: arguments without a model
            try:
                ModelConfig.from_option(None, judge_args, option_name="--tau2-judge-args")
            except ValueError as exc:
                raise SettingsError(str(exc)) from None
        return ()
    if not given_args and judge_prompt == "upstream" and not judge_model:
        config = ModelConfig(UPSTREAM_JUDGE_MODEL, dict(UPSTREAM_JUDGE_ARGS), prices.get(UPSTREAM_JUDGE_MODEL))
        return (ModelRole("judge", config, "--tau2-judge-model", UPSTREAM_JUDGE_MODEL),)
    seen: dict[str, int] = {}
    judges = []
    for model, args in zip(models, _per_judge_args(judge_args, len(models)), strict=True):
        seen[model] = seen.get(model, 0) + 1
        label = model if seen[model] == 1 else f"{model}#{seen[model]}"
        try:
            role = model_role("judge", model, args, prices, label=label)
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
        if role is not None:
            judges.append(role)
    return tuple(judges)


def _per_judge_args(raw: str | None, count: int) -> list[str | None]:
    """Each judge's arguments as JSON text: one object for all, or a list of one object per judge."""
    if raw is None or not raw.strip():
        return [None] * count
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        return [raw] * count  # ModelConfig.from_option refuses it with its own message
    if not isinstance(parsed, list):
        return [raw] * count
    if len(parsed) != count:
        raise SettingsError(
            f"--tau2-judge-args is a list of {len(parsed)} objects for {count} judge"
            f"{'s' if count != 1 else ''} (--tau2-judge-model): give one object per judge, in order, "
            f"or one object for all: {mask_json_text(raw)[:200]!r}"
        )
    return [json.dumps(item) for item in parsed]
