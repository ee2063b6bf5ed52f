"""How sure a run's numbers are: the intervals of its success rate, tau2 reward and pass^k, and
the noise floor of its trials, for the run and per domain (docs/statistics.md).

The outcomes are the headline's (:mod:`pytest_tau2.report.summary`): a scenario with a verdict
counts, an infrastructure error, a stall or an item that left no result counts as a failure, an
"N/A" one is left out. tau2's reward and pass^k use the valid trials (:mod:`.leaderboard`, the
rules of :mod:`.pass_k`). With one trial per task a rate gets Wilson's interval over tasks;
with several, the task-clustered bootstrap (a task's trials resampled together); pass^k always
the bootstrap. The statistics live in :mod:`pytest_tau2.stats`; this module turns records into
their per-task outcomes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_tau2.report import leaderboard
from pytest_tau2.report.pass_k import Trial
from pytest_tau2.report.record import ScenarioRecord, read_records
from pytest_tau2.scenario.trial_ids import split_trial_id
from pytest_tau2.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, Interval, NoiseFloor, cluster_bootstrap, wilson
from pytest_tau2.stats.intervals import level_text
from pytest_tau2.stats.noise import noise_floor

DEFAULT_LEVEL = 0.95
Outcomes = dict[str, list[float]]
"""Task name -> the outcomes of its trials (1.0 passed, 0.0 not)."""


def headline_outcomes(records: Iterable[ScenarioRecord], errored: Iterable[str] = ()) -> Outcomes:
    """Per task, the outcomes the headline success rate counts (N/A left out)."""
    out: Outcomes = defaultdict(list)
    for m in records:
        if m.is_successful == "N/A" and not m.infrastructure_error and not m.stalled:
            continue
        passed = m.is_successful is True and not m.infrastructure_error and not m.stalled
        out[m.scenario].append(1.0 if passed else 0.0)
    for name in errored:
        out[split_trial_id(name)[0]].append(0.0)
    return dict(out)


def valid_outcomes(trials: Iterable[Trial]) -> Outcomes:
    """Per task, the outcomes of its valid trials (what pass^k and the tau2 reward average count)."""
    out: Outcomes = defaultdict(list)
    for trial in trials:
        if not trial.infrastructure_error and trial.success is not None:
            out[trial.task].append(1.0 if trial.success else 0.0)
    return dict(out)


def rate_interval(tasks: Outcomes, level: float = DEFAULT_LEVEL) -> Interval | None:
    """Wilson over tasks with one trial each; else the task-clustered bootstrap of the mean."""
    values = [v for v in tasks.values() if v]
    if not values:
        return None
    if all(len(v) == 1 for v in values):
        return wilson(int(sum(v[0] for v in values)), len(values), level)
    return cluster_bootstrap(values, "mean", level=level)


@dataclass
class ScopeUncertainty:
    """The intervals of one scope (the run, or a domain)."""

    level: float
    tasks: int
    success: Interval | None
    tau2_reward: Interval | None = None
    pass_k: dict[int, Interval | None] = field(default_factory=dict)
    """Six-signal pass^k, k = 1..max k (several trials only)."""
    tau2_pass_k: dict[int, Interval | None] = field(default_factory=dict)
    noise: NoiseFloor | None = None

    def to_dict(self) -> dict[str, Any]:
        def one(interval: Interval | None) -> dict[str, Any] | None:
            return None if interval is None else interval.to_dict()

        return {
            "tasks": self.tasks,
            "success_rate": one(self.success),
            "tau2_reward": one(self.tau2_reward),
            "six_signal_pass_hat_k": {str(k): one(v) for k, v in self.pass_k.items()},
            "tau2_reward_pass_hat_k": {str(k): one(v) for k, v in self.tau2_pass_k.items()},
            "noise": None if self.noise is None else self.noise.to_dict(),
        }

    def lines(self) -> list[str]:
        """The summary's lines (without a heading), an empty list when nothing has an interval."""
        out = []
        if self.success is not None:
            out.append(f"success rate: {self.success.text()} ({self.success.method}, {self.tasks} tasks)")
        if self.tau2_reward is not None:
            out.append(f"tau2 reward: {self.tau2_reward.text(percent=False)} ({self.tau2_reward.method})")
        for name, values in (("six-signal", self.pass_k), ("tau2 reward", self.tau2_pass_k)):
            shown = [f"pass^{k} {v.text(percent=False)}" for k, v in values.items() if v is not None]
            if shown:
                out.append(f"{name}: {', '.join(shown)} (task bootstrap)")
        if self.noise is not None:
            out.append(f"noise: {self.noise.text()}")
        return out


def scope(
    records: Sequence[ScenarioRecord], errored: Sequence[str] = (), level: float = DEFAULT_LEVEL
) -> ScopeUncertainty:
    """The intervals of the records given (one scope)."""
    k = leaderboard.trials_per_task(records)
    headline = headline_outcomes(records, errored)
    result = ScopeUncertainty(level, len(headline), rate_interval(headline, level))
    tau2 = valid_outcomes(leaderboard.tau2_reward_trials(records, errored))
    if tau2:
        result.tau2_reward = rate_interval(tau2, level)
    if k > 1:
        six = valid_outcomes(leaderboard.six_signal_trials(records, errored))
        result.pass_k = _pass_k(six, k, level)
        result.tau2_pass_k = _pass_k(tau2, k, level) if tau2 else {}
        result.noise = noise_floor(list(six.values()), level=level)
    return result


def _pass_k(tasks: Outcomes, trials: int, level: float) -> dict[int, Interval | None]:
    values = [v for v in tasks.values() if v]
    if not values:
        return {}
    max_k = min(min(len(v) for v in values), trials)
    return {k: cluster_bootstrap(values, k, level=level) for k in range(1, max_k + 1)}


def by_domain(
    records: Sequence[ScenarioRecord], errored: Sequence[str] = (), level: float = DEFAULT_LEVEL
) -> dict[str, ScopeUncertainty]:
    domains = sorted({m.domain or "?" for m in records} | {name.split("__", 1)[0] for name in errored})
    return {
        domain: scope(
            [m for m in records if (m.domain or "?") == domain],
            [name for name in errored if name.split("__", 1)[0] == domain],
            level,
        )
        for domain in domains
    }


def summary_lines(
    metrics: Iterable[ScenarioRecord | Any], errored: Sequence[str] = (), level: float = DEFAULT_LEVEL
) -> list[str]:
    """The summary's interval block: a heading naming the level and methods, then the run's lines."""
    records = read_records(metrics)
    lines = scope(records, errored, level).lines()
    if not lines:
        return []
    return [f"Intervals ({level_text(level)}; docs/statistics.md):", *[f"  {line}" for line in lines]]


def document(
    metrics: Iterable[ScenarioRecord | Any], errored: Sequence[str] = (), level: float = DEFAULT_LEVEL
) -> dict[str, Any]:
    """The ``intervals`` object of all_metrics.json: the level, the methods, the run and each domain."""
    records = read_records(metrics)
    return {
        "level": level,
        "methods": {
            "rate_one_trial": "Wilson score interval over tasks",
            "rate_several_trials": "task-clustered percentile bootstrap (a task's trials resampled together)",
            "pass_hat_k": "task-clustered percentile bootstrap",
            "resamples": DEFAULT_RESAMPLES,
            "seed": DEFAULT_SEED,
        },
        "run": scope(records, errored, level).to_dict(),
        "domains": {name: s.to_dict() for name, s in by_domain(records, errored, level).items()},
    }
