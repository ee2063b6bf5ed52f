"""The NL judges a run asks for: ``--tau2-judge-model`` (one or several), their arguments and prompt.

They are resolved once, with the other models, into ``settings.roles.judges`` (settings/roles.py:
a jury, ``--tau2-judge-args`` per judge, ``--tau2-judge-prompt upstream``'s default model); the
functions here read them.

No pytest here, and no import of run/participants.py (which imports this module).
"""

from __future__ import annotations

from pytest_tau2.llm.config import ModelConfig
from pytest_tau2.settings import Settings
from pytest_tau2.settings.roles import UPSTREAM_JUDGE_ARGS as UPSTREAM_JUDGE_ARGS
from pytest_tau2.settings.roles import UPSTREAM_JUDGE_MODEL as UPSTREAM_JUDGE_MODEL
from pytest_tau2.settings.roles import judge_model_names


def judge_models(settings: Settings) -> list[str]:
    """The judge model strings, in order (empty: no judge)."""
    return judge_model_names(settings.judge_model, settings.judge_prompt)


def judge_configs(settings: Settings) -> list[ModelConfig]:
    """One :class:`ModelConfig` per judge (``settings.roles.judges``), priced at ``--tau2-price``."""
    return [role.config for role in settings.roles.judges]


def judge_labels(configs: list[ModelConfig]) -> list[str]:
    """How reports name each judge: its model, with ``#k`` when two judges share a model."""
    seen: dict[str, int] = {}
    labels = []
    for config in configs:
        seen[config.model] = seen.get(config.model, 0) + 1
        labels.append(config.model if seen[config.model] == 1 else f"{config.model}#{seen[config.model]}")
    return labels
