"""Evaluate an in-process Python agent: override the ``tau2_agent`` fixture.

pytest-tau2 asks the ``tau2_agent`` fixture for the agent of each scenario. Returning your own
object (anything with ``async respond(messages, tools) -> Reply``) puts it under test; the
simulated user, the seeded database, the tools and the scoring stay the plugin's.
"""

from __future__ import annotations

from typing import Any

import pizza_scenarios  # noqa: F401  (registers the example's scenarios before collection)
import pytest
from pizza_agent import PizzaPhoneAgent


@pytest.fixture
def tau2_agent(tau2_scenario: Any) -> PizzaPhoneAgent:
    """A fresh agent per scenario (``tau2_scenario`` is there if your agent needs its name or domain)."""
    return PizzaPhoneAgent()
