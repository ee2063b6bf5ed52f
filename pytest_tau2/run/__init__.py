"""RUN: one scenario end to end, without pytest.

- the records a run produces (:class:`GoldResult`, :class:`ScenarioOutcome`: scenario/outcome.py);
- :mod:`.seeding`: seeded states, initialization, tools, the cached gold replay;
- :mod:`.participants`: participant kinds as one table; :mod:`.view`: the :class:`TrialView` their factories get;
- :mod:`.trial`: one trial (scenario x trial seed), its participants built once, its result;
- :mod:`.catalog`: every scenario of the run by name (and the selections aimed at a domain);
- :mod:`.session`: once per process: model clients preloaded and closed, the run header;
- :mod:`.agent_side`: the seam between in-process tools and a remote bot (``bot.remote``);
- :mod:`.pipeline`: :func:`run_scenario`, the one pipeline;
- :mod:`.prefetch`: ``--tau2-concurrency``, N runs in flight on a background event loop;
- :mod:`.early`: what a pytest start that names a model begins before the conftest files load.

Importing this package imports none of its modules (a leaf such as :mod:`.early` is imported by
every pytest start that names a model); the names below are imported when first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_tau2.run.agent_side import AgentSide, InProcessAgentSide, ProvidesAgentSide, Seat
    from pytest_tau2.run.pipeline import run_scenario, scenario_verdict
    from pytest_tau2.run.seeding import apply_initialization, build_environments, gold_replay, prepare, seed_states
    from pytest_tau2.scenario.outcome import GoldResult, ScenarioOutcome
    from pytest_tau2.scenario.trial_ids import split_trial_id, trial_id

_LAZY = {
    **dict.fromkeys(("AgentSide", "InProcessAgentSide", "ProvidesAgentSide", "Seat"), "pytest_tau2.run.agent_side"),
    **dict.fromkeys(("run_scenario", "scenario_verdict"), "pytest_tau2.run.pipeline"),
    **dict.fromkeys(
        ("apply_initialization", "build_environments", "gold_replay", "prepare", "seed_states"),
        "pytest_tau2.run.seeding",
    ),
    **dict.fromkeys(("GoldResult", "ScenarioOutcome"), "pytest_tau2.scenario.outcome"),
    # the adapter's item ids, through the door
    **dict.fromkeys(("split_trial_id", "trial_id"), "pytest_tau2.scenario.trial_ids"),
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:  # a submodule (``from pytest_tau2.run import trial``): the import system loads it
        raise AttributeError(name)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "AgentSide",
    "GoldResult",
    "InProcessAgentSide",
    "ProvidesAgentSide",
    "ScenarioOutcome",
    "Seat",
    "apply_initialization",
    "build_environments",
    "gold_replay",
    "prepare",
    "run_scenario",
    "scenario_verdict",
    "seed_states",
    "split_trial_id",
    "trial_id",
]
