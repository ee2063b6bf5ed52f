"""The leaderboard-comparable part of the run summary: tau2's reward and pass^k over trials.

Reads the per-item result records (:mod:`pytest_tau2.report.record`; metrics.json objects are
read into records) and the ids of items that left no result, and gives the lines of the terminal
summary / all_summary.txt and the ``pass_hat_k`` block of all_metrics.json, for both verdicts:

- the six-signal verdict (``is_successful``; "N/A" items have no verdict and are left out);
- tau2's reward (``tau2_reward``: only tau2 tasks have one; success is a reward of 1.0).

An item with an infrastructure error, or one that ended in an error before producing any
result, is not a valid trial: it is left out of n for its task and counted apart
(:mod:`pytest_tau2.report.pass_k`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_tau2.report.pass_k import PassK, Trial, pass_k, pass_k_by_domain
from pytest_tau2.report.record import ScenarioRecord, read_records
from pytest_tau2.scenario.trial_ids import split_trial_id
from pytest_tau2.scoring.tau2_signal import TAU2_REWARD

Results = Iterable[ScenarioRecord | Mapping[str, object]]
"""Result records, or metrics.json objects (read as records)."""

REWARD_TOLERANCE = 1e-6
"""Upstream counts a reward as a success when it is within 1e-6 of 1.0."""


def _domain(name: str) -> str:
    return name.split("__", 1)[0]


def _lost(errored: Iterable[str]) -> list[tuple[str, str]]:
    """(task, domain) of every item that left no result."""
    return [(split_trial_id(item)[0], _domain(item)) for item in errored]


def six_signal_trials(metrics: Results, errored: Iterable[str] = ()) -> list[Trial]:
    trials = []
    for m in read_records(metrics):
        verdict = m.is_successful
        infra = bool(m.infrastructure_error)
        trials.append(Trial(m.scenario, m.domain, verdict if isinstance(verdict, bool) else None, infra))
    trials += [Trial(task, domain, None, infrastructure_error=True) for task, domain in _lost(errored)]
    return trials


def tau2_reward_trials(metrics: Results, errored: Iterable[str] = ()) -> list[Trial]:
    """Trials of tau2 tasks only (the items that have, or would have had, a tau2 reward)."""
    trials = []
    for m in read_records(metrics):
        if m.tau2_id is None:
            continue
        reward = m.signal(TAU2_REWARD)
        infra = bool(m.infrastructure_error) or reward is None
        success = reward is not None and abs(float(reward) - 1.0) <= REWARD_TOLERANCE
        trials.append(Trial(m.scenario, m.domain, None if infra else success, infra))
    trials += [
        Trial(task, domain, None, infrastructure_error=True)
        for task, domain in _lost(errored)
        if domain.startswith("tau2_")
    ]
    return trials


def prompts_of(record: ScenarioRecord) -> str | None:
    """The prompts a tau2 item's participants were shown (``--tau2-prompts``, from its data pin);
    ``seed`` for a result of a version before the option (those had our prompts); None: no tau2 item."""
    if record.tau2_id is None or record.data_pin is None:
        return None
    return str(record.data_pin.document().get("prompts") or "seed")


def prompts_line(metrics: Results) -> str | None:
    """What the tau2 items were shown, and whether that keeps the rewards leaderboard-comparable."""
    counts = Counter(p for m in read_records(metrics) if (p := prompts_of(m)) is not None)
    if not counts:
        return None
    if set(counts) == {"upstream"}:
        return "Prompts: upstream (tau2's own system prompts and tool schemas, --tau2-prompts)"
    shown = ", ".join(f"{name} in {n}" for name, n in sorted(counts.items()))
    return (
        f"Prompts: {shown} trials: a model shown other prompts than upstream's is not leaderboard-comparable "
        "(--tau2-prompts upstream, docs/leaderboard.md)"
    )


def trials_per_task(metrics: Results) -> int:
    return max((int(m.trials or 1) for m in read_records(metrics)), default=1)


def not_evaluated(metrics: Results) -> Counter[str]:
    """How many tau2 rewards left each component out (no judge for NL assertions, ...)."""
    counts: Counter[str] = Counter()
    for m in read_records(metrics):
        for component in m.tau2_not_evaluated():
            counts[component] += 1
    return counts


def _reward_text(result: PassK, k: int) -> str:
    if result.average is None:
        return "no valid trial"
    text = f"{result.average:.3f} average over {result.valid_trials} trials of {result.tasks} tasks"
    return text + (f"; {result.values_text()}" if k > 1 else "")


def summary_lines(metrics: Results, errored: Sequence[str] = ()) -> list[str]:
    """Run-level lines: tau2 reward (average, pass^k), the six-signal pass^k, and what was left out."""
    metrics = read_records(metrics)
    k = trials_per_task(metrics)
    lines = []
    if any(m.success_signals == [TAU2_REWARD.key] for m in metrics):
        lines.append("Verdict: tau2 reward (--tau2-verdict tau2-reward) decides the tau2 items")
    tau2 = tau2_reward_trials(metrics, errored)
    if tau2:
        result = pass_k(tau2, k)
        lines.append(f"tau2 reward: {_reward_text(result, k)}")
        if result.caveats():
            lines.append(f"  {result.caveats()}")
        prompts = prompts_line(metrics)
        if prompts:
            lines.append(f"  {prompts}")
        missing = not_evaluated(metrics)
        for component, count in sorted(missing.items()):
            lines.append(
                f"  {component} not evaluated in {count} trials (no judge): those rewards leave it out "
                "and are not leaderboard-comparable"
            )
    if k > 1:
        result = pass_k(six_signal_trials(metrics, errored), k)
        lines.append(f"Six-signal verdict over {k} trials per scenario: {result.values_text()}")
        if result.caveats():
            lines.append(f"  {result.caveats()}")
    return lines


def domain_lines(metrics: Results, errored: Sequence[str] = ()) -> list[str]:
    """Lines under one domain's headline (empty for a domain without tau2 tasks and with one trial)."""
    metrics = read_records(metrics)
    k = trials_per_task(metrics)
    lines = []
    tau2 = tau2_reward_trials(metrics, errored)
    if tau2:
        result = pass_k(tau2, k)
        lines.append(f"tau2 reward: {_reward_text(result, k)}" + (f" ({result.caveats()})" if result.caveats() else ""))
    if k > 1:
        result = pass_k(six_signal_trials(metrics, errored), k)
        lines.append(f"six-signal: {result.values_text()}" + (f" ({result.caveats()})" if result.caveats() else ""))
    return lines


def pass_hat_k_document(metrics: Results, errored: Sequence[str] = ()) -> dict[str, Any]:
    """The ``pass_hat_k`` object of all_metrics.json: both verdicts, for the run and per domain."""
    metrics = read_records(metrics)
    k = trials_per_task(metrics)
    out: dict[str, Any] = {"trials_per_task": k}
    for name, trials in (
        ("six_signal", six_signal_trials(metrics, errored)),
        ("tau2_reward", tau2_reward_trials(metrics, errored)),
    ):
        out[name] = {
            "run": pass_k(trials, k).to_dict() if trials else None,
            "domains": {domain: result.to_dict() for domain, result in pass_k_by_domain(trials, k).items()},
        }
    out["tau2_reward"]["not_evaluated"] = dict(sorted(not_evaluated(metrics).items()))
    return out
