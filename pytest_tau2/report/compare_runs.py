"""The paired comparison of two runs (``pytest-tau2 compare A B``: :mod:`.compare_cli`), also of a
finished run with a saved baseline (``--tau2-baseline``, :mod:`pytest_tau2.report.gate`) and in the
comparison view of the report.

The two runs must have seen the same scenarios with the same tau2 data: a comparison over
different task sets or data is refused, naming what differs, unless ``--intersect`` (then only
the scenarios both have are compared, and a data pin difference is reported beside the verdict).
Nor may they have been scored under different rules (:data:`SCORING_RULES` of the two run.json
fingerprints, when both sides have one): such a comparison is refused, naming each rule that
differs, unless ``different_rules`` (``--allow-different-rules``): then the rules are noted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_tau2.errors import Tau2Error
from pytest_tau2.report import failure_modes, leaderboard, null_baseline, reviews
from pytest_tau2.report.compare import ScopeComparison, apply_holm, compare_scope, natural, power_text
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.scenario.trial_ids import split_trial_id
from pytest_tau2.stats.intervals import check_level, level_text

SHOWN = 12
"""Task names listed per line before "and N more"."""
SCORING_RULES = (
    "min_agent_turns", "judge_model", "judge_prompt", "verdict",
    "max_turns", "max_duration", "max_tool_errors", "max_user_steps", "max_messages", "max_tokens", "max_cost",
    "telecom_tasks", "retrieval",
)  # fmt: skip
"""Fingerprint fields that decide how a conversation is limited and scored: two runs that differ
in one measure different things, whatever their agents."""
RULE_DEFAULTS = {"judge_prompt": "ours"}
"""A fingerprint leaves out a field at its default (run_folder.fingerprint)."""


class CompareError(Tau2Error):
    """Two runs that cannot be compared (different scenarios or data), or a folder that cannot be read."""


@dataclass
class RunSide:
    """One side of a comparison: its results and the names of items that left none."""

    label: str
    records: list[ScenarioRecord]
    errored: list[str] = field(default_factory=list)
    fingerprint: dict[str, Any] | None = None
    """The run's settings fingerprint (run.json), when it has one."""

    @property
    def tasks(self) -> set[str]:
        return {r.scenario for r in self.records} | {split_trial_id(name)[0] for name in self.errored}

    @property
    def trials(self) -> int:
        return max((int(r.trials or 1) for r in self.records), default=1)

    def pins(self) -> list[str]:
        """The tau2 data the results read (the prompts they were shown aside: :meth:`prompts`)."""
        documents = (
            {k: v for k, v in r.data_pin.document().items() if k != "prompts"} for r in self.records if r.data_pin
        )
        return sorted({json.dumps(document, sort_keys=True) for document in documents})

    def prompts(self) -> list[str]:
        """The ``--tau2-prompts`` the tau2 results were made under."""
        return sorted({p for r in self.records if (p := leaderboard.prompts_of(r)) is not None})

    def only(self, tasks: set[str]) -> RunSide:
        return RunSide(
            self.label,
            [r for r in self.records if r.scenario in tasks],
            [e for e in self.errored if split_trial_id(e)[0] in tasks],
            self.fingerprint,
        )


@dataclass
class Comparison:
    a: RunSide
    b: RunSide
    run: ScopeComparison
    domains: list[ScopeComparison]
    correction: str | None
    level: float
    alpha: float
    notes: list[str] = field(default_factory=list)

    @property
    def free_tasks(self) -> list[str]:
        """Paired tasks a do-nothing agent passes (report/null_baseline.py): their passes prove nothing."""
        return sorted(null_baseline.free_tasks(self.a.records + self.b.records), key=natural)

    @property
    def verdict(self) -> str:
        return self.run.primary.verdict

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": {"path": self.a.label, "tasks": len(self.a.tasks), "trials": self.a.trials},
            "b": {"path": self.b.label, "tasks": len(self.b.tasks), "trials": self.b.trials},
            "level": self.level,
            "alpha": self.alpha,
            "verdict": self.verdict,
            "verdict_line": self.run.primary.line(),
            "correction": self.correction,
            "notes": list(self.notes),
            "do_nothing_passes": self.free_tasks,
            "run": self.run.to_dict(),
            "domains": {d.scope: d.to_dict() for d in self.domains},
        }

    def lines(self) -> list[str]:
        """The text of the comparison: the verdict first, then the evidence."""
        out = [f"A: {self.a.label} ({len(self.a.tasks)} tasks x {self.a.trials} trials)",
               f"B: {self.b.label} ({len(self.b.tasks)} tasks x {self.b.trials} trials)"]  # fmt: skip
        out += [f"note: {note}" for note in self.notes]
        primary = self.run.primary
        method = f"{primary.test}; {level_text(self.level)} paired task bootstrap; alpha {self.alpha:g}"
        out.append(f"Verdict (success rate, B - A): {primary.line()} ({method})")
        out += _scope_lines(self.run, "  ")
        free = self.free_tasks
        if free:
            out.append(f"  a do-nothing agent passes {len(free)} of these tasks (--tau2-agent null): {_names(free)}")
        if self.domains:
            heading = f"Per domain ({self.correction})" if self.correction else "Per domain"
            out.append(f"{heading}:")
            for domain in self.domains:
                out.append(f"  {domain.scope}: {domain.primary.line()}")
                out += _scope_lines(domain, "    ", brief=True)
        out += failure_modes.compare_lines(self.a.records, self.b.records)  # docs/review.md
        out += reviews.compare_lines(self.a.records, self.b.records)
        return out


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def _scope_lines(scope: ScopeComparison, indent: str, *, brief: bool = False) -> list[str]:
    out = []
    for m in scope.metrics[0 if not brief else 1 :]:
        if not m.tasks:
            continue
        values = f"A {100 * (m.a or 0):.1f}%, B {100 * (m.b or 0):.1f}%"
        out.append(f"{indent}{m.name}: {values}; {m.line()} ({m.test})")
    primary = scope.primary
    if not brief:
        if primary.a_only:
            out.append(f"{indent}better in A ({len(primary.a_only)}): {_names(primary.a_only)}")
        if primary.b_only:
            out.append(f"{indent}better in B ({len(primary.b_only)}): {_names(primary.b_only)}")
    for side, noise in (("A", scope.noise_a), ("B", scope.noise_b)):
        if noise is not None and not brief:
            out.append(f"{indent}noise {side}: {noise.text()}")
    if scope.power is not None:
        out.append(f"{indent}runs needed: {power_text(scope.power)}")
    return out


