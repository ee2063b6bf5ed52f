"""What is tested: scenario classes, their per-side descriptions, and the registry."""

from pytest_tau2.scenario.base import Scenario, render_prompt
from pytest_tau2.scenario.model import Actions, Persona, Resources, SuccessSignal, Task
from pytest_tau2.scenario.registry import (
    REGISTRY,
    all_scenarios,
    register_eval_scenario,
    register_scenario_source,
)

__all__ = [
    "REGISTRY",
    "Actions",
    "Persona",
    "Resources",
    "Scenario",
    "SuccessSignal",
    "Task",
    "all_scenarios",
    "register_eval_scenario",
    "register_scenario_source",
    "render_prompt",
]
