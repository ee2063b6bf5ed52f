"""Intervals for one run: Wilson's for a rate over independent tasks, the task-clustered bootstrap
for pass^k and for a mean over trials.

- **Wilson**: the score interval of a binomial proportion (Newcombe 1998, method 3), closed form
  in plain Python: it gives what scipy.stats.binomtest(...).proportion_ci(method="wilson") gives
  (tests/unit/test_stats_reference.py compares them to 1e-15). Unlike the normal (CLT) interval
  it stays inside [0, 1] and keeps close to its nominal coverage at 50-114 tasks and rates near
  0 or 1, where the CLT interval is too narrow (Bowyer, Aitchison, Ivanova 2025). It assumes
  independent items: one trial per task.
- **Task-clustered bootstrap** (percentile method, on numpy, imported when a bootstrap runs):
  tasks are drawn with replacement, each with all of its trials, and the statistic recomputed on
  each draw. With several trials per task the trials of a task are correlated (the same task is
  hard every time), so a rate over trials is not a binomial over trials; resampling tasks keeps
  that. The draws are those scipy.stats.bootstrap makes with the same generator, so the interval
  is scipy's to the last bit. The seed is fixed (:data:`DEFAULT_SEED`), so the same results give
  the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np

DEFAULT_SEED = 20_250_301
"""Seed of every resampling unless one is given: the same run always gets the same interval."""
DEFAULT_RESAMPLES = 2_000
"""Bootstrap resamples: the interval's ends move by about 0.2 points between seeds at 114 tasks."""

Statistic = Literal["mean"] | int
"""``"mean"``: the mean outcome over all valid trials; an int k: pass^k (mean over tasks of C(c,k)/C(n,k))."""


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval at ``level`` (0.95: 95%), and the method that made it."""

    estimate: float
    low: float
    high: float
    level: float
    method: str

    def text(self, *, percent: bool = True) -> str:
        """``72.8% [64.1, 80.0]`` (percent) or ``0.734 [0.650, 0.812]``."""
        if percent:
            return f"{100 * self.estimate:.1f}% [{100 * self.low:.1f}, {100 * self.high:.1f}]"
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}]"

    def label(self) -> str:
        """``95% Wilson``: the level and the method, for a legend."""
        return f"{level_text(self.level)} {self.method}"

    def to_dict(self) -> dict[str, float | str]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "level": self.level,
                "method": self.method}  # fmt: skip


def level_text(level: float) -> str:
    """``95%`` for 0.95, ``99.5%`` for 0.995."""
    return f"{100 * level:g}%"


def check_level(level: float) -> float:
    """The level itself, or a ValueError naming it when it is not strictly between 0 and 1."""
    if not (isinstance(level, int | float) and 0 < level < 1 and math.isfinite(level)):
        raise ValueError(f"a confidence level must be between 0 and 1 (e.g. 0.95); got {level!r}")
    return float(level)


def wilson(successes: int, n: int, level: float = 0.95) -> Interval | None:
    """Wilson's score interval of ``successes`` out of ``n`` independent items (None when n is 0)."""
    check_level(level)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n={n}; got {successes}")
    if n == 0:
        return None
    z = normal_quantile(0.5 + 0.5 * level)
    p = successes / n
    denominator = 2 * (n + z**2)
    centre = (2 * n * p + z**2) / denominator
    half = z / denominator * math.sqrt(4 * n * p * (1 - p) + z**2)
    low = 0.0 if successes == 0 else centre - half
    high = 1.0 if successes == n else centre + half
    return Interval(p, low, high, level, "Wilson")


def normal_quantile(p: float) -> float:
    """The standard normal's quantile (scipy's norm.ppf / ndtri; the stdlib's, equal to ~1e-16)."""
    return NormalDist().inv_cdf(p)


def pass_hat_k(outcomes: Sequence[float], k: int) -> float:
    """C(c, k) / C(n, k) of one task's 0/1 outcomes (c successes of n)."""
    n, c = len(outcomes), sum(1 for value in outcomes if value >= 1.0)
    return math.comb(c, k) / math.comb(n, k)


