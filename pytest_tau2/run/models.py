"""Which model each side of a run calls: its :class:`ModelConfig` from ``--tau2-<side>-model`` and
``--tau2-<side>-args`` (the judges of a jury: run/judges.py), at the price ``--tau2-price`` gives it."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from pytest_tau2.run.judges import judge_configs
from pytest_tau2.settings import Settings

if TYPE_CHECKING:
    from pytest_tau2.llm.config import ModelConfig


def model_config(settings: Settings, side: str) -> ModelConfig | None:
    """The side's model (the judge: the first of several, run/judges.py); priced at the user's
    ``--tau2-price`` for it, when one is given."""
    if side == "judge":
        configs = all_model_configs(settings, "judge")
        return configs[0] if configs else None
    from pytest_tau2.llm.client import ModelConfig

    config = ModelConfig.from_option(
        getattr(settings, f"{side}_model"), getattr(settings, f"{side}_args"), option_name=f"--tau2-{side}-args"
    )
    return None if config is None else _priced(settings, config)


def _priced(settings: Settings, config: ModelConfig) -> ModelConfig:
    """``config`` at the price ``--tau2-price`` gives its model, if any."""
    if not settings.price:
        return config
    from pytest_tau2.llm.prices import parse_prices

    given = parse_prices(settings.price).get(config.model)
    return config if given is None else dataclasses.replace(config, price=(given.input, given.output))


def all_model_configs(settings: Settings, side: str) -> list[ModelConfig]:
    """Every model of a side: one at most, except the judges of a jury."""
    if side == "judge":
        return [_priced(settings, config) for config in judge_configs(settings)]
    config = model_config(settings, side)
    return [config] if config is not None else []


def model_roles(settings: Settings) -> dict[str, list[ModelConfig]]:
    """Every model role of a run, resolved from its settings: ``agent``, ``user`` (one model at most)
    and ``judge`` (several: a jury), each priced at ``--tau2-price``. The one place a trial's view
    (run/view.py) takes its roles from."""
    return {role: all_model_configs(settings, role) for role in ("agent", "user", "judge")}
