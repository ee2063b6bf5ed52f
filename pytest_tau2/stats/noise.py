"""The noise floor of a run with several trials per task, and how much data a difference needs.

- **Flip rate** of a task: the share of its trials that disagree with its majority (0 for a task
  that always passes or always fails, 0.5 at most). A task with a flip rate above 0 is *unstable*.
- **Within-task variance**: the mean over tasks of the variance of a task's own trials (how much
  the same task moves between tries); **between-task variance**: the variance of the tasks' true
  success chances (how different the tasks are), by the method of moments: the variance of the
  task means less the part the trials' own noise puts in it, never below 0.
- **Noise floor**: the difference in success rate that two runs of the same agent on the same
  tasks exceed with probability 1 - level from trial noise alone: z * sqrt(2 * sum(var_i / n_i)) / T.
  A difference smaller than it is indistinguishable from a rerun.
- **Tasks / trials needed**: the usual normal-approximation sample size of a paired comparison,
  n = ((z_{1-alpha/2} + z_power) * sd / delta)^2, from the observed variance of the per-task
  differences (tasks) or its within- and between-task parts (trials at a fixed task set).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_tau2.stats.intervals import check_level, normal_quantile


def flip_rate(outcomes: Sequence[float]) -> float:
    """The share of a task's trials that disagree with its majority verdict (0/1 outcomes)."""
    n = len(outcomes)
    if not n:
        raise ValueError("a flip rate needs at least one trial")
    passed = sum(1 for value in outcomes if value >= 1.0)
    return min(passed, n - passed) / n


def _variance(values: Sequence[float]) -> float:
    """Sample variance (n - 1 in the denominator)."""
    n = len(values)
    mean = sum(values) / n
    return sum((v - mean) ** 2 for v in values) / (n - 1)


def _z(p: float) -> float:
    return normal_quantile(p)


@dataclass(frozen=True)
class NoiseFloor:
    """The noise of one scope (a domain, the run) measured from tasks with at least 2 trials."""

    tasks: int
    unstable_tasks: int
    within_task_variance: float
    between_task_variance: float
    floor: float
    """The difference (0-1) two identical runs with these trials exceed with probability 1 - level."""
    single_trial_floor: float
    """The same for one trial per task (a single-run comparison on these tasks)."""
    level: float

    @property
    def unstable_share(self) -> float:
        return self.unstable_tasks / self.tasks if self.tasks else 0.0

    def to_dict(self) -> dict[str, float | int]:
        return {
            "tasks": self.tasks,
            "unstable_tasks": self.unstable_tasks,
            "unstable_share": self.unstable_share,
            "within_task_variance": self.within_task_variance,
            "between_task_variance": self.between_task_variance,
            "noise_floor": self.floor,
            "single_trial_noise_floor": self.single_trial_floor,
            "level": self.level,
        }

    def text(self) -> str:
        return (
            f"{self.unstable_tasks} of {self.tasks} tasks unstable ({100 * self.unstable_share:.0f}%); "
            f"noise floor ±{100 * self.floor:.1f} points at these trials, ±{100 * self.single_trial_floor:.1f} "
            f"with one trial; variance within tasks {self.within_task_variance:.3f}, between tasks "
            f"{self.between_task_variance:.3f}"
        )


def noise_floor(tasks: Sequence[Sequence[float]], *, level: float = 0.95) -> NoiseFloor | None:
    """The noise floor of the tasks that have at least 2 trials (None when none has)."""
    check_level(level)
    several = [list(t) for t in tasks if len(t) >= 2]
    if not several:
        return None
    count = len(several)
    variances = [_variance(t) for t in several]
    within = sum(variances) / count
    means = [sum(t) / len(t) for t in several]
    spread = _variance(means) if count > 1 else 0.0
    between = max(0.0, spread - sum(v / len(t) for v, t in zip(variances, several, strict=True)) / count)
    z = _z((1 + level) / 2)
    floor = z * math.sqrt(2 * sum(v / len(t) for v, t in zip(variances, several, strict=True))) / count
    single = z * math.sqrt(2 * sum(variances)) / count
    unstable = sum(1 for t in several if flip_rate(t) > 0)
    return NoiseFloor(count, unstable, within, between, floor, single, level)


def tasks_needed(sd_difference: float, delta: float, *, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Paired tasks needed to detect a mean difference ``delta`` (0-1) at ``alpha`` (two-sided) with
    ``power``, when a task's difference has standard deviation ``sd_difference``. None when
    the observed differences have no spread (no estimate can be made from them)."""
    check_effect(delta, alpha, power)
    if sd_difference <= 0:
        return None
    z = _z(1 - alpha / 2) + _z(power)
    return max(2, math.ceil((z * sd_difference / delta) ** 2))


def trials_needed(
    within_variance: float,
    between_variance: float,
    tasks: int,
    delta: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int | None:
    """Trials per task (each run) needed to detect ``delta`` on ``tasks`` paired tasks, when one
    trial's outcome varies by ``within_variance`` around its task's chance and the tasks' true
    differences vary by ``between_variance``. None when no number of trials is enough: the
    tasks' own differences already hide ``delta`` (more tasks are needed, not more trials)."""
    check_effect(delta, alpha, power)
    if tasks < 1:
        raise ValueError(f"tasks must be at least 1; got {tasks}")
    z = _z(1 - alpha / 2) + _z(power)
    room = tasks * delta**2 / z**2 - between_variance
    if room <= 0:
        return None
    return max(1, math.ceil(2 * within_variance / room))


def check_effect(delta: float, alpha: float, power: float) -> None:
    if not 0 < delta <= 1:
        raise ValueError(f"delta is a difference in rate between 0 and 1 (0.05: 5 points); got {delta!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1; got {alpha!r}")
    if not 0 < power < 1:
        raise ValueError(f"power must be between 0 and 1; got {power!r}")
