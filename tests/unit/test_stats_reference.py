"""pytest_tau2.stats against scipy.stats, which the package no longer imports.

Wilson's interval, McNemar's exact test and the normal quantiles are written in plain Python, the
bootstrap and the permutation test on numpy (docs/statistics.md, "Why no scipy"). scipy stays a
test dependency so that these tests can hold every function to the reference implementation:
closed forms to ~1e-15, the resampling methods bit for bit (same generator, same draws).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy.special import ndtri
from scipy.stats import binomtest, bootstrap, permutation_test

from pytest_tau2.stats import cluster_bootstrap, mcnemar_exact, paired_bootstrap, paired_permutation, wilson
from pytest_tau2.stats.intervals import DEFAULT_RESAMPLES, DEFAULT_SEED, normal_quantile, pass_hat_k
from pytest_tau2.stats.paired import PERMUTATIONS


@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99, 0.995])
def test_wilson_equals_scipys_binomtest_interval(level: float) -> None:
    for n in [*range(1, 30), 50, 99, 114, 263, 1000]:
        for successes in sorted({*range(min(n, 12) + 1), *range(max(0, n - 12), n + 1), n // 3, n // 2}):
            mine = wilson(successes, n, level)
            theirs = binomtest(successes, n).proportion_ci(confidence_level=level, method="wilson")
            assert mine is not None
            assert mine.low == pytest.approx(float(theirs.low), abs=1e-15), (successes, n)
            assert mine.high == pytest.approx(float(theirs.high), abs=1e-15), (successes, n)


def test_normal_quantile_equals_scipys_ndtri() -> None:
    for p in [0.5, 0.6, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 1e-6, 0.2]:
        assert normal_quantile(p) == pytest.approx(float(ndtri(p)), rel=1e-15, abs=1e-15)


def test_mcnemar_exact_equals_scipys_binomtest() -> None:
    for n in [*range(0, 40), 64, 114, 150, 236]:
        for b_only in sorted({*range(min(n, 10) + 1), n // 3, n // 2, n}):
            a_only = n - b_only
            expected = 1.0 if n == 0 else float(binomtest(b_only, n, 0.5).pvalue)
            assert mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-12, abs=1e-300), (a_only, b_only)


def _scipy_cluster_bootstrap(tasks: list[list[float]], statistic: str | int) -> tuple[float, float]:
    if statistic == "mean":
        data: tuple[np.ndarray, ...] = (
            np.array([sum(t) for t in tasks], dtype=float),
            np.array([len(t) for t in tasks], dtype=float),
        )
    else:
        assert isinstance(statistic, int)
        data = (np.array([pass_hat_k(t, statistic) for t in tasks], dtype=float),)

    def stat(*arrays: np.ndarray, axis: int = -1) -> np.ndarray:
        if len(arrays) == 2:
            return np.asarray(arrays[0].sum(axis=axis) / arrays[1].sum(axis=axis))
        return np.asarray(arrays[0].mean(axis=axis))

    result = bootstrap(
        data, stat, paired=True, vectorized=True, n_resamples=DEFAULT_RESAMPLES, confidence_level=0.95,
        method="percentile", rng=np.random.default_rng(DEFAULT_SEED),
    )  # fmt: skip
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def test_cluster_bootstrap_is_scipys_bit_for_bit() -> None:
    draw = random.Random(7)
    compared = 0
    for _ in range(25):
        trials = draw.randint(1, 4)
        tasks = [[float(draw.random() < 0.7) for _ in range(trials)] for _ in range(draw.randint(3, 120))]
        for statistic in ("mean", 1, trials):
            mine = cluster_bootstrap(tasks, statistic)  # type: ignore[arg-type]
            assert mine is not None
            if mine.low == mine.high == mine.estimate:  # every task alike: no resampling, scipy would warn
                continue
            assert (mine.low, mine.high) == _scipy_cluster_bootstrap(tasks, statistic)
            compared += 1
    assert compared > 50


def test_paired_bootstrap_is_scipys_bit_for_bit() -> None:
    draw = random.Random(11)
    for _ in range(20):
        n = draw.randint(2, 120)
        a = [float(draw.random() < 0.6) for _ in range(n)]
        b = [draw.choice([0.0, 0.25, 0.5, 1.0]) for _ in range(n)]
        mine = paired_bootstrap(a, b)
        assert mine is not None
        d = np.array([y - x for x, y in zip(a, b, strict=True)])
        if np.all(d == d[0]):
            continue
        theirs = bootstrap(
            (d,), lambda x, axis=-1: x.mean(axis=axis), vectorized=True, n_resamples=DEFAULT_RESAMPLES,
            confidence_level=0.95, method="percentile", rng=np.random.default_rng(DEFAULT_SEED),
        ).confidence_interval  # fmt: skip
        assert (mine.low, mine.high) == (float(theirs.low), float(theirs.high))


@pytest.mark.parametrize("size", [2, 5, 9, 13, 14, 30, 114])
def test_paired_permutation_is_scipys_bit_for_bit(size: int) -> None:
    """Exact up to 13 differing tasks (2^13 <= 9,999 sign assignments), random flips beyond."""
    draw = random.Random(size)
    for _ in range(3):
        a = [draw.choice([0.0, 0.5, 1.0]) for _ in range(size)]
        b = [draw.choice([0.0, 0.5, 1.0]) for _ in range(size)]
        d = np.array([y - x for x, y in zip(a, b, strict=True) if y != x])
        if len(d) < 2:
            continue
        theirs = permutation_test(
            (d, np.zeros_like(d)), lambda x, y, axis=-1: (x - y).mean(axis=axis), permutation_type="samples",
            vectorized=True, n_resamples=PERMUTATIONS, alternative="two-sided",
            rng=np.random.default_rng(DEFAULT_SEED),
        )  # fmt: skip
        assert paired_permutation(a, b) == float(min(1.0, theirs.pvalue))
