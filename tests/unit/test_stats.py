"""pytest_tau2.stats against published and hand-computed examples (docs/statistics.md)."""

from __future__ import annotations

import math

import pytest

from pytest_tau2.stats import (
    cluster_bootstrap,
    flip_rate,
    holm,
    mcnemar_exact,
    noise_floor,
    paired_bootstrap,
    paired_permutation,
    tasks_needed,
    trials_needed,
    wilson,
)
from pytest_tau2.stats.paired import paired_test

Z95 = 1.959963984540054


def _wilson_by_hand(s: int, n: int, z: float = Z95) -> tuple[float, float]:
    p = s / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_wilson_matches_the_formula_worked_by_hand() -> None:
    # 8 of 10: centre (0.8 + 0.19207) / 1.38415 = 0.71674, half-width 0.22658
    interval = wilson(8, 10)
    assert interval is not None
    assert (round(interval.low, 4), round(interval.high, 4)) == (0.4902, 0.9433)
    low, high = _wilson_by_hand(8, 10)
    assert interval.low == pytest.approx(low, abs=1e-12) and interval.high == pytest.approx(high, abs=1e-12)
    assert interval.method == "Wilson" and interval.level == 0.95 and interval.estimate == 0.8


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)],
)
def test_wilson_reproduces_newcombe_1998_table(successes: int, n: int, low: float, high: float) -> None:
    """Newcombe, "Two-sided confidence intervals for the single proportion", Stat Med 17:857 (1998),
    method 3 (score interval without continuity correction)."""
    interval = wilson(successes, n)
    assert interval is not None
    assert (round(interval.low, 4), round(interval.high, 4)) == (low, high)


def test_wilson_level_and_bad_input() -> None:
    narrow, wide = wilson(57, 114, 0.80), wilson(57, 114, 0.99)
    assert narrow is not None and wide is not None
    assert wide.low < narrow.low < 0.5 < narrow.high < wide.high
    assert wilson(0, 0) is None
    with pytest.raises(ValueError, match="confidence level"):
        wilson(1, 2, 95)
    with pytest.raises(ValueError, match="between 0 and n=2"):
        wilson(3, 2)


def test_mcnemar_exact_reproduces_fagerland_2013() -> None:
    """Fagerland, Lydersen, Laake, BMC Med Res Methodol 13:91 (2013), Table 1 (Bentur et al.):
    discordant pairs 1 and 7, exact conditional p = 0.070 = 2 * (1 + 8) / 2^8."""
    assert mcnemar_exact(1, 7) == pytest.approx(18 / 256, abs=1e-12)
    assert mcnemar_exact(7, 1) == mcnemar_exact(1, 7)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0


def test_mcnemar_on_agresti_presidential_approval() -> None:
    """Agresti, Categorical Data Analysis, table 10.1: 150 and 86 discordant; McNemar's z = 4.17,
    so the exact two-sided p sits well below 0.001 (the normal tail at 4.17 is 3.1e-5)."""
    p = mcnemar_exact(150, 86)
    assert 1e-5 < p < 1e-4


def test_paired_permutation_is_exact_on_few_tasks() -> None:
    # differences (b - a): +1, +1, +1, 0, -1. Zero drops out; of the 16 sign patterns of the other
    # four, 10 have |sum| >= 2 (the observed): p = 10/16.
    assert paired_permutation([0, 0, 0, 1, 1], [1, 1, 1, 1, 0]) == pytest.approx(10 / 16)
    assert paired_permutation([1, 0], [1, 0]) == 1.0
    with pytest.raises(ValueError, match="same length"):
        paired_permutation([1], [1, 0])


def test_paired_test_picks_mcnemar_for_one_trial_and_permutation_otherwise() -> None:
    a, b = [1, 0, 1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 1, 1, 1, 1]
    single = paired_test(a, b, binary_single_trial=True)
    assert (single.method, single.a_only, single.b_only) == ("McNemar exact", 1, 5)
    assert single.p_value == pytest.approx(mcnemar_exact(1, 5))
    several = paired_test([0.25, 0.5, 1.0], [0.75, 0.5, 1.0], binary_single_trial=False)
    assert several.method == "paired permutation over tasks" and several.p_value == 1.0  # one task differs


def test_holm_by_hand() -> None:
    # sorted 0.01, 0.03, 0.04 -> 3 * 0.01, 2 * 0.03, max(1 * 0.04, 0.06)
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


