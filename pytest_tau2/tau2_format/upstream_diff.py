"""Where our re-scoring of upstream runs differs from what upstream stored (``upstream_differences.json``).

A run with ``--tau2-agent replay:RESULTS --tau2-user replay`` re-scores each saved simulation with our
tools and scoring. For every trial this compares our ``tau2_reward`` (and each component of its
breakdown) with the ``reward_info`` upstream saved with the simulation, and writes the differences,
per simulation, beside all_metrics.json; the run summary gets one line with the counts. Runs of
any other agent write nothing. docs/replay.md shows the file.

Both reach the report through its registries (a report view and a summary section), registered
here; the extension registry's load step imports this module (extension/registry.py, ``BUILTINS``),
so the report never imports tau2_format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_tau2.report import files
from pytest_tau2.report.summary import SummarySection, register_summary_section
from pytest_tau2.report.views import RunFiles, RunView, register_report_view

if TYPE_CHECKING:
    from pytest_tau2.report.record import ScenarioRecord
    from pytest_tau2.tau2_format.upstream_runs import SavedRun

FILE = "upstream_differences.json"


@dataclass
class Comparison:
    source: str
    compared: int = 0
    equal: int = 0
    differences: list[dict[str, Any]] = field(default_factory=list)
    not_compared: list[dict[str, str]] = field(default_factory=list)

    def document(self) -> dict[str, Any]:
        return {
            "replayed_from": self.source,
            "compared": self.compared,
            "equal": self.equal,
            "different": len(self.differences),
            "differences": self.differences,
            "not_compared": self.not_compared,
        }

    def line(self) -> str:
        text = (
            f"Upstream runs re-scored: {self.compared} simulations compared with upstream's stored reward, "
            f"{self.equal} equal, {len(self.differences)} different ({FILE})"
        )
        return text + (f"; {len(self.not_compared)} not compared" if self.not_compared else "")


def replayed_source(records: Sequence[ScenarioRecord]) -> str | None:
    """The upstream Results path these records replayed, if they did (upstream's models are
    imported only for a run that replayed something: every run's end asks)."""
    for record in records:
        name, sep, path = record.agent.partition(":")
        if name == "replay" and sep and record.user == "replay":
            from pytest_tau2.tau2_format.upstream_runs import is_results

            if is_results(path):
                return path
    return None


def compare(records: Sequence[ScenarioRecord]) -> Comparison | None:
    source = replayed_source(records)
    if source is None:
        return None
    from pytest_tau2.tau2_format.models import UPSTREAM_DOMAINS
    from pytest_tau2.tau2_format.upstream_runs import UpstreamRunsError, load_runs

    try:
        runs = load_runs(source)
    except UpstreamRunsError:
        return None
    out = Comparison(source)
    for record in records:
        domain = UPSTREAM_DOMAINS.get(record.domain, "")
        saved = runs.find(domain, str(record.tau2_id), int(record.trial or 1))
        if saved is None:
            out.not_compared.append({"item": record.folder, "why": "no saved simulation of this task and trial"})
            continue
        ours = record.signal("tau2_reward")
        if ours is None or saved.reward is None:
            why = "no reward here (infrastructure error)" if ours is None else "upstream stored no reward_info"
            out.not_compared.append({"item": record.folder, "simulation": saved.simulation.id, "why": why})
            continue
        out.compared += 1
        different = _different_components(record, saved)
        if float(ours) == saved.reward and not different:
            out.equal += 1
            continue
        out.differences.append(_difference(record, saved, float(ours), different))
    return out


def _breakdown(value: object) -> dict[str, float | None]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def _different_components(record: ScenarioRecord, saved: SavedRun) -> list[str]:
    ours = _breakdown(record.detail("tau2_reward_breakdown"))
    info = saved.simulation.reward_info
    theirs = _breakdown(info.reward_breakdown if info is not None else None)
    return sorted(k for k in set(ours) & set(theirs) if ours[k] is not None and ours[k] != theirs[k])


def _difference(record: ScenarioRecord, saved: SavedRun, ours: float, components: list[str]) -> dict[str, Any]:
    info = saved.simulation.reward_info
    reward_info = record.detail("tau2_reward_info")
    return {
        "item": record.folder,
        "simulation": saved.simulation.id,
        "task_id": saved.task_id,
        "trial": saved.trial - 1,
        "ours": {
            "tau2_reward": ours,
            "breakdown": _breakdown(record.detail("tau2_reward_breakdown")),
            "reasons": reward_info.get("reasons") if isinstance(reward_info, dict) else None,
            "stop_reason": record.stop_reason,
            "is_successful": record.is_successful,
        },
        "upstream": {
            "reward": saved.reward,
            "breakdown": _breakdown(info.reward_breakdown if info is not None else None),
            "termination_reason": saved.simulation.termination_reason,
        },
        "components": components,
    }


def write(results_dir: Path, records: Sequence[ScenarioRecord]) -> None:
    """The view: ``upstream_differences.json`` for a replay of upstream runs (nothing otherwise)."""
    found = compare(records)
    if found is not None:
        files.write_json(results_dir / FILE, found.document())


def summary_lines(records: Sequence[ScenarioRecord]) -> list[str]:
    found = compare(records)
    return [] if found is None else [found.line()]


def _summary_section(records: Sequence[ScenarioRecord]) -> list[str]:
    if not any(m.user == "replay" for m in records):  # a replay of upstream runs (docs/replay.md)
        return []
    return summary_lines(records)


def _view(run: RunFiles) -> None:
    write(run.results_dir, run.records)  # writes only for a replay of upstream runs


register_report_view(RunView(FILE, _view))
register_summary_section(SummarySection("upstream_differences", _summary_section))
