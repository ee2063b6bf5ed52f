"""The numbers of the overview, computed from loaded runs (no HTML here).

Rates follow the run summary's conventions (docs/scoring.md): the composite success rate
counts infrastructure errors, stalls and errors without a result as not successful and leaves
"N/A" scenarios out; per-signal rates count a signal where it gates, leave infrastructure
errors and stalls out, and count a rate signal in the items of its evidence (DB-state
assertions in predicates, NL assertions in assertions).

The signals are the registered ones (``scoring/signals.py``'s table, custom signals included),
read where the report is built: the overview's rates, the page's signal list
(:func:`page_signals`) and the failed-signal names of the table (:func:`failed_signals`).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pytest_tau2.report import null_baseline, uncertainty
from pytest_tau2.report.html.loader import Run, ScenarioResult
from pytest_tau2.report.html.passk import Curve, pass_k_curves
from pytest_tau2.scoring.signals import SignalSpec, signal_specs

SIDES = ("agent", "user", "judge")
OUTCOMES = ("error", "failed", "n/a", "passed")


@dataclass
class Rate:
    passed: int = 0
    total: int = 0

    def add(self, ok: bool) -> None:
        self.total += 1
        self.passed += int(ok)

    @property
    def value(self) -> float | None:
        return self.passed / self.total if self.total else None


@dataclass
class Mean:
    total: float = 0.0
    count: int = 0

    def add(self, value: float) -> None:
        self.total += value
        self.count += 1

    @property
    def value(self) -> float | None:
        return self.total / self.count if self.count else None


@dataclass
class DomainStats:
    domain: str
    outcomes: dict[str, int]
    success: Rate
    reward: Mean


@dataclass
class SideUsage:
    side: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0


@dataclass
class Overview:
    label: str
    scenarios: int
    outcomes: dict[str, int]
    success: Rate
    reward: Mean
    domains: list[DomainStats]
    signals: list[tuple[str, Rate, str]]
    informational: list[tuple[str, Rate, str]]
    reward_components: list[tuple[str, Mean]]
    pass_k: list[Curve]
    pass_k_source: str
    pass_k_notes: dict[str, Any]
    usage: list[SideUsage]
    durations: list[float]
    infra_errors: list[tuple[str, list[str]]]
    """(message, scenario keys) per distinct infrastructure error, the most frequent first."""
    errors_without_result: list[tuple[str, str]]
    settings: dict[str, list[str]]
    models: list[tuple[str, str, str]]
    data_pins: list[dict[str, Any]]
    markers: dict[str, int]
    extra: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    intervals: uncertainty.ScopeUncertainty | None = None
    """The run's intervals and noise floor (report/uncertainty.py), at the run's --tau2-ci-level."""
    domain_intervals: dict[str, uncertainty.ScopeUncertainty] = field(default_factory=dict)
    free_tasks: list[str] = field(default_factory=list)
    """Tasks of the run that a do-nothing agent passes (report/null_baseline.py)."""

    @property
    def pass_k_ks(self) -> list[int]:
        """Every k of the run's pass^k curves, in order (the columns of their table)."""
        return sorted({k for curve in self.pass_k for k, _ in curve.points})

    @property
    def options(self) -> dict[str, Any]:
        """The settings that decide verdicts (run.json's fingerprint), unset ones left out."""
        fingerprint = self.info.get("fingerprint")
        if not isinstance(fingerprint, dict):
            return {}
        return {k: v for k, v in sorted(fingerprint.items()) if v is not None}

    @property
    def cost_usd(self) -> float | None:
        costs = [u.cost_usd for u in self.usage if u.calls]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)

    @property
    def total_tokens(self) -> int:
        return sum(u.prompt_tokens + u.completion_tokens for u in self.usage)

    def duration_quantile(self, q: float) -> float | None:
        if not self.durations:
            return None
        ordered = sorted(self.durations)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def overview(run: Run, label: str) -> Overview:
    """Everything the overview section of one run shows."""
    results = run.scenarios
    outcomes = _count_outcomes(results, len(run.errors_without_result))
    by_domain: dict[str, list[ScenarioResult]] = defaultdict(list)
    for r in results:
        by_domain[r.domain or r.scenario.split("__")[0]].append(r)
    domains = []
    for domain, members in sorted(by_domain.items()):
        missing = sum(1 for e in run.errors_without_result if e.name.split("__")[0] == domain)
        domains.append(
            DomainStats(domain, _count_outcomes(members, missing), _success(members, missing), _reward(members))
        )
    signals, informational = _signal_rates(results)
    curves, source, notes = pass_k_curves(run)
    level = ci_level(run)
    errored = [e.name for e in run.errors_without_result]
    return Overview(
        label=label,
        scenarios=len(results) + len(run.errors_without_result),
        outcomes=outcomes,
        success=_success(results, len(run.errors_without_result)),
        reward=_reward(results),
        domains=domains,
        signals=signals,
        informational=informational,
        reward_components=_reward_components(results),
        pass_k=curves,
        pass_k_source=source,
        pass_k_notes=notes,
        usage=_usage(results),
        durations=[r.duration_s for r in results],
        infra_errors=_grouped_errors(results),
        errors_without_result=[(e.name, e.reason) for e in run.errors_without_result],
        settings={
            "agent": sorted({r.agent for r in results if r.agent}),
            "user": sorted({r.user for r in results if r.user}),
        },
        models=_models(results),
        data_pins=_distinct([r.data_pin.document() for r in results if r.data_pin]),
        markers={
            "trials": len({r.shown_trial for r in results if r.shown_trial is not None}),
            "resumed": sum(1 for r in results if "resumed" in r.markers),
            "replayed": sum(1 for r in results if "replayed" in r.markers),
            "recorded": sum(1 for r in results if "recorded" in r.markers),
            # as the run summary counts them: an infrastructure error is counted as one, not as stalled
            "stalled": sum(1 for r in results if r.stalled and not r.infrastructure_error),
        },
        extra=run.extra,
        info=run.info,
        intervals=uncertainty.scope(results, errored, level),
        domain_intervals=uncertainty.by_domain(results, errored, level) if len(domains) > 1 else {},
        free_tasks=null_baseline.free_tasks(results),
    )


