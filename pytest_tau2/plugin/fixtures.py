"""The scenario item's fixtures, declared when pytest starts; what they hand out is built by
plugin/item.py, imported only once a fixture is used (so a project without scenarios still
imports no engine module: docs/ci.md).

Why they are declared here, at configure time, and not beside the rest of the adapter when it
wakes up in the middle of collection (plugin/activation.py): a conftest.py that overrides
``tau2_agent`` (or ``tau2_user``, ``tau2_judge``, ...) must win over the built-in fixture. From
pytest 9.2 on, the fixtures of the rootdir's conftest.py and those of a non-conftest plugin are
filed under the same node (the session), where the one registered *later* wins; the rootdir's
conftest is parsed when its folder is collected, so a plugin registered after that (as the
adapter was) silently replaced every user's agent with the built-in one. Declared before the
session starts, the built-ins are always the earlier ones, under pytest 9.0 as under 9.2
(tests/plugin/test_tau2_override.py, tests/e2e/test_llm_python_agent.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_tau2.plugin.run_state import ItemTrial
    from pytest_tau2.run.catalog import Scenario
    from pytest_tau2.run.pipeline import Judge
    from pytest_tau2.run.trial import Agent
    from pytest_tau2.run.view import TrialView as Context
    from pytest_tau2.settings import Settings


@pytest.fixture(scope="session")
def tau2_settings(pytestconfig: pytest.Config) -> Settings:
    """The resolved ``--tau2-*`` settings of this run."""
    from pytest_tau2.plugin import item

    return item.settings_of(pytestconfig)


@pytest.fixture
def tau2_trial() -> int:
    """Which trial of its scenario the item is: 1, or 1..K under ``--tau2-trials K`` (K > 1
    parametrizes this name, ids ``<scenario>-t<k>``)."""
    return 1


@pytest.fixture
def tau2_item_trial(
    request: pytest.FixtureRequest, tau2_scenario_name: str, tau2_trial: int, tau2_settings: Settings
) -> ItemTrial:
    """The item's trial, built once: taken from the prefetcher when it runs this item, else built here."""
    from pytest_tau2.plugin import item

    return item.item_trial(request, tau2_scenario_name, tau2_trial, tau2_settings)


@pytest.fixture
def tau2_scenario(tau2_item_trial: ItemTrial) -> Scenario:
    """The scenario instance under test."""
    return tau2_item_trial.trial.scenario


@pytest.fixture
def tau2_context(tau2_item_trial: ItemTrial) -> Context:
    """What the built-in participants share: the scenario, its gold plan, usage meter, settings, trial."""
    return tau2_item_trial.trial.context


@pytest.fixture
def tau2_agent(tau2_item_trial: ItemTrial) -> Agent:
    """The agent under test. Override in conftest.py to evaluate your own Python agent."""
    from pytest_tau2.plugin import item

    return item.agent_of(tau2_item_trial)


@pytest.fixture
def tau2_user(tau2_item_trial: ItemTrial) -> Any:
    """The simulated user. Override in conftest.py for a custom user simulator."""
    from pytest_tau2.plugin import item

    return item.user_of(tau2_item_trial)


@pytest.fixture
def tau2_judge(tau2_item_trial: ItemTrial) -> Judge | None:
    """The NL-assertion judge, or None when no judge model is configured."""
    return tau2_item_trial.trial.judge


@pytest.fixture
def tau2_outcome(
    request: pytest.FixtureRequest,
    tau2_item_trial: ItemTrial,
    tau2_agent: Agent,
    tau2_user: Any,
    tau2_judge: Judge | None,
) -> Any:
    """Run the trial (setup phase: an infrastructure failure makes the item an *error*)."""
    from pytest_tau2.plugin import item

    return item.outcome_of(request, tau2_item_trial, tau2_agent, tau2_user, tau2_judge)
