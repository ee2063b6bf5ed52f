"""Judge agreement of a run: records -> rating table -> stats/agreement.py -> all_metrics.json and summary.

A run with several judges (``--tau2-judge-model A,B,C``) keeps every judge's verdict per NL
assertion (``nl_assertion_verdicts[*].judges``, scoring/jury.py). Each judged assertion of each
trial is one item of the rating table; the statistics are pairwise agreement and Cohen's kappa
per pair of judges, and Fleiss' kappa over all of them (docs/rescoring.md).

``pytest-tau2 rescore`` uses the same table for the saved judge against the new one
(:func:`between`): the numbers mean the same thing whichever way the verdicts were made.
A run with one judge has no block (its files stay as they were).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.stats.agreement import agreement

KEY = "judge_agreement"
"""all_metrics.json's key (and the report's section)."""


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def document_of(labels: Sequence[str], rows: Sequence[Sequence[bool | None]]) -> dict[str, Any]:
    """The block for ``rows`` (one label per judge of ``labels``, None where a judge gave none)."""
    found = agreement(rows)
    return {
        "judges": list(labels),
        "assertions": found.items,
        "unanimous": found.unanimous,
        "fleiss_kappa": _round(found.fleiss_kappa),
        "pairs": [
            {
                "judges": [labels[pair.first], labels[pair.second]],
                "assertions": pair.items,
                "agreement": _round(pair.agreement),
                "cohen_kappa": _round(pair.kappa),
            }
            for pair in found.pairs
        ],
    }


def _panel(verdict: Mapping[str, object]) -> list[Mapping[str, object]]:
    judges = verdict.get("judges")
    return [j for j in judges if isinstance(j, Mapping)] if isinstance(judges, list) else []


def _label(verdict: Mapping[str, object]) -> bool | None:
    passed = verdict.get("passed")
    return passed if isinstance(passed, bool) else None


def nl_verdicts(record: ScenarioRecord) -> list[Mapping[str, object]]:
    """A record's per-assertion verdicts (nl_assertion_verdicts), as mappings."""
    from pytest_tau2.scoring.signals import SuccessSignal, signal_specs

    spec = next((s for s in signal_specs() if s.key == SuccessSignal.NL_ASSERTION), None)
    return [v for v in (record.evidence(spec) if spec is not None else []) if isinstance(v, Mapping)]


def document(records: Sequence[ScenarioRecord]) -> dict[str, Any] | None:
    """The run's judge agreement, or None when no result was judged by several judges.

    Should trials have different panels (merged runs), the panel that judged most assertions is
    the one measured, and the block says how many assertions of other panels were left out.
    """
    by_panel: dict[tuple[str, ...], list[list[bool | None]]] = {}
    for record in records:
        for verdict in nl_verdicts(record):
            panel = _panel(verdict)
            if len(panel) < 2:
                continue
            labels = tuple(str(j.get("judge") or f"judge {i + 1}") for i, j in enumerate(panel))
            by_panel.setdefault(labels, []).append([_label(j) for j in panel])
    if not by_panel:
        return None
    labels, rows = max(by_panel.items(), key=lambda item: len(item[1]))
    block = document_of(labels, rows)
    other = sum(len(r) for panel, r in by_panel.items() if panel != labels)
    if other:
        block["other_panels_left_out"] = other
    return block


def between(
    saved: Sequence[ScenarioRecord], new: Sequence[ScenarioRecord], saved_label: str, new_label: str
) -> dict[str, Any] | None:
    """The saved run's judge against the new one, over the assertions both judged (same trial, same
    index): None when no assertion was judged by both."""
    old = {(r.folder, i): v for r in saved for i, v in enumerate(nl_verdicts(r))}
    rows = []
    for record in new:
        for index, verdict in enumerate(nl_verdicts(record)):
            before = old.get((record.folder, index))
            if before is not None and before.get("assertion") == verdict.get("assertion"):
                rows.append([_label(before), _label(verdict)])
    if not rows:
        return None
    return document_of([saved_label, new_label], rows)


def _number(value: object, percent: bool = False) -> str:
    if not isinstance(value, int | float):
        return "undefined (every verdict was the same)"
    return f"{100 * value:.1f}%" if percent else f"{value:.3f}"


def summary_lines(block: Mapping[str, Any] | None, title: str = "Judge agreement") -> list[str]:
    """The summary's lines for a block of :func:`document` or :func:`between` (none for None)."""
    if not block:
        return []
    judges = list(block.get("judges") or [])
    lines = [
        f"{title} ({len(judges)} judges, {block.get('assertions', 0)} assertions judged by all, "
        f"{block.get('unanimous', 0)} unanimous): Fleiss' kappa {_number(block.get('fleiss_kappa'))}"
    ]
    for pair in block.get("pairs") or []:
        first, second = pair.get("judges") or ["?", "?"]
        lines.append(
            f"  {first} vs {second}: agreement {_number(pair.get('agreement'), percent=True)}, "
            f"Cohen's kappa {_number(pair.get('cohen_kappa'))} ({pair.get('assertions', 0)} assertions)"
        )
    if block.get("other_panels_left_out"):
        lines.append(f"  ({block['other_panels_left_out']} assertions judged by other panels left out)")
    return lines


def disagreements(records: Sequence[ScenarioRecord]) -> Counter[str]:
    """How many assertions each trial's judges split on, by result folder (for the report)."""
    found: Counter[str] = Counter()
    for record in records:
        for verdict in nl_verdicts(record):
            if len({_label(j) for j in _panel(verdict)}) > 1:
                found[record.folder] += 1
    return found