def check_pairing(a: RunSide, b: RunSide, *, intersect: bool) -> tuple[RunSide, RunSide, list[str]]:
    """The two sides restricted to what can be paired, and notes; CompareError when they differ
    and ``intersect`` is off."""
    notes: list[str] = []
    only_a, only_b = sorted(a.tasks - b.tasks), sorted(b.tasks - a.tasks)
    pins_a, pins_b = a.pins(), b.pins()
    problems = []
    if only_a or only_b:
        parts = [f"{len(only_a)} only in A ({_names(only_a)})" if only_a else "",
                 f"{len(only_b)} only in B ({_names(only_b)})" if only_b else ""]  # fmt: skip
        problems.append("the scenario sets differ: " + "; ".join(p for p in parts if p))
    if pins_a and pins_b and pins_a != pins_b:
        problems.append(f"the tau2 data pins differ: A {', '.join(pins_a)}; B {', '.join(pins_b)}")
    prompts_a, prompts_b = a.prompts(), b.prompts()
    if prompts_a and prompts_b and prompts_a != prompts_b:
        notes.append(
            f"the runs were made under different prompts (--tau2-prompts): A {', '.join(prompts_a)}; "
            f"B {', '.join(prompts_b)}; a difference may come from what the models were shown"
        )
    if problems and not intersect:
        raise CompareError(
            "cannot pair the runs: " + "; ".join(problems) + " (--intersect compares the scenarios both have)"
        )
    notes += problems
    common = a.tasks & b.tasks
    if not common:
        raise CompareError("the runs have no scenario in common: nothing to compare")
    if a.trials != b.trials:
        notes.append(
            f"A has {a.trials} trials per task, B {b.trials}: pass^k is compared up to k={min(a.trials, b.trials)}"
        )
    return a.only(common), b.only(common), notes


def rule_differences(a: RunSide, b: RunSide) -> list[str]:
    """Each scoring rule the two runs' fingerprints differ in (none when a side has no run.json)."""
    if a.fingerprint is None or b.fingerprint is None:
        return []
    out = []
    for key in SCORING_RULES:
        then = a.fingerprint.get(key, RULE_DEFAULTS.get(key))
        now = b.fingerprint.get(key, RULE_DEFAULTS.get(key))
        if then != now:
            out.append(f"{key}: A {_shown(then)}, B {_shown(now)}")
    return out


def _shown(value: Any) -> str:
    """A fingerprint value in a line: a judge by its model name(s), the rest as JSON."""
    judges = value if isinstance(value, list) else [value]
    if value and all(isinstance(j, dict) and "model" in j for j in judges):
        return ",".join(str(j["model"]) + (f" {j['args']}" if j.get("args") else "") for j in judges)
    return "none" if value is None else json.dumps(value, sort_keys=True)


def compare(
    a: RunSide,
    b: RunSide,
    *,
    intersect: bool = False,
    alpha: float = 0.05,
    level: float = 0.95,
    power: tuple[float, float] | None = None,
    different_rules: bool = False,
) -> Comparison:
    """The paired comparison of two sides: the run, each domain (Holm-corrected), notes."""
    check_level(level)
    if not 0 < alpha < 1:
        raise CompareError(f"alpha must be between 0 and 1, got {alpha!r}")
    rules = rule_differences(a, b)
    if rules and not different_rules:
        raise CompareError(
            "the runs were scored under different rules, so their difference is not the agents': "
            + "; ".join(rules)
            + " (--allow-different-rules compares them anyway, noting this)"
        )
    a, b, notes = check_pairing(a, b, intersect=intersect)
    notes += [f"scored under different rules: {line}" for line in rules]
    options: dict[str, Any] = {"alpha": alpha, "level": level}
    run = compare_scope("run", a.records, b.records, errored_a=a.errored, errored_b=b.errored, power=power, **options)
    domains = []
    names = sorted({r.domain or "?" for r in a.records + b.records})
    if len(names) > 1:
        for name in names:
            ra = [r for r in a.records if (r.domain or "?") == name]
            rb = [r for r in b.records if (r.domain or "?") == name]
            ea = [e for e in a.errored if e.split("__", 1)[0] == name]
            eb = [e for e in b.errored if e.split("__", 1)[0] == name]
            domains.append(compare_scope(name, ra, rb, errored_a=ea, errored_b=eb, power=power, **options))
    correction = apply_holm(domains)
    return Comparison(a, b, run, domains, correction, level, alpha, notes)
