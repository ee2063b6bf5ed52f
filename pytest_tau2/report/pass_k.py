"""pass^k over trials: the probability that k trials of a task, drawn without replacement from
its valid trials, all succeed, averaged over tasks.

Per task with n valid trials of which c succeeded: pass^k = C(c, k) / C(n, k) (Yao et al. 2024,
the tau-bench paper; upstream ``tau2.metrics.agent_metrics`` computes the same). Rules, as
upstream at the pin applies them (shared tau2-reference.md sections 5.3 and 5.7):

- a trial that ended in an infrastructure error is not a valid trial: it is left out of n for
  its task and counted apart (never a failure);
- a task none of whose trials is valid does not take part at all (upstream drops those rows
  before grouping by task);
- pass^k is reported for k from 1 up to the smallest n among the tasks that take part; above
  that it is None, and the tasks with fewer than K valid trials are named. Upstream lowers its
  maximum k the same way (``max_k = min trials per task``) rather than averaging over a
  changing set of tasks, which would make pass^k for different k incomparable;
- ``average`` is the mean outcome over valid trials (upstream's ``avg_reward``); for a 0/1
  outcome it equals pass^1 when every task has the same number of valid trials.

A trial whose outcome is None (a six-signal verdict of "N/A": no applicable signal) is neither
a success nor a failure: it is left out of n like an infrastructure error, counted apart.

Pure: plain records in, plain values out. No pytest, no I/O.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Trial:
    """One trial of one task: its outcome (True/False, None: no verdict) or an infrastructure error."""

    task: str
    domain: str
    success: bool | None
    infrastructure_error: bool = False


def pass_hat_k(n: int, c: int, k: int) -> float:
    """C(c, k) / C(n, k): the chance that k of n trials, c of them successful, all succeed."""
    if not 0 <= c <= n:
        raise ValueError(f"successes must be between 0 and the number of trials {n}; got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of valid trials {n}; got {k}")
    return math.comb(c, k) / math.comb(n, k)


@dataclass
class PassK:
    """pass^k of one scope (a domain, or the whole run)."""

    trials_per_task: int
    """K: the number of trials each task was meant to have (``--tau2-trials``)."""
    values: dict[int, float | None]
    """k -> pass^k for k = 1..K (None above :attr:`max_k`)."""
    average: float | None
    """Mean outcome over valid trials (None when no trial is valid)."""
    max_k: int
    """The largest k reported: the smallest number of valid trials among taking-part tasks."""
    tasks: int
    """Tasks with at least one valid trial (the ones averaged over)."""
    trials: int
    valid_trials: int
    infrastructure_errors: int
    not_applicable: int
    short_tasks: list[str] = field(default_factory=list)
    """Tasks with at least one but fewer than K valid trials."""
    lost_tasks: list[str] = field(default_factory=list)
    """Tasks with no valid trial at all (left out of every average)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "trials_per_task": self.trials_per_task,
            "pass_hat_k": {str(k): v for k, v in self.values.items()},
            "average": self.average,
            "max_k": self.max_k,
            "tasks": self.tasks,
            "trials": self.trials,
            "valid_trials": self.valid_trials,
            "infrastructure_errors": self.infrastructure_errors,
            "not_applicable": self.not_applicable,
            "short_tasks": list(self.short_tasks),
            "lost_tasks": list(self.lost_tasks),
        }

    def values_text(self) -> str:
        """``pass^1 0.750, pass^2 0.500, pass^3 n/a``."""
        return ", ".join(f"pass^{k} {'n/a' if v is None else f'{v:.3f}'}" for k, v in self.values.items())

    def caveats(self) -> str:
        """What was left out, in words; empty when every trial was valid."""
        parts = []
        if self.infrastructure_errors:
            parts.append(f"{self.infrastructure_errors} of {self.trials} trials lost to infrastructure errors")
        if self.not_applicable:
            parts.append(f"{self.not_applicable} of {self.trials} trials without a verdict (N/A)")
        if self.short_tasks:
            noun = "task has" if len(self.short_tasks) == 1 else "tasks have"
            parts.append(f"{len(self.short_tasks)} {noun} fewer than {self.trials_per_task} valid trials")
        if self.lost_tasks:
            noun = "task has" if len(self.lost_tasks) == 1 else "tasks have"
            parts.append(f"{len(self.lost_tasks)} {noun} no valid trial")
        if parts and self.max_k < self.trials_per_task:
            parts.append(f"pass^k reported up to k={self.max_k}")
        return "; ".join(parts)


def pass_k(trials: Iterable[Trial], trials_per_task: int) -> PassK:
    """pass^k for k = 1..``trials_per_task`` over ``trials`` (one scope)."""
    if trials_per_task < 1:
        raise ValueError(f"trials_per_task must be at least 1; got {trials_per_task}")
    per_task: dict[str, list[bool]] = defaultdict(list)
    seen: dict[str, None] = {}
    total = infra = not_applicable = 0
    for trial in trials:
        total += 1
        seen.setdefault(trial.task, None)
        if trial.infrastructure_error:
            infra += 1
        elif trial.success is None:
            not_applicable += 1
        else:
            per_task[trial.task].append(trial.success)
    counted = {task: outcomes for task, outcomes in per_task.items() if outcomes}
    lost = [task for task in seen if task not in counted]
    short = [task for task, outcomes in counted.items() if len(outcomes) < trials_per_task]
    max_k = min((len(outcomes) for outcomes in counted.values()), default=0)
    max_k = min(max_k, trials_per_task)
    values: dict[int, float | None] = {}
    for k in range(1, trials_per_task + 1):
        if k > max_k:
            values[k] = None
            continue
        per = [pass_hat_k(len(outcomes), sum(outcomes), k) for outcomes in counted.values()]
        values[k] = sum(per) / len(per)
    flat = [outcome for outcomes in counted.values() for outcome in outcomes]
    return PassK(
        trials_per_task=trials_per_task,
        values=values,
        average=sum(flat) / len(flat) if flat else None,
        max_k=max_k,
        tasks=len(counted),
        trials=total,
        valid_trials=len(flat),
        infrastructure_errors=infra,
        not_applicable=not_applicable,
        short_tasks=short,
        lost_tasks=lost,
    )


def pass_k_by_domain(trials: Sequence[Trial], trials_per_task: int) -> dict[str, PassK]:
    """pass^k per domain (sorted by name)."""
    domains = sorted({trial.domain for trial in trials})
    return {domain: pass_k((t for t in trials if t.domain == domain), trials_per_task) for domain in domains}
