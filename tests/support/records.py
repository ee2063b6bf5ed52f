"""A result record of one real scenario run (the restaurant oracle), made in-process without pytest."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytest_tau2.domains.restaurant import RestaurantBaseScenario
from pytest_tau2.report.metrics import build_record
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.run import run_scenario
from pytest_tau2.run.trial import Trial
from pytest_tau2.settings import Settings


def cola_record(root: Path, name: str) -> ScenarioRecord:
    """Order a cola at Pizza Palace (data under ``root``), scenario ``restaurant__<name>``."""
    (root / "restaurant").mkdir()
    (root / "restaurant" / "orders.json").write_text('{"orders": []}')

    class Cola(RestaurantBaseScenario):
        reference_answer = {
            "items": [{"name": "Cola", "unit_price": "1.99", "quantity": "1"}],
            "customer_name": "Al",
            "customer_phone": "1",
            "total_price": "1.99",
        }

    Cola.name = f"restaurant__{name}"
    settings = Settings(eval_data_root=str(root))
    scenario = Cola().bind(settings)
    trial = Trial(scenario, settings)
    outcome = asyncio.run(run_scenario(scenario, agent=trial.agent, user=trial.user, settings=settings))
    return build_record(
        outcome,
        models=trial.context.models(),
        data_pin=None,
        token_usage=trial.context.usage.to_dict(),
        agent_kind="oracle",
        user_kind="scripted",
        trial=trial.record(),
    )
