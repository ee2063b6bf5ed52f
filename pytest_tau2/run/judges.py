"""The NL judges a run asks for: ``--tau2-judge-model`` (one or several), their arguments and prompt.

- ``--tau2-judge-model A`` is one judge, as it always was; ``A,B,C`` (or the flag repeated) is a
  *jury*: every assertion is judged by each, the verdict is the majority (scoring/jury.py).
- ``--tau2-judge-args`` is one JSON object for every judge, or a JSON list of objects, one per
  judge in order.
- ``--tau2-judge-prompt upstream`` judges in the shape of tau2-bench's NL assertion evaluator
  (scoring/judge_upstream.py); without a ``--tau2-judge-model`` it brings upstream's judge model,
  ``gpt-4.1-2025-04-14`` at temperature 0 (tau2-reference.md §4.5), so NL_ASSERTION inside
  tau2_reward is judged as upstream judges it.

No pytest here, and no import of run/participants.py (which imports this module).
"""

from __future__ import annotations

import json

from pytest_tau2.errors import SettingsError
from pytest_tau2.llm.config import ModelConfig
from pytest_tau2.llm.secrets import mask_json_text
from pytest_tau2.settings import Settings

UPSTREAM_JUDGE_MODEL = "gpt-4.1-2025-04-14"
"""Upstream's ``DEFAULT_LLM_NL_ASSERTIONS`` at the pinned commit (a litellm model string as is)."""
UPSTREAM_JUDGE_ARGS: dict[str, object] = {"temperature": 0.0}
"""Upstream's ``DEFAULT_LLM_NL_ASSERTIONS_ARGS``."""


def judge_models(settings: Settings) -> list[str]:
    """The judge model strings, in order (empty: no judge)."""
    raw = settings.judge_model
    if raw is None or not raw.strip():
        return [UPSTREAM_JUDGE_MODEL] if settings.judge_prompt == "upstream" else []
    models = [part.strip() for part in raw.split(",")]
    if any(not model for model in models):
        raise SettingsError(f"--tau2-judge-model {raw!r}: an empty model name between commas")
    return models


def judge_configs(settings: Settings) -> list[ModelConfig]:
    """One :class:`ModelConfig` per judge; a SettingsError naming the option when the args do not fit."""
    models = judge_models(settings)
    raw = settings.judge_args
    if not models:
        if raw is not None and raw.strip():
            # the same refusal as for the other sides: arguments without a model
            ModelConfig.from_option(None, raw, option_name="--tau2-judge-args")
        return []
    if (raw is None or not raw.strip()) and settings.judge_prompt == "upstream" and not settings.judge_model:
        return [ModelConfig(UPSTREAM_JUDGE_MODEL, dict(UPSTREAM_JUDGE_ARGS))]
    per_judge = _per_judge_args(raw, len(models))
    configs = []
    for model, args in zip(models, per_judge, strict=True):
        try:
            config = ModelConfig.from_option(model, args, option_name="--tau2-judge-args")
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
        if config is not None:
            configs.append(config)
    return configs


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


def judge_labels(configs: list[ModelConfig]) -> list[str]:
    """How reports name each judge: its model, with ``#k`` when two judges share a model."""
    seen: dict[str, int] = {}
    labels = []
    for config in configs:
        seen[config.model] = seen.get(config.model, 0) + 1
        labels.append(config.model if seen[config.model] == 1 else f"{config.model}#{seen[config.model]}")
    return labels
