"""The report's intervals, the paired comparison card and the do-nothing marks (docs/statistics.md)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pytest_tau2.report import files, uncertainty
from pytest_tau2.report.html import write_report
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.run_record import RunMetrics


def write_run(path: Path, passed: set[int], *, tasks: int = 40, level: float | None = None) -> Path:
    """tau2 retail tasks 0..tasks-1, one trial each; ``passed`` decides which pass."""
    records = [
        ScenarioRecord.read(
            {
                "scenario": f"tau2_retail__{t}",
                "domain": "tau2_retail",
                "tau2_id": str(t),
                "is_successful": t in passed,
                "success_signals": ["db_state_match"],
                "tau2_reward": 1.0 if t in passed else 0.0,
            }
        )
        for t in range(tasks)
    ]
    other: dict[str, Any] = {}
    if level is not None:
        other["intervals"] = uncertainty.document(records, [], level)
    path.mkdir(parents=True)
    files.write_json(path / "all_metrics.json", RunMetrics.of(records, [], **other).document())
    return path


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_a_run_report_shows_its_intervals_at_the_runs_level(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", set(range(30)), level=0.9)
    page = text(write_report([run], tmp_path / "r.html").read_text("utf-8"))
    assert "90% interval [" in page and "· Wilson" in page
    assert "How sure" in page and "success rate: 75.0% [" in page
    # retail 10, 12, 24, 25 are tasks the do-nothing agent passes (report/null_passes.json)
    assert "4 of these tasks a do-nothing agent also passes" in page
    assert '"do-nothing passes"' in (tmp_path / "r.html").read_text("utf-8")  # the table's marker


def test_the_comparison_view_holds_the_paired_comparison(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", set(range(30)))
    b = write_run(tmp_path / "b", set(range(8)))
    page = text(write_report([a, b], tmp_path / "c.html").read_text("utf-8"))
    assert "Paired comparison: a (A) vs b (B)" in page
    assert "A better: -55.0 points [" in page and "40 paired tasks" in page
    assert "Test: McNemar exact" in page
    assert "Better in A (22):" in page


def test_the_comparison_view_says_why_it_did_not_pair(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", set(range(5)), tasks=10)
    b = write_run(tmp_path / "b", set(range(5)), tasks=12)
    page = text(write_report([a, b], tmp_path / "c.html").read_text("utf-8"))
    assert "Not compared: cannot pair the runs: the scenario sets differ: 2 only in B" in page


def test_the_paired_card_renders_in_the_browser(tmp_path: Path, open_report: Any) -> None:
    a = write_run(tmp_path / "a", set(range(30)))
    b = write_run(tmp_path / "b", set(range(8)))
    page = open_report(write_report([a, b], tmp_path / "c.html"))
    card = str(page.page.inner_text("#paired-1"))
    assert "A better" in card and "McNemar exact" in card
    assert page.errors == []
    page.screenshot(tmp_path / "paired.png", full_page=True)


def test_unstable_tasks_are_marked_with_their_flip_rate(tmp_path: Path) -> None:
    records = [
        ScenarioRecord.read({"scenario": f"lab__{t}", "domain": "lab", "trial": k, "trials": 4,
                             "is_successful": t == "steady" or (t == "shaky" and k != 2),
                             "success_signals": ["db_state_match"]})
        for t in ("steady", "shaky")
        for k in range(1, 5)
    ]  # fmt: skip
    run = tmp_path / "run"
    run.mkdir()
    files.write_json(run / "all_metrics.json", RunMetrics.of(records, []).document())
    html = write_report([run], tmp_path / "r.html").read_text("utf-8")
    assert html.count("unstable: flip 25%") == 4  # each of lab__shaky's four trials, none of lab__steady's
    assert "1 of 2 tasks unstable (50%)" in text(html)
