"""Paired comparison of two runs over the same tasks: is B's difference from A more than noise?

When both runs saw the same tasks, the question is about the per-task differences, not about
two separate rates: a hard task is hard for both, and pairing takes that shared difficulty out
(Miller 2024, "Adding Error Bars to Evals", section 4). Per task, ``a`` and ``b`` are one number
each (its success share over its trials, its pass^k, its mean reward).

- :func:`mcnemar_exact`: one trial per task and a 0/1 outcome. Only the discordant tasks (passed
  in one run, failed in the other) say anything; under "no difference" each is equally likely to
  go either way, so the count that went B's way is Binomial(discordant, 1/2): the exact two-sided
  binomial test, McNemar's exact (conditional) test, summed in whole numbers (math.comb): the
  p-value scipy.stats.binomtest gives, without importing scipy.
- :func:`paired_permutation`: several trials, or a non-0/1 outcome. Under "no difference" the
  labels A and B of a task are exchangeable, so each task's difference is as likely to have
  either sign: the sign-flip permutation test of the mean difference, exact when the tasks that
  differ are few (2^n <= 9,999), else 9,999 random flips with a fixed seed. On numpy, imported
  when it runs; flips and p-value are those of scipy.stats.permutation_test
  (``permutation_type="samples"``) with the same generator.
- :func:`paired_bootstrap`: the interval of the mean difference, resampling tasks (each with
  both of its runs' outcomes); scipy.stats.bootstrap's draws, on numpy.
- :func:`holm`: Holm's step-down correction when one comparison is tested in several domains.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_tau2.stats.intervals import DEFAULT_RESAMPLES, DEFAULT_SEED, Interval, check_level, percentile_bootstrap

PERMUTATIONS = 9_999
"""Random sign flips of the permutation test when the exact test would need more."""


@dataclass(frozen=True)
class PairedTest:
    """A test of "B differs from A" on paired tasks."""

    difference: float
    """Mean over tasks of b - a."""
    p_value: float
    method: str
    a_only: int = 0
    """Tasks where A did better than B (passed in A, failed in B with one trial)."""
    b_only: int = 0
    """Tasks where B did better than A."""


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact p-value of McNemar's test: ``a_only`` tasks passed only in A, ``b_only`` only in B."""
    if a_only < 0 or b_only < 0:
        raise ValueError(f"discordant counts must be non-negative; got {a_only} and {b_only}")
    if a_only == b_only:  # also none discordant: the observed count is the most likely one
        return 1.0
    # Binomial(n, 1/2) is symmetric: the outcomes at most as likely as the observed one are the
    # two tails beyond min(a, b), each sum(C(n, i), i <= min) / 2^n. Whole numbers, one division.
    n = a_only + b_only
    tail = sum(math.comb(n, i) for i in range(min(a_only, b_only) + 1))
    return min(1.0, 2 * tail / (1 << n))


def _pairs(a: Sequence[float], b: Sequence[float]) -> list[float]:
    if len(a) != len(b):
        raise ValueError(f"paired samples must have the same length; got {len(a)} and {len(b)}")
    return [float(y) - float(x) for x, y in zip(a, b, strict=True)]


def paired_permutation(
    a: Sequence[float], b: Sequence[float], *, resamples: int = PERMUTATIONS, seed: int = DEFAULT_SEED
) -> float:
    """Two-sided p-value of the sign-flip permutation test of mean(b - a) over tasks."""
    differences = [d for d in _pairs(a, b) if d != 0.0]  # a zero flips to itself: it changes no statistic's rank
    if len(differences) < 2:  # none, or one: both of its signs are as extreme as the observed
        return 1.0
    import numpy as np

    d = np.array(differences)
    n = len(d)
    observed = d.mean()
    if 2**n <= resamples:  # every assignment of signs: exact
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        adjustment, count = 0, 2**n
    else:  # as scipy draws them: each task's pair (b - a, 0) in a random order, per resample
        order = np.random.default_rng(seed).permuted(np.tile(np.arange(2), (resamples, n, 1)), axis=-1)
        signs = np.where(order[..., 0] == 0, 1.0, -1.0)
        adjustment, count = 1, resamples
    null = (signs * d).mean(axis=-1)
    slack = abs(np.finfo(float).eps * 100 * observed)  # scipy's tolerance for ties with the observed value
    below = (np.count_nonzero(null <= observed + slack) + adjustment) / (count + adjustment)
    above = (np.count_nonzero(null >= observed - slack) + adjustment) / (count + adjustment)
    return float(min(1.0, 2 * min(below, above)))


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Interval | None:
    """The percentile interval of mean(b - a), resampling tasks with replacement (None below 2 tasks)."""
    check_level(level)
    differences = _pairs(a, b)
    if len(differences) < 2:
        return None
    estimate = sum(differences) / len(differences)
    method = "paired task bootstrap"
    if all(d == differences[0] for d in differences):
        return Interval(estimate, estimate, estimate, level, method)
    import numpy as np

    def mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(x.mean(axis=axis))

    low, high = percentile_bootstrap((np.array(differences),), mean, np.random.default_rng(seed), resamples, level)
    return Interval(estimate, low, high, level, method)


def paired_test(
    a: Sequence[float], b: Sequence[float], *, binary_single_trial: bool, seed: int = DEFAULT_SEED
) -> PairedTest:
    """McNemar's exact test when every task has one 0/1 outcome per run, else the permutation test."""
    differences = _pairs(a, b)
    a_only = sum(1 for d in differences if d < 0)
    b_only = sum(1 for d in differences if d > 0)
    mean = sum(differences) / len(differences) if differences else 0.0
    if binary_single_trial:
        return PairedTest(mean, mcnemar_exact(a_only, b_only), "McNemar exact", a_only, b_only)
    return PairedTest(mean, paired_permutation(a, b, seed=seed), "paired permutation over tasks", a_only, b_only)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (same order as given): the smallest of m p-values is
    multiplied by m, the next by m - 1, ..., each kept at least as large as the one before and at
    most 1. Controls the chance of any false "better"/"worse" across the m tests at alpha."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[i])))
        adjusted[i] = running
    return adjusted
