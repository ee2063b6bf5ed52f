"""Run-level aggregation: the composite headline and per-signal pass rates.

Conventions (docs/scoring.md):
- composite success counts every scenario with a verdict; stalled scenarios and
  infrastructure errors count as not successful (never silently dropped), "N/A" ones are
  listed apart;
- per-signal rates leave stalled scenarios and infrastructure errors out; the signals of
  stalled scenarios are shown apart, under the count of stalled scenarios and the option
  that decides it (a terse agent may stall in every scenario: its signals still show);
- NL assertions are counted in assertions, DB-state assertions in predicates.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_tau2.extension.registry import Registry
from pytest_tau2.report import agreement, calls, failure_modes, leaderboard, reviews, uncertainty
from pytest_tau2.report.record import LIMIT_STOP_REASONS, ScenarioRecord, Usage, read_records
from pytest_tau2.report.run_record import ErrorEntry
from pytest_tau2.scoring.signals import signal_specs


@dataclass(frozen=True)
class SummarySection:
    """Lines another package adds to the run summary (all_summary.txt and the terminal's), after
    the leaderboard's: tau2_format/upstream_diff.py adds the re-scored upstream runs' line."""

    name: str
    lines: Callable[[Sequence[ScenarioRecord]], list[str]]
    """The section's lines for the run's records; none: the section is left out."""


SECTIONS: Registry[str, SummarySection] = Registry("summary section", describe=lambda s: repr(s.lines))
"""Every summary section by name, in the order they are shown (extension/registry.py)."""


def register_summary_section(section: SummarySection, *, replace: bool = False) -> SummarySection:
    """Add a section to every run summary (a run's end, ``merge``, ``rescore``)."""
    return SECTIONS.register(section.name, section, replace=replace)


@dataclass
class Rate:
    passed: int = 0
    total: int = 0

    def add(self, ok: bool, n: int = 1) -> None:
        self.total += n
        self.passed += n if ok else 0

    def __str__(self) -> str:
        if not self.total:
            return "n/a"
        return f"{self.passed}/{self.total} ({100.0 * self.passed / self.total:.1f}%)"


@dataclass
class Summary:
    scenarios: int = 0
    successful: int = 0
    failed: int = 0
    stalled: int = 0
    infra_errors: int = 0
    not_applicable: int = 0
    setup_errors: int = 0
    signals: dict[str, Rate] = field(default_factory=lambda: defaultdict(Rate))
    informational: dict[str, Rate] = field(default_factory=lambda: defaultdict(Rate))
    stalled_signals: dict[str, Rate] = field(default_factory=lambda: defaultdict(Rate))
    """Rates of the gating signals over the stalled scenarios only."""
    stalled_turns: list[int] = field(default_factory=list)
    """The agent turns of each stalled scenario."""
    """Rates of signals computed where they are not success signals (saved as ``excluded``)."""
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    limited: dict[str, int] = field(default_factory=dict)
    """Scenarios a per-scenario limit stopped (scored, not errors), by stop reason (docs/campaigns.md)."""

    @property
    def composite(self) -> Rate:
        return Rate(self.successful, self.scenarios - self.not_applicable)


def summarize(metrics: Iterable[ScenarioRecord | Mapping[str, Any]]) -> Summary:
    summary = Summary()
    for m in read_records(metrics):
        summary.scenarios += 1
        _add_tokens(summary.tokens, m.token_usage)
        if m.stop_reason in LIMIT_STOP_REASONS and not m.infrastructure_error:
            summary.limited[m.stop_reason] = summary.limited.get(m.stop_reason, 0) + 1
        if m.infrastructure_error:
            summary.infra_errors += 1
            continue
        if m.stalled:
            summary.stalled += 1
            summary.stalled_turns.append(m.agent_turns)
            _add_signals(m, summary.stalled_signals, None)
            continue
        if m.is_successful == "N/A":
            summary.not_applicable += 1
        elif m.is_successful is True:
            summary.successful += 1
        else:
            summary.failed += 1
        _add_signals(m, summary.signals, summary.informational)
    return summary


def _add_signals(m: ScenarioRecord, gating_rates: dict[str, Rate], other_rates: dict[str, Rate] | None) -> None:
    """A signal counts in the rates of the scenarios it gates; elsewhere it is informational (or left out)."""
    gating = set(m.gating)
    for spec in signal_specs():
        rates = gating_rates if spec.key in gating else other_rates
        if rates is None:
            continue
        if spec.evidence_field is not None:  # a rate signal counts its items (assertions, predicates)
            for passed in m.items_passed(spec):
                rates[spec.label].add(passed is True)
        else:
            value = m.signal(spec)
            if isinstance(value, bool):
                rates[spec.label].add(value)


def _add_tokens(total: dict[str, dict[str, Any]], usage: Mapping[str, Usage]) -> None:
    for side, u in usage.items():
        t = total.setdefault(side, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0})
        t.setdefault("replayed_calls", 0)
        for key, value in (
            ("calls", u.calls),
            ("prompt_tokens", u.prompt_tokens),
            ("completion_tokens", u.completion_tokens),
            ("replayed_calls", u.replayed_calls),
        ):
            t[key] += value
        if t["cost_usd"] is not None:
            t["cost_usd"] = None if u.cost_usd is None else t["cost_usd"] + u.cost_usd


def render(
    metrics: Sequence[ScenarioRecord | Mapping[str, Any]],
    errored: Sequence[str | Mapping[str, Any] | ErrorEntry] | None = None,
    *,
    level: float = uncertainty.DEFAULT_LEVEL,
) -> str:
    """The text of all_summary.txt (and of the terminal summary).

    ``errored`` lists the items that ended without a result (bad data, a broken scenario class,
    a crashed worker): scenario names, or ``errors_without_result`` entries (``{scenario,
    reason}``) whose reasons are shown too. They count as not successful in the headline.
    ``level`` is the confidence level of the intervals (``--tau2-ci-level``).
    """
    records = read_records(metrics)
    total = summarize(records)
    entries = [ErrorEntry.model_validate(e) if not isinstance(e, ErrorEntry) else e for e in errored or []]
    reasons = {e.scenario: e.reason for e in entries}
    names = [e.scenario for e in entries]
    total.scenarios += len(names)
    total.setup_errors = len(names)
    lines = [_headline(total), *calls.summary_lines(calls.document(records))]  # phone calls: docs/voice.md
    if names:
        shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
        lines.append(f"  errors without a result: {shown}")
        for name in names[:10]:
            if reasons.get(name):
                lines.append(f"    {name}: {reasons[name]}")
    if total.limited:
        counts = ", ".join(f"{reason} {n}" for reason, n in sorted(total.limited.items()))
        lines.append(f"  stopped by a per-scenario limit (scored as the agent's outcome): {counts}")
    lines += _rates(total.signals)
    informational = _rates(total.informational)
    if informational:
        lines.append("Informational (computed, but not success signals of those scenarios):")
        lines += informational
    if total.stalled:
        stalled = _rates(total.stalled_signals)
        lines.append(_stalled_line(total) + ("; their signals:" if stalled else ""))
        lines += stalled
    modes = failure_modes.summary_lines(records)  # failed trials grouped by what went wrong (docs/review.md)
    if modes:
        lines += ["", *modes]
    reviewed = reviews.summary_lines(records)  # critical user-simulator errors (docs/review.md)
    if reviewed:
        lines += ["", *reviewed]
    comparable = leaderboard.summary_lines(records, names)  # tau2 reward and pass^k (docs/leaderboard.md)
    if comparable:
        lines += ["", *comparable]
    for section in SECTIONS.values():  # other packages' sections (a replay of upstream runs: docs/replay.md)
        extra = section.lines(records)
        if extra:
            lines += ["", *extra]
    intervals = uncertainty.summary_lines(records, names, level)  # docs/statistics.md
    if intervals:
        lines += ["", *intervals]
    judges = agreement.summary_lines(agreement.document(records))  # several judges (docs/rescoring.md)
    if judges:
        lines += ["", *judges]
    domains = sorted({m.domain or "?" for m in records})
    if len(domains) > 1:
        lines.append("")
        lines.append("Per domain:")
        for domain in domains:
            in_domain = [m for m in records if (m.domain or "?") == domain]
            lines.append(f"  {domain}: {_headline(summarize(in_domain))}")
            lost = [name for name in names if name.startswith(f"{domain}__")]
            lines += [f"    {line}" for line in leaderboard.domain_lines(in_domain, lost)]
            lines += [f"    {line}" for line in uncertainty.scope(in_domain, lost, level).lines()]
    agents = sorted({m.agent for m in records if m.agent})
    users = sorted({m.user for m in records if m.user})
    if agents or users:
        lines.append("")
        lines.append(f"Agent: {', '.join(agents) or 'n/a'}; user: {', '.join(users) or 'n/a'}")
    used = {side: t for side, t in total.tokens.items() if t["calls"]}
    if used:
        lines.append("")
        lines.append("Token usage:")
        if len(used) > 1:
            lines.append(_total_usage_line(used))
        for side, t in sorted(used.items()):
            cost = "unpriced" if t["cost_usd"] is None else f"${t['cost_usd']:.4f}"
            lines.append(
                f"  {side}: {t['calls']} calls, {t['prompt_tokens']} prompt + {t['completion_tokens']} "
                f"completion tokens, cost {cost}"
                + (f" ({t['replayed_calls']} replayed from cassettes, not spent)" if t["replayed_calls"] else "")
            )
    return "\n".join(lines) + "\n"


def _total_usage_line(used: Mapping[str, Mapping[str, Any]]) -> str:
    calls = sum(t["calls"] for t in used.values())
    tokens = sum(t["prompt_tokens"] + t["completion_tokens"] for t in used.values())
    costs = [t["cost_usd"] for t in used.values()]
    cost = "unpriced" if any(c is None for c in costs) else f"${sum(costs):.4f}"
    return f"  total: {calls} calls, {tokens} tokens, cost {cost}"


def _stalled_line(s: Summary) -> str:
    """How many scenarios stalled, how much their agent spoke, and the option that sets the rule."""
    low, high = min(s.stalled_turns, default=0), max(s.stalled_turns, default=0)
    spoke = f"{low} to {high} times" if low != high else f"{low} time{'' if low == 1 else 's'}"
    scenarios = f"{s.stalled} scenario{'' if s.stalled == 1 else 's'}"
    return f"Stalled: {scenarios}, in which the agent spoke {spoke}, fewer than --tau2-min-agent-turns (0 turns it off)"


def _headline(s: Summary) -> str:
    text = f"Success rate: {s.composite} of {s.scenarios} scenarios"
    extras = []
    if s.stalled:
        extras.append(f"{s.stalled} stalled")
    if s.infra_errors:
        extras.append(f"{s.infra_errors} infrastructure errors")
    if s.setup_errors:
        extras.append(f"{s.setup_errors} errors without a result")
    if extras:
        text += f" ({', '.join(extras)} counted as not successful)"
    if s.not_applicable:
        text += f"; {s.not_applicable} N/A (skipped)"
    return text


def _rates(signals: dict[str, Rate]) -> list[str]:
    lines = []
    for spec in signal_specs():
        rate = signals.get(spec.label)
        if rate is not None and rate.total:
            unit = f" {spec.unit}" if spec.unit else ""
            lines.append(f"  {spec.label}: {rate}{unit}")
    return lines