TASKS = [[1, 1, 0], [0, 0, 0], [1, 1, 1], [1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 1], [1, 1, 0]]


def test_cluster_bootstrap_with_a_fixed_seed_reproduces_its_numbers() -> None:
    mean = cluster_bootstrap(TASKS, "mean", seed=7)
    pass2 = cluster_bootstrap(TASKS, 2, seed=7)
    assert mean is not None and pass2 is not None
    assert mean.estimate == pytest.approx(14 / 24)
    assert pass2.estimate == pytest.approx((1 / 3 + 0 + 1 + 1 / 3 + 0 + 1 + 0 + 1 / 3) / 8)
    assert (round(mean.low, 4), round(mean.high, 4)) == (0.375, 0.7917)
    assert (round(pass2.low, 4), round(pass2.high, 4)) == (0.125, 0.6667)
    assert cluster_bootstrap(TASKS, "mean", seed=7) == mean  # same seed, same interval
    assert mean.method == "task bootstrap"


def test_cluster_bootstrap_keeps_a_tasks_trials_together() -> None:
    """Trials of a task that always pass or always fail are one piece of evidence, not K: the
    clustered interval is wider than Wilson's over trials treated as independent."""
    tasks = [[1.0] * 4] * 10 + [[0.0] * 4] * 10
    clustered = cluster_bootstrap(tasks, "mean")
    naive = wilson(40, 80)
    assert clustered is not None and naive is not None
    assert clustered.high - clustered.low > 1.3 * (naive.high - naive.low)


def test_cluster_bootstrap_edges() -> None:
    assert cluster_bootstrap([[1, 0]], "mean") is None  # one task: nothing to resample
    assert cluster_bootstrap([[1], [0, 1]], 2) is None  # a task with fewer than k trials
    same = cluster_bootstrap([[1, 1], [1, 1]], 2)
    assert same is not None and (same.low, same.high) == (1.0, 1.0)


def test_paired_bootstrap_brackets_the_difference() -> None:
    a = [1.0] * 60 + [0.0] * 54
    b = [1.0] * 50 + [0.0] * 10 + [1.0] * 24 + [0.0] * 30  # 10 broke, 24 fixed
    interval = paired_bootstrap(a, b, seed=3)
    assert interval is not None
    assert interval.estimate == pytest.approx(14 / 114)
    assert 0 < interval.low < 14 / 114 < interval.high
    assert interval == paired_bootstrap(a, b, seed=3)


def test_flip_rate_and_noise_floor_by_hand() -> None:
    assert flip_rate([1, 1, 0, 1]) == 0.25 and flip_rate([1, 0]) == 0.5 and flip_rate([0, 0, 0]) == 0.0
    noise = noise_floor([[1, 1, 0, 1], [0, 0, 0, 0], [1, 1, 1, 1], [1, 0, 1, 0]])
    assert noise is not None
    # variances 1/4, 0, 0, 1/3 -> within 7/48; task means' variance 0.18229 less (1/16 + 1/12) / 4
    assert noise.within_task_variance == pytest.approx(7 / 48)
    assert noise.between_task_variance == pytest.approx(0.546875 / 3 - (1 / 16 + 1 / 12) / 4)
    assert noise.floor == pytest.approx(Z95 * math.sqrt(2 * (1 / 16 + 1 / 12)) / 4)
    assert noise.single_trial_floor == pytest.approx(Z95 * math.sqrt(2 * (1 / 4 + 1 / 3)) / 4)
    assert (noise.tasks, noise.unstable_tasks, noise.unstable_share) == (4, 2, 0.5)
    assert noise_floor([[1], [0]]) is None


def test_runs_needed_by_hand() -> None:
    # ((1.95996 + 0.84162) * 0.3 / 0.05)^2 = 282.6
    assert tasks_needed(0.3, 0.05) == 283
    assert tasks_needed(0.0, 0.05) is None
    # 114 tasks, no true between-task spread: K >= 2 * 0.1 / (114 * 0.0025 / 7.849) = 5.5
    assert trials_needed(0.1, 0.0, 114, 0.05) == 6
    assert trials_needed(0.1, 0.5, 114, 0.05) is None  # the tasks' own differences hide 5 points
    with pytest.raises(ValueError, match="delta"):
        tasks_needed(0.3, 5)
