"""RUN: one scenario end to end, without pytest.

- the records a run produces (:class:`GoldResult`, :class:`ScenarioOutcome`: scenario/outcome.py);
- :mod:`.seeding`: seeded states, initialization, tools, the cached gold replay;
- :mod:`.participants`: participant kinds as one table; :mod:`.view`: the :class:`TrialView` their factories get;
- :mod:`.trial`: one trial (scenario x trial seed), its participants built once, its result;
- :mod:`.catalog`: every scenario of the run by name (and the selections aimed at a domain);
- :mod:`.session`: once per process: model clients preloaded and closed, the run header;
- :mod:`.agent_side`: the seam between in-process tools and a remote bot (``bot.remote``);
- :mod:`.pipeline`: :func:`run_scenario`, the one pipeline;
- :mod:`.prefetch`: ``--tau2-concurrency``, N runs in flight on a background event loop.
"""

from pytest_tau2.run.agent_side import AgentSide, InProcessAgentSide, ProvidesAgentSide, Seat
from pytest_tau2.run.pipeline import run_scenario, scenario_verdict
from pytest_tau2.run.seeding import apply_initialization, build_environments, gold_replay, prepare, seed_states
from pytest_tau2.scenario.outcome import GoldResult, ScenarioOutcome
from pytest_tau2.scenario.trial_ids import split_trial_id, trial_id  # the adapter's item ids, through the door

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
