"""The pytest side of the cost estimate (run/estimate.py, docs/campaigns.md):

- ``--tau2-estimate`` (``pytest-tau2 estimate [pytest args]``): after collection, the selected
  scenario items are estimated, the estimate printed and written (``--tau2-estimate-file``, else
  ``tau2-estimate.json`` in the rootdir), and every item deselected: nothing runs, nothing is paid;
- a run given ``--tau2-estimate-file`` of an estimate: its summary shows estimate vs actual (a
  section of the summary: run_report.SummarySection).

The estimate is made in the process that collects; with ``-n`` the items are collected by the
workers, so ``--tau2-estimate`` refuses ``-n`` (it runs nothing: one process is all it needs).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_tau2.plugin.keys import result_folder, scenario_name
from pytest_tau2.plugin.run_report import RunReport
from pytest_tau2.plugin.selection_hint import SelectionHints
from pytest_tau2.plugin.terminal import Terminal
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.run.catalog import Catalog
from pytest_tau2.run.estimate import ESTIMATE_FILE, SIDES, Estimate, estimate
from pytest_tau2.run.trial import parse_item_id
from pytest_tau2.settings import Settings

NAME = "tau2-estimating"


class Estimating:
    top = False

    def __init__(
        self,
        config: pytest.Config,
        settings: Settings,
        catalog: Catalog,
        report: RunReport,
        terminal: Terminal,
        hints: SelectionHints,
    ) -> None:
        if settings.estimate and getattr(config.option, "numprocesses", None):
            raise pytest.UsageError("--tau2-estimate collects and runs nothing: leave out -n (xdist)")
        self.settings = settings
        self.catalog = catalog
        self.report = report
        self.terminal = terminal
        self.hints = hints
        self._lines: list[str] | None = None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        settings = self.settings
        if not settings.estimate:
            return
        catalog = self.catalog
        trials = []
        for item in items:
            if scenario_name(item) is None:
                continue
            name, trial = parse_item_id(result_folder(item), settings.trials)
            trials.append((catalog.instance(name), trial))
        recorded = Path(settings.estimate_from) if settings.estimate_from else None
        found = estimate(settings, trials, recorded)
        path = Path(settings.estimate_file) if settings.estimate_file else config.rootpath / ESTIMATE_FILE
        found.write(path)
        self.terminal.write_line("")
        for line in [*found.lines(), f"  written to {path}; nothing was run (--tau2-estimate)"]:
            self.terminal.write_line(f"tau2: {line}")
        items[:] = []  # estimated, not deselected: pytest's "deselected" count keeps to -k
        if trials:
            self.hints.deselected = []  # -k selected scenarios: no "selected none" hint

    def finish(self, session: pytest.Session) -> None:
        """The session ends (the run's finish): ``--tau2-estimate`` ran nothing, on purpose."""
        if self.settings.estimate and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK  # every item deselected on purpose

    def lines(self) -> list[str]:
        """Estimate vs actual, for a run given ``--tau2-estimate-file`` (read once)."""
        settings = self.settings
        if settings.estimate or not settings.estimate_file:
            return []
        if self._lines is None:
            try:
                made = Estimate.read(Path(settings.estimate_file))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                self._lines = [f"Estimate vs actual: the estimate {settings.estimate_file} is unreadable ({exc})"]
            else:
                self._lines = compare(made, self.report.entries()[0])
        return self._lines


def compare(made: Estimate, records: Sequence[ScenarioRecord]) -> list[str]:
    """``Estimate vs actual`` lines: per side and in total, calls and tokens, and cost, over the
    scenarios both the estimate and this run hold (a resumed result was not run: left out)."""
    ran = {r.scenario if not r.trials or r.trials <= 1 else f"{r.scenario}-t{r.trial}": r for r in records}
    ran = {name: r for name, r in ran.items() if not r.resumed}
    items = [i for i in made.items if i.name in ran]
    if not items:
        return ["Estimate vs actual: none of this run's scenarios is in the estimate"]
    lines = [f"Estimate vs actual ({len(items)} scenarios of the estimate ran): estimated low / mid / high -> actual"]
    subset = Estimate(items, made.prices)
    totals = subset.totals()
    actual_tokens = 0
    actual_cost: float | None = 0.0
    for side in SIDES:
        used = [r.token_usage[side] for r in ran.values() if side in r.token_usage]
        calls = sum(u.calls for u in used)
        tokens = sum(u.prompt_tokens + u.completion_tokens for u in used)
        cost = None if any(u.cost_usd is None for u in used if u.calls) else sum(u.cost_usd or 0.0 for u in used)
        actual_tokens += tokens
        actual_cost = None if actual_cost is None or cost is None else actual_cost + cost
        figures = totals.get(side)
        if figures is None or not (calls or figures.high["calls"]):
            continue
        est = [f["prompt_tokens"] + f["completion_tokens"] for f in (figures.low, figures.mid, figures.high)]
        lines.append(
            f"  {side}: calls {figures.low['calls']:,.0f} / {figures.mid['calls']:,.0f} / {figures.high['calls']:,.0f}"
            f" -> {calls}; tokens {est[0]:,.0f} / {est[1]:,.0f} / {est[2]:,.0f} -> {tokens:,}"
        )
    low, mid, high = (subset.total(level) for level in ("low", "mid", "high"))
    shown = "unpriced" if actual_cost is None else f"${actual_cost:.4f}"
    lines.append(
        f"  total: tokens {low.tokens:,.0f} / {mid.tokens:,.0f} / {high.tokens:,.0f} -> {actual_tokens:,}"
        f"; cost {_usd(low.cost_usd)} / {_usd(mid.cost_usd)} / {_usd(high.cost_usd)} -> {shown}"
    )
    return lines


def _usd(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:.4f}"


def main(argv: Sequence[str]) -> int:
    """``pytest-tau2 estimate [pytest args]``: pytest with ``--tau2-estimate`` (collect, estimate, run nothing)."""
    if any(arg in ("-h", "--help") for arg in argv):
        print(
            "usage: pytest-tau2 estimate [pytest args]\n"
            "Collects as `pytest [pytest args]` would, prints the estimated calls, tokens and cost of the selected "
            "scenarios (low / mid / high) and writes them to --tau2-estimate-file (default tau2-estimate.json); "
            "--tau2-estimate-from DIR estimates from an earlier run's results. Nothing is run. docs/campaigns.md\n"
            "The pytest arguments (pytest's own options follow):\n"
        )
        return int(pytest.main(["--help"]))
    return int(pytest.main([*argv, "--tau2-estimate"]))