def ci_level(run: Run) -> float:
    """The level the run's intervals were written at (all_metrics.json's ``intervals``), else 0.95."""
    block = run.extra.get("intervals")
    level = block.get("level") if isinstance(block, dict) else None
    return float(level) if isinstance(level, int | float) and 0 < level < 1 else uncertainty.DEFAULT_LEVEL


def _grouped_errors(results: list[ScenarioResult]) -> list[tuple[str, list[str]]]:
    groups: dict[str, list[str]] = defaultdict(list)
    for r in results:
        if r.infrastructure_error:
            groups[r.infrastructure_error].append(r.key)
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))


def _count_outcomes(results: list[ScenarioResult], missing: int) -> dict[str, int]:
    counts = dict.fromkeys(OUTCOMES, 0)
    for r in results:
        counts[r.outcome] += 1
    counts["error"] += missing
    return counts


def _success(results: list[ScenarioResult], missing: int) -> Rate:
    rate = Rate()
    for r in results:
        if r.outcome != "n/a":
            rate.add(r.outcome == "passed")
    for _ in range(missing):
        rate.add(False)
    return rate


def _reward(results: list[ScenarioResult]) -> Mean:
    mean = Mean()
    for r in results:
        reward = r.signal("tau2_reward")
        if reward is not None:
            mean.add(float(reward))
    return mean


def page_signals() -> list[dict[str, Any]]:
    """The signal table as the page reads it: the table's columns and filter, the panel's signal list."""
    return [
        {
            "key": spec.key,
            "metric": spec.metric,
            "label": spec.label,
            "kind": spec.kind,
            "unit": spec.unit,
            "doc": spec.description,
            "na": spec.not_applicable_when,
        }
        for spec in signal_specs()
    ]


def signal_keys() -> dict[str, str]:
    """metrics.json field -> signal key (``success_breakdown`` names fields, the page shows keys)."""
    return {spec.metric: spec.key for spec in signal_specs()}


