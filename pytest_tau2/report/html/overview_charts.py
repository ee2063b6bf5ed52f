"""The overview's charts from the runs' numbers: one series per run when comparing."""

from __future__ import annotations

from pytest_tau2.report.html import charts, formatting
from pytest_tau2.report.html.stats import DomainStats, Mean, Overview, Rate

Values = list[tuple[float | None, str]]


def overview_charts(overviews: list[Overview]) -> dict[str, str]:
    """Chart name -> SVG text; a chart with nothing to show is absent (or empty)."""
    names = [o.label for o in overviews]
    out = {
        "domains": _domain_chart(overviews, names),
        "signals": _rate_chart([o.signals for o in overviews], names, "Pass rate per success signal"),
        "informational": _rate_chart(
            [o.informational for o in overviews], names, "Signals computed outside the whitelist (informational)"
        ),
    }
    if any(o.reward.count for o in overviews):
        out["reward"] = _reward_chart(overviews, names)
    components = sorted({name for o in overviews for name, _ in o.reward_components})
    if components:
        bars = [
            charts.Bar(name, [_mean_value(dict(o.reward_components).get(name)) for o in overviews])
            for name in components
        ]
        out["components"] = charts.bar_chart(bars, title="tau2 reward components", series=names, tone_by_value=True)
    curves = [
        (f"{o.label}: {c.name}" if len(overviews) > 1 else c.name, c.points)
        for o in overviews
        for c in o.pass_k
        if c.overall
    ]
    if any(len(points) > 1 for _, points in curves):  # one trial per task: pass^1 is the rate above
        out["pass_k"] = charts.line_chart(curves, title="pass^k over k")
    if any(o.durations for o in overviews):
        out["durations"] = charts.histogram(
            [(o.label, o.durations) for o in overviews], title="Scenario duration (seeding to scoring)"
        )
    tokens = _token_chart(overviews, names)
    if tokens:
        out["tokens"] = tokens
    return out


def _domain(o: Overview, domain: str) -> DomainStats | None:
    return next((d for d in o.domains if d.domain == domain), None)


def _rate_value(rate: Rate, unit: str = "") -> tuple[float | None, str]:
    note = f"{formatting.percent(rate.value)}  {rate.passed}/{rate.total}{' ' + unit if unit else ''}"
    return rate.value, note


def _mean_value(mean: Mean | None) -> tuple[float | None, str]:
    if mean is None or not mean.count:
        return None, formatting.DASH
    return mean.value, f"{formatting.number(mean.value)}  (n={mean.count})"


def _domain_chart(overviews: list[Overview], names: list[str]) -> str:
    bars = [charts.Bar("all domains", [_rate_value(o.success) for o in overviews])]
    for domain in sorted({d.domain for o in overviews for d in o.domains}):
        values: Values = []
        for o in overviews:
            stats = _domain(o, domain)
            values.append(_rate_value(stats.success) if stats else (None, "not run"))
        failing = any(v is not None and v < 1 for v, _ in values)
        bars.append(charts.Bar(domain, values, "bad" if failing else ""))
    return charts.bar_chart(bars, title="Success rate per domain", series=names, tone_by_value=True)


def _reward_chart(overviews: list[Overview], names: list[str]) -> str:
    bars = [charts.Bar("all domains", [_mean_value(o.reward) for o in overviews])]
    for domain in sorted({d.domain for o in overviews for d in o.domains}):
        values: Values = []
        for o in overviews:
            stats = _domain(o, domain)
            values.append(_mean_value(stats.reward) if stats and stats.reward.count else (None, "no reward"))
        bars.append(charts.Bar(domain, values))
    return charts.bar_chart(bars, title="tau2 reward per domain", series=names, tone_by_value=True)


def _rate_chart(per_run: list[list[tuple[str, Rate, str]]], names: list[str], title: str) -> str:
    labels = list(dict.fromkeys(label for rates in per_run for label, _, _ in rates))
    if not labels:
        return ""
    bars = []
    for label in labels:
        values: Values = []
        for rates in per_run:
            found = next(((rate, unit) for lab, rate, unit in rates if lab == label), None)
            values.append(_rate_value(*found) if found else (None, formatting.DASH))
        failing = any(v is not None and v < 1 for v, _ in values)
        bars.append(charts.Bar(label, values, "bad" if failing else ""))
    return charts.bar_chart(bars, title=title, series=names, tone_by_value=True)


def _token_chart(overviews: list[Overview], names: list[str]) -> str:
    peak = max((u.prompt_tokens + u.completion_tokens for o in overviews for u in o.usage), default=0)
    if not peak:
        return ""
    sides = list(dict.fromkeys(u.side for o in overviews for u in o.usage))
    bars = []
    for side in sides:
        values: Values = []
        for o in overviews:
            u = next((x for x in o.usage if x.side == side and x.calls), None)
            if u is None:
                values.append((None, "no calls"))
                continue
            note = f"{formatting.count(u.prompt_tokens + u.completion_tokens)} tokens · {formatting.usd(u.cost_usd)}"
            values.append((u.prompt_tokens + u.completion_tokens, note))
        bars.append(charts.Bar(side, values))
    return charts.bar_chart(bars, title="Tokens per side", series=names, max_value=peak)
