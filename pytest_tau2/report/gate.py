"""The end-of-run gates for CI: the comparison with a saved baseline (``--tau2-baseline``, failing
only on a significant regression with ``--tau2-fail-on-regression``), the simple threshold
(``--tau2-fail-under``, on the estimate or on the interval's lower end), and the run's numbers
with their intervals as JUnit suite properties (docs/statistics.md).

Pure: records and settings in, lines, failures, properties and the comparison document out; the
adapter (plugin/gate.py) prints, writes and sets the exit status.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_tau2.report import uncertainty
from pytest_tau2.report.compare_cli import load_side
from pytest_tau2.report.compare_runs import CompareError, RunSide, compare
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.settings import Settings
from pytest_tau2.stats import Interval
from pytest_tau2.stats.intervals import level_text

BASELINE_FILE = "baseline_comparison.json"


@dataclass
class GateOutcome:
    lines: list[str] = field(default_factory=list)
    """Lines for the summary (terminal and all_summary.txt)."""
    failures: list[str] = field(default_factory=list)
    """Why the run must exit non-zero (empty: the gates passed or none was asked for)."""
    properties: list[tuple[str, str]] = field(default_factory=list)
    """JUnit ``<testsuite>`` properties."""
    comparison: dict[str, Any] | None = None
    """The baseline comparison's document (written to :data:`BASELINE_FILE`)."""


def _interval_properties(name: str, interval: Interval | None) -> list[tuple[str, str]]:
    if interval is None:
        return []
    return [(name, f"{interval.estimate:.6g}"), (f"{name}_low", f"{interval.low:.6g}"),
            (f"{name}_high", f"{interval.high:.6g}"), (f"{name}_method", interval.method)]  # fmt: skip


def evaluate(records: Sequence[ScenarioRecord], errored: Sequence[str], settings: Settings) -> GateOutcome:
    """Every gate the settings ask for, and the JUnit properties of the run's intervals."""
    level = settings.ci_level
    out = GateOutcome()
    scope = uncertainty.scope(records, errored, level)
    out.properties.append(("tau2_ci_level", f"{level:g}"))
    out.properties += _interval_properties("tau2_success_rate", scope.success)
    out.properties += _interval_properties("tau2_reward", scope.tau2_reward)
    for k, interval in scope.pass_k.items():
        out.properties += _interval_properties(f"tau2_pass_hat_{k}", interval)
    if settings.baseline:
        _baseline(out, records, errored, settings)
    if settings.fail_under is not None:
        _fail_under(out, scope.success, settings)
    if settings.baseline or settings.fail_under is not None:
        out.properties.append(("tau2_gate", "failed: " + "; ".join(out.failures) if out.failures else "passed"))
    return out


def _baseline(out: GateOutcome, records: Sequence[ScenarioRecord], errored: Sequence[str], settings: Settings) -> None:
    path = Path(settings.baseline or "")
    try:
        result = compare(load_side(path), RunSide("this run", list(records), list(errored)),
                         alpha=settings.alpha, level=settings.ci_level)  # fmt: skip
    except CompareError as exc:
        out.lines.append(f"Baseline {path}: not compared: {exc}")
        out.properties.append(("tau2_baseline_verdict", f"not compared: {exc}"))
        if settings.fail_on_regression:
            out.failures.append(f"--tau2-fail-on-regression: the baseline could not be compared ({exc})")
        return
    primary = result.run.primary
    regression = primary.verdict == "A better"
    word = {"A better": "this run is worse", "B better": "this run is better"}.get(primary.verdict, primary.verdict)
    line = primary.line().replace("A better", "this run is worse").replace("B better", "this run is better")
    out.lines.append(f"Baseline {path} (A) vs this run (B): {line} ({primary.test}, alpha {settings.alpha:g})")
    out.lines += [f"  {note}" for note in result.notes]
    out.comparison = result.to_dict()
    out.properties += [
        ("tau2_baseline", str(path)),
        ("tau2_baseline_verdict", word),
        ("tau2_baseline_difference", f"{primary.difference:.6g}"),
        ("tau2_baseline_p_value", f"{primary.p:.6g}"),
        ("tau2_baseline_test", primary.test),
    ]
    if regression and settings.fail_on_regression:
        out.failures.append(f"--tau2-fail-on-regression: {line}")
        out.lines.append("  regression: this run is worse than the baseline beyond the noise; pytest exits non-zero")


def _fail_under(out: GateOutcome, success: Interval | None, settings: Settings) -> None:
    threshold = float(settings.fail_under or 0.0)
    lower = settings.fail_under_bound == "lower"
    if success is None:
        out.failures.append("--tau2-fail-under: no scenario has a verdict")
        out.lines.append("Gate --tau2-fail-under: no scenario has a verdict: failed")
        return
    value = success.low if lower else success.estimate
    what = (f"the lower end of the success rate's {level_text(success.level)} interval" if lower
            else "the success rate")  # fmt: skip
    passed = value >= threshold
    line = f"{what} {100 * value:.1f}% is {'at or above' if passed else 'below'} {100 * threshold:.1f}%"
    out.lines.append(f"Gate --tau2-fail-under {threshold:g}: {line}: {'passed' if passed else 'failed'}")
    if not passed:
        out.failures.append(f"--tau2-fail-under: {line}")
