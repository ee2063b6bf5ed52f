"""Which model each side of a run calls: read from ``settings.roles`` (settings/roles.py), where
the models are parsed and priced once. Kept for the readers that name a side by a string."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_tau2.settings import Settings

if TYPE_CHECKING:
    from pytest_tau2.llm.config import ModelConfig


def model_config(settings: Settings, side: str) -> ModelConfig | None:
    """The side's model (the judge: the first of several), at its ``--tau2-price`` price."""
    role = settings.roles.first(side)
    return None if role is None else role.config


def all_model_configs(settings: Settings, side: str) -> list[ModelConfig]:
    """Every model of a side: one at most, except the judges of a jury."""
    return [role.config for role in settings.roles.side(side)]


def model_roles(settings: Settings) -> dict[str, list[ModelConfig]]:
    """Every model role of a run (``settings.roles``, resolved once): ``agent``, ``user`` (one model at
    most) and ``judge`` (several: a jury), each priced at ``--tau2-price``. The one place a trial's
    view (run/view.py) takes its roles from."""
    return {role: all_model_configs(settings, role) for role in ("agent", "user", "judge")}