def failed_signals(result: ScenarioResult, keys: dict[str, str]) -> list[str]:
    """The gating signals that failed, by key (a field the table does not know keeps its name);
    ``stalled`` when the agent stalled."""
    names = [keys.get(name, name) for name in result.success_breakdown.failed]
    return [*names, "stalled"] if result.stalled else names


def field_value(result: ScenarioResult, name: str) -> Any:
    """A metrics.json field of the result, known to the reader or kept as an extra (a custom signal's)."""
    if name in type(result).model_fields:
        return getattr(result, name)
    return (result.model_extra or {}).get(name)


def _signal_rates(results: list[ScenarioResult]) -> tuple[list[tuple[str, Rate, str]], list[tuple[str, Rate, str]]]:
    specs = list(signal_specs())
    gating: dict[str, Rate] = defaultdict(Rate)
    informational: dict[str, Rate] = defaultdict(Rate)
    for r in results:
        if r.infrastructure_error or r.stalled:
            continue
        whitelist = set(r.success_signals)
        for spec in specs:
            _add_signal(spec, r, gating if spec.key in whitelist else informational)

    def listed(rates: dict[str, Rate]) -> list[tuple[str, Rate, str]]:
        return [(spec.label, rates[spec.key], spec.unit or "scenarios") for spec in specs if rates[spec.key].total]

    return listed(gating), listed(informational)


def _add_signal(spec: SignalSpec, result: ScenarioResult, rates: dict[str, Rate]) -> None:
    """A rate signal with evidence counts its items; a boolean one counts the scenario."""
    if spec.evidence_field is not None:
        verdicts = field_value(result, spec.evidence_field)
        for verdict in verdicts if isinstance(verdicts, list) else []:
            rates[spec.key].add(isinstance(verdict, dict) and verdict.get("passed") is True)
        return
    value = field_value(result, spec.metric)
    if isinstance(value, bool):
        rates[spec.key].add(value)


def _reward_components(results: list[ScenarioResult]) -> list[tuple[str, Mean]]:
    """Average of each component in ``tau2_reward_breakdown`` (numbers or booleans, by name)."""
    components: dict[str, Mean] = {}
    for r in results:
        for name, value in _numeric_items(r.detail("tau2_reward_breakdown")):
            components.setdefault(name, Mean()).add(value)
    return sorted(components.items())


def _numeric_items(breakdown: object) -> list[tuple[str, float]]:
    if not isinstance(breakdown, dict):
        return []
    found = []
    for name, value in breakdown.items():
        if isinstance(value, dict):  # {"DB": {"reward": 1.0, ...}} style
            value = next((value[k] for k in ("reward", "score", "value") if k in value), None)
        if isinstance(value, bool | int | float) and math.isfinite(float(value)):
            found.append((str(name), float(value)))
    return found


def _usage(results: list[ScenarioResult]) -> list[SideUsage]:
    totals: dict[str, SideUsage] = {side: SideUsage(side) for side in SIDES}
    for r in results:
        for side, usage in r.token_usage.items():
            total = totals.setdefault(side, SideUsage(side))
            total.calls += usage.calls
            total.prompt_tokens += usage.prompt_tokens
            total.completion_tokens += usage.completion_tokens
            if usage.cost_usd is None and usage.calls:
                total.cost_usd = None
            elif total.cost_usd is not None:
                total.cost_usd += usage.cost_usd or 0.0
    return list(totals.values())


def _models(results: list[ScenarioResult]) -> list[tuple[str, str, str]]:
    """Distinct (side, model, arguments as JSON) across the run."""
    seen: set[tuple[str, str, str]] = set()
    for r in results:
        for side, value in r.models.items():
            configs = value if isinstance(value, list) else [value]  # "judges": a jury's every judge
            for config in configs:
                if isinstance(config, dict) and config.get("model"):
                    args = json.dumps(config.get("args") or {}, sort_keys=True, default=str)
                    seen.add(("judge" if side == "judges" else str(side), str(config["model"]), args))
    order = {side: i for i, side in enumerate(SIDES)}
    return sorted(seen, key=lambda row: (order.get(row[0], len(order)), row[1], row[2]))


def _distinct(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    unique = {json.dumps(item, sort_keys=True, default=str): item for item in items}
    return [unique[key] for key in sorted(unique)]