def point(tasks: Sequence[Sequence[float]], statistic: Statistic) -> float:
    """The statistic on the tasks as they are (the estimate the bootstrap brackets)."""
    if statistic == "mean":
        return sum(sum(t) for t in tasks) / sum(len(t) for t in tasks)
    return sum(pass_hat_k(t, statistic) for t in tasks) / len(tasks)


def cluster_bootstrap(
    tasks: Sequence[Sequence[float]],
    statistic: Statistic = "mean",
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Interval | None:
    """The percentile interval of ``statistic`` over ``tasks`` (each: its valid trials' outcomes),
    resampling tasks with replacement, each with all its trials. None with fewer than 2 tasks
    (nothing to resample), or for pass^k when a task has fewer than k trials."""
    check_level(level)
    tasks = [list(t) for t in tasks if len(t)]
    if len(tasks) < 2:
        return None
    if statistic != "mean" and (statistic < 1 or min(len(t) for t in tasks) < statistic):
        return None
    import numpy as np

    rng = np.random.default_rng(seed)
    estimate = point(tasks, statistic)
    method = "task bootstrap"
    if statistic == "mean":
        sums = np.array([sum(t) for t in tasks], dtype=float)
        counts = np.array([len(t) for t in tasks], dtype=float)
        data: tuple[np.ndarray, ...] = (sums, counts)
    else:
        data = (np.array([pass_hat_k(t, statistic) for t in tasks], dtype=float),)

    def stat(*arrays: np.ndarray, axis: int = -1) -> np.ndarray:
        if len(arrays) == 2:  # the pooled mean over trials: successes / trials of the drawn tasks
            return np.asarray(arrays[0].sum(axis=axis) / arrays[1].sum(axis=axis))
        return np.asarray(arrays[0].mean(axis=axis))  # pass^k: the mean of the drawn tasks' pass^k

    if _constant(data):
        return Interval(estimate, estimate, estimate, level, method)
    low, high = percentile_bootstrap(data, stat, rng, resamples, level)
    return Interval(estimate, low, high, level, method)


def percentile_bootstrap(
    data: tuple[np.ndarray, ...], statistic: Any, rng: np.random.Generator, resamples: int, level: float
) -> tuple[float, float]:
    """The percentile interval of ``statistic`` over paired resamples of ``data`` (arrays of one
    length: items drawn with replacement, every array at the same draws). It draws and computes as
    scipy.stats.bootstrap(data, statistic, paired=True, vectorized=True, method="percentile")
    does with the same generator: one (resamples, n) matrix of indices, the statistic along the
    last axis, linear quantiles at (1 - level) / 2 and 1 - (1 - level) / 2."""
    import numpy as np

    n = len(data[0])
    draws = rng.integers(0, n, (resamples, n), dtype=np.int64)
    values = np.asarray(statistic(*(array[..., draws] for array in data), axis=-1), dtype=float)
    alpha = (1 - level) / 2
    low, high = linear_quantiles(values, np.array([alpha, 1 - alpha]))
    return float(low), float(high)


def linear_quantiles(values: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Quantiles ``p`` of ``values`` by Hyndman and Fan's method 7 (linear interpolation between
    order statistics), in the arithmetic of scipy.stats.quantile(method="linear"), so that the
    bootstrap's ends match scipy's bit for bit (numpy's quantile may differ in the last bit)."""
    import numpy as np

    ordered = np.sort(values)
    n = len(ordered)
    position = p * n + (1 - p)
    above = position // 1
    below = above - 1
    fraction = position % 1
    fraction[below < 0] = 0
    below = np.clip(below, 0.0, n - 1).astype(np.int64)
    above = np.clip(above, 0.0, n - 1).astype(np.int64)
    return np.asarray((1 - fraction) * ordered[below] + fraction * ordered[above])


def _constant(data: tuple[Any, ...]) -> bool:
    """Every task the same (all passed, all failed): every resample gives the estimate."""
    import numpy as np

    first = np.asarray(data[0])
    if len(data) == 1:
        return bool(np.all(first == first[0]))
    ratio = first / np.asarray(data[1])  # every resample of equal per-task means has that mean
    return bool(np.all(ratio == ratio[0]))
