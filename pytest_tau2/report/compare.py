"""The paired comparison of two runs over the same tasks: per metric the difference B - A with a
paired interval, an exact or permutation test, the tasks that moved each way, and a verdict
(docs/statistics.md).

A *scope* is the run or one domain. Per scope and metric:

- **success rate**: per task, the share of its trials that passed (the headline's outcomes:
  infrastructure errors and stalls count as failures, "N/A" is left out). One 0/1 trial per
  task on both sides: McNemar's exact test; otherwise the paired permutation test over tasks;
- **tau2 reward**: per task, the share of valid trials with a reward of 1 (tau2 tasks only);
- **pass^k** (k >= 2, several trials): per task C(c, k) / C(n, k) of its valid trials.

The difference is the mean over tasks of the per-task difference (with equal trials per task,
the difference of the two rates), its interval the paired task bootstrap. With several domains
each domain's p-value is corrected by Holm's step-down method (over the domains, per metric); the
run's own comparison is one test and needs none.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_tau2.report import leaderboard, uncertainty
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.stats import DEFAULT_SEED, Interval, holm, paired_bootstrap, tasks_needed, trials_needed
from pytest_tau2.stats.intervals import pass_hat_k
from pytest_tau2.stats.noise import NoiseFloor, noise_floor
from pytest_tau2.stats.paired import paired_test

Outcomes = Mapping[str, Sequence[float]]
Verdict = Literal["B better", "A better", "no detectable difference"]


@dataclass
class MetricComparison:
    """One metric of one scope, A against B on the tasks both have."""

    name: str
    tasks: int
    a: float | None
    b: float | None
    difference: float
    """Mean over tasks of b - a (0-1)."""
    interval: Interval | None
    test: str
    p_value: float
    alpha: float
    a_only: list[str] = field(default_factory=list)
    """Tasks that did better in A (passed in A, failed in B with one trial)."""
    b_only: list[str] = field(default_factory=list)
    p_adjusted: float | None = None
    """Holm-adjusted p over the domains (domains of a several-domain comparison only)."""
    correction: str | None = None

    @property
    def p(self) -> float:
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    @property
    def verdict(self) -> Verdict:
        if self.tasks and self.p < self.alpha and self.difference != 0:
            return "B better" if self.difference > 0 else "A better"
        return "no detectable difference"

    def line(self) -> str:
        """``B better: +6.1 points [+1.8, +10.4], p = 0.006, 114 paired tasks``."""
        if not self.tasks:
            return "no paired tasks"
        text = f"{self.verdict}: {100 * self.difference:+.1f} points"
        if self.interval is not None:
            text += f" [{100 * self.interval.low:+.1f}, {100 * self.interval.high:+.1f}]"
        p = f"p = {self.p:.3g}" if self.p >= 0.001 else "p < 0.001"
        adjusted = f" ({self.correction})" if self.correction else ""
        return f"{text}, {p}{adjusted}, {self.tasks} paired tasks"

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.name,
            "tasks": self.tasks,
            "a": self.a,
            "b": self.b,
            "difference": self.difference,
            "interval": None if self.interval is None else self.interval.to_dict(),
            "test": self.test,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "correction": self.correction,
            "alpha": self.alpha,
            "verdict": self.verdict,
            "a_better_tasks": list(self.a_only),
            "b_better_tasks": list(self.b_only),
        }


def natural(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key: ``tau2_retail__9`` before ``tau2_retail__10``."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name))


def compare_outcomes(
    name: str,
    a: Outcomes,
    b: Outcomes,
    *,
    k: int | None = None,
    alpha: float = 0.05,
    level: float = uncertainty.DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> MetricComparison:
    """Compare per-task outcomes (task -> its trials' 0/1 outcomes) on the tasks both have:
    the share of passed trials per task, or its pass^k with ``k``."""
    need = k or 1
    tasks = sorted((t for t in a if t in b and len(a[t]) >= need and len(b[t]) >= need), key=natural)

    def value(outcomes: Sequence[float]) -> float:
        return pass_hat_k(outcomes, k) if k else sum(outcomes) / len(outcomes)

    va = [value(a[t]) for t in tasks]
    vb = [value(b[t]) for t in tasks]
    if not tasks:
        return MetricComparison(name, 0, None, None, 0.0, None, "none", 1.0, alpha)
    single = k is None and all(len(a[t]) == 1 and len(b[t]) == 1 for t in tasks)
    test = paired_test(va, vb, binary_single_trial=single, seed=seed)
    if k is None:
        rate_a = sum(sum(a[t]) for t in tasks) / sum(len(a[t]) for t in tasks)
        rate_b = sum(sum(b[t]) for t in tasks) / sum(len(b[t]) for t in tasks)
    else:
        rate_a, rate_b = sum(va) / len(va), sum(vb) / len(vb)
    return MetricComparison(
        name=name,
        tasks=len(tasks),
        a=rate_a,
        b=rate_b,
        difference=test.difference,
        interval=paired_bootstrap(va, vb, level=level, seed=seed),
        test=test.method,
        p_value=test.p_value,
        alpha=alpha,
        a_only=[t for t, x, y in zip(tasks, va, vb, strict=True) if x > y],
        b_only=[t for t, x, y in zip(tasks, va, vb, strict=True) if y > x],
    )


@dataclass
class ScopeComparison:
    scope: str
    """``run`` or a domain."""
    metrics: list[MetricComparison]
    noise_a: NoiseFloor | None = None
    noise_b: NoiseFloor | None = None
    power: dict[str, Any] | None = None

    @property
    def primary(self) -> MetricComparison:
        """The success rate: what the verdict line says."""
        return self.metrics[0]

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "verdict": self.primary.line(),
            "metrics": [m.to_dict() for m in self.metrics],
            "noise_a": None if self.noise_a is None else self.noise_a.to_dict(),
            "noise_b": None if self.noise_b is None else self.noise_b.to_dict(),
            "power": self.power,
        }


def compare_scope(
    scope: str,
    a: Sequence[ScenarioRecord],
    b: Sequence[ScenarioRecord],
    *,
    errored_a: Sequence[str] = (),
    errored_b: Sequence[str] = (),
    alpha: float = 0.05,
    level: float = uncertainty.DEFAULT_LEVEL,
    power: tuple[float, float] | None = None,
) -> ScopeComparison:
    """Every metric of one scope; ``power`` = (power, delta) adds the runs-needed estimate."""
    ha, hb = uncertainty.headline_outcomes(a, errored_a), uncertainty.headline_outcomes(b, errored_b)
    metrics = [compare_outcomes("success rate", ha, hb, alpha=alpha, level=level)]
    ta = uncertainty.valid_outcomes(leaderboard.tau2_reward_trials(a, errored_a))
    tb = uncertainty.valid_outcomes(leaderboard.tau2_reward_trials(b, errored_b))
    if ta and tb:
        metrics.append(compare_outcomes("tau2 reward", ta, tb, alpha=alpha, level=level))
    trials = min(leaderboard.trials_per_task(a), leaderboard.trials_per_task(b))
    sa = uncertainty.valid_outcomes(leaderboard.six_signal_trials(a, errored_a))
    sb = uncertainty.valid_outcomes(leaderboard.six_signal_trials(b, errored_b))
    for k in range(2, trials + 1):
        metrics.append(compare_outcomes(f"pass^{k}", sa, sb, k=k, alpha=alpha, level=level))
    result = ScopeComparison(scope, metrics)
    if trials > 1:
        result.noise_a = noise_floor(list(ha.values()), level=level)
        result.noise_b = noise_floor(list(hb.values()), level=level)
    if power is not None:
        result.power = runs_needed(ha, hb, result, power=power[0], delta=power[1], alpha=alpha)
    return result


def runs_needed(
    a: Outcomes, b: Outcomes, scope: ScopeComparison, *, power: float, delta: float, alpha: float
) -> dict[str, Any]:
    """How many paired tasks (at these trials), and how many trials (on these tasks), it takes to
    detect a difference of ``delta`` in success rate at ``alpha`` with ``power``, from the
    variance observed here."""
    tasks = sorted((t for t in a if t in b and a[t] and b[t]), key=natural)
    diffs = [sum(b[t]) / len(b[t]) - sum(a[t]) / len(a[t]) for t in tasks]
    out: dict[str, Any] = {"power": power, "delta": delta, "alpha": alpha, "tasks_now": len(tasks)}
    if len(diffs) < 2:
        return {**out, "tasks_needed": None, "trials_needed": None, "note": "fewer than 2 paired tasks"}
    mean = sum(diffs) / len(diffs)
    var_d = sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)
    out["tasks_needed"] = tasks_needed(var_d**0.5, delta, alpha=alpha, power=power)
    if scope.noise_a is None or scope.noise_b is None:
        out["trials_needed"] = None
        out["note"] = (
            "trials needed: run both with --tau2-trials 2 or more to separate trial noise from task differences"
        )
        return out
    k = min(min(len(a[t]), len(b[t])) for t in tasks)
    within = (scope.noise_a.within_task_variance + scope.noise_b.within_task_variance) / 2
    between = max(0.0, var_d - 2 * within / k)
    out["trials_needed"] = trials_needed(within, between, len(tasks), delta, alpha=alpha, power=power)
    if out["trials_needed"] is None:
        out["note"] = "no number of trials is enough on these tasks: their own differences hide the effect; add tasks"
    return out


def apply_holm(domains: Sequence[ScopeComparison]) -> str | None:
    """Holm-adjust each metric's p-values over the domains in place; the correction's name (None: one domain)."""
    if len(domains) < 2:
        return None
    name = f"Holm over {len(domains)} domains"
    names = {m.name for d in domains for m in d.metrics}
    for metric in sorted(names):
        found = [m for d in domains for m in d.metrics if m.name == metric and m.tasks]
        for m, adjusted in zip(found, holm([m.p_value for m in found]), strict=True):
            m.p_adjusted, m.correction = adjusted, name
    return name


def power_text(power: Mapping[str, Any]) -> str:
    """One line of the runs-needed estimate."""
    target = f"{100 * power['delta']:.1f} points at power {power['power']:g} (alpha {power['alpha']:g})"
    parts = []
    if power.get("tasks_needed") is not None:
        parts.append(f"about {power['tasks_needed']} paired tasks at these trials (have {power['tasks_now']})")
    if power.get("trials_needed") is not None:
        parts.append(f"{power['trials_needed']} trials per task on these {power['tasks_now']} tasks")
    text = f"to detect {target}: " + ("; ".join(parts) if parts else "no estimate")
    return text + (f" ({power['note']})" if power.get("note") else "")
