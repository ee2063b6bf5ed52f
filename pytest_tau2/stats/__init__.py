"""Statistics of evaluation results: intervals, paired comparisons, the noise floor, runs needed.

Plain numbers in, plain values out: no records, no files, no pytest. A *task* is one scenario;
its *outcomes* are the values of its valid trials (1.0 / 0.0 for a verdict, the reward for tau2's
reward). Every resampling method resamples **tasks**, keeping a task's trials together (the
trials of one task are not independent draws: Miller 2024, "Adding Error Bars to Evals").

Nothing here imports scipy: Wilson's interval, McNemar's exact test and the normal quantiles are
closed form in plain Python (math, statistics.NormalDist); the bootstrap and the permutation test
draw with numpy, imported inside the function that resamples, exactly as scipy.stats would
(tests/unit/test_stats_reference.py compares every function with scipy's). A run whose summary
needs only Wilson's interval imports neither (docs/statistics.md, docs/speed.md).

- :mod:`.intervals`: :class:`Interval`, Wilson's interval for a rate over independent tasks,
  the task-clustered bootstrap for pass^k and mean outcomes.
- :mod:`.paired`: McNemar's exact test (one trial), the paired permutation test over tasks
  (several trials), the paired bootstrap interval of a difference, Holm's correction.
- :mod:`.noise`: flip rate per task, the share of unstable tasks, within- vs between-task
  variance, the noise floor, and how many tasks or trials a difference needs.
"""

from __future__ import annotations

from pytest_tau2.stats.intervals import DEFAULT_RESAMPLES, DEFAULT_SEED, Interval, cluster_bootstrap, wilson
from pytest_tau2.stats.noise import NoiseFloor, flip_rate, noise_floor, tasks_needed, trials_needed
from pytest_tau2.stats.paired import PairedTest, holm, mcnemar_exact, paired_bootstrap, paired_permutation

__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "Interval",
    "NoiseFloor",
    "PairedTest",
    "cluster_bootstrap",
    "flip_rate",
    "holm",
    "mcnemar_exact",
    "noise_floor",
    "paired_bootstrap",
    "paired_permutation",
    "tasks_needed",
    "trials_needed",
    "wilson",
]
