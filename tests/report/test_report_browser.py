"""The HTML report of real runs, opened in headless Chromium: what a person sees and can do.

Two real runs of this repository's scenarios (each a ``python -m pytest`` subprocess):

- **sweep**: the offline oracle over the restaurant scenarios and a few retail, airline and
  telecom tasks: everything passes;
- **failing**: the replay agent on four retail tasks with perturbed trajectories (docs/replay.md)
  and an NL judge on the loopback fake OpenAI server: task 0 misses its last write (DB diff),
  task 2 replays no call at all (DB diff, and the judge fails one NL assertion with a reason),
  task 1 makes a call that errors before the gold ones (passes, with a tool error), task 5 is gold.

Their reports, and the comparison of the two, are checked for counts, the failing scenario's
evidence and working filters; screenshots land in the test's temporary folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.report.html import write_report
from tests.support.fake_openai import FakeOpenAIServer, Reply, text
from tests.support.tau2_data import DATA_DIR, has_data, skip_reason

REPO = Path(__file__).resolve().parents[2]
TELECOM = "tau2_telecom__service_issue_overdue_bill_suspension_unseat_sim_card_persona_easy"
SWEEP = ["restaurant__*", "tau2_retail__0", "tau2_retail__1", "tau2_retail__2", "tau2_retail__5",
         "tau2_airline__3", TELECOM]  # fmt: skip
REPLAYED = ["tau2_retail__0", "tau2_retail__1", "tau2_retail__2", "tau2_retail__5"]
WRITES = {"cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
          "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
          "return_delivered_order_items"}  # fmt: skip
JUDGE_REASON = "The agent never told the customer how many t-shirt options are available."

if not has_data("retail", "airline", "telecom"):
    pytest.skip(skip_reason("retail", "airline", "telecom"), allow_module_level=True)


def _gold(task_id: str) -> list[dict[str, Any]]:
    tasks = json.loads((DATA_DIR / "tau2" / "domains" / "retail" / "tasks.json").read_text("utf-8"))
    task = next(t for t in tasks if t["id"] == task_id)
    return [{"name": a["name"], "arguments": a["arguments"]} for a in task["evaluation_criteria"]["actions"]]


def _replay_file(folder: Path) -> Path:
    gold0 = _gold("0")
    last_write = max(i for i, a in enumerate(gold0) if a["name"] in WRITES)
    unknown_order = {"name": "get_order_details", "arguments": {"order_id": "#W0"}}  # a tool error
    records = [
        {"scenario": "tau2_retail__0", "actions": gold0[:last_write] + gold0[last_write + 1 :]},
        {"scenario": "tau2_retail__1", "actions": [unknown_order, *_gold("1")]},
        {"scenario": "tau2_retail__2", "actions": []},
        {"scenario": "tau2_retail__5", "actions": _gold("5")},
    ]
    path = folder / "perturbed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


def _judge(request: dict[str, Any]) -> Reply:
    """Passes every NL assertion but the last, which fails with JUDGE_REASON."""
    prompt = str(request["messages"][-1]["content"])
    numbered = re.findall(r"^(\d+)\. ", prompt.split("## nl_assertions", 1)[-1], re.MULTILINE)
    last = len(numbered) - 1
    verdicts = [
        {"index": i, "passed": i != last, "reason": JUDGE_REASON if i == last else "Stated in the transcript."}
        for i in range(len(numbered))
    ]
    return text(json.dumps({"verdicts": verdicts}))


def _pytest(results: Path, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU2_", "PYTEST_"))}
    env.update(TAU2_DATA_DIR=str(DATA_DIR), LITELLM_LOCAL_MODEL_COST_MAP="True")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--tau2-results-dir={results}",
               "--tau2-prompts=seed", *args]  # the oracle's own exit tool: the seed prompts  # fmt: skip
    return subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@dataclass
class Reports:
    sweep: Path
    failing: Path
    comparison: Path
    sweep_dir: Path
    failing_dir: Path
    shots: Path


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Reports]:
    """Both runs at once (two processes), then their reports and the comparison.

    Asks for the browser first, so that without one the module skips before running anything."""
    root = tmp_path_factory.mktemp("report")
    sweep_dir, failing_dir = root / "sweep", root / "failing"
    with FakeOpenAIServer() as judge:
        judge.add_handler("judge", _judge)
        judge_args = json.dumps({"api_base": judge.base_url, "api_key": "sk-report-test"})
        runs = [
            _pytest(sweep_dir, "--tau2-scenarios", ",".join(SWEEP)),
            _pytest(failing_dir, "--tau2-scenarios", ",".join(REPLAYED),
                    "--tau2-agent", f"replay:{_replay_file(root)}",
                    "--tau2-judge-model", "openai/judge", "--tau2-judge-args", judge_args),
        ]  # fmt: skip
        outputs = [run.communicate(timeout=300)[0] for run in runs]
    assert runs[0].returncode == 0, outputs[0][-3000:]
    assert runs[1].returncode == 1, outputs[1][-3000:]  # two scenarios fail, by design
    for folder, output in ((sweep_dir, outputs[0]), (failing_dir, outputs[1])):
        assert (folder / "report.html").is_file(), f"the run wrote no report.html:\n{output[-2000:]}"
    shots = root / "screenshots"
    shots.mkdir()
    yield Reports(
        sweep=sweep_dir / "report.html",  # as the end of the run wrote them
        failing=failing_dir / "report.html",
        comparison=write_report([sweep_dir, failing_dir], root / "comparison.html"),
        sweep_dir=sweep_dir,
        failing_dir=failing_dir,
        shots=shots,
    )


def _scenarios(results: Path) -> list[dict[str, Any]]:
    return list(json.loads((results / "all_metrics.json").read_text("utf-8"))["scenarios"])


def test_offline_sweep_overview_counts_and_filters(reports: Reports, open_report: Any) -> None:
    scenarios = _scenarios(reports.sweep_dir)
    page = open_report(reports.sweep)
    assert page.page.inner_text('[data-kpi="success"]') == "100.0%"
    assert page.page.inner_text('[data-kpi="passed"]') == str(len(scenarios))
    assert page.page.inner_text('[data-kpi="failed"]') == "0"
    assert page.shown() == f"{len(scenarios)} of {len(scenarios)} shown"
    for domain in ("restaurant", "tau2_retail", "tau2_airline", "tau2_telecom"):
        assert domain in (page.page.text_content("#overview svg.chart >> nth=0") or "")
    page.screenshot(reports.shots / "sweep-overview.png")

    page.page.select_option("#f-domain", "restaurant")
    restaurant = sorted(s["scenario"] for s in scenarios if s["domain"] == "restaurant")
    assert sorted(page.rows()) == restaurant and len(restaurant) == 6
    page.page.fill("#f-search", "pepperoni")
    assert page.rows() == ["restaurant__pepperoni_mushrooms", "restaurant__pizza_pepperoni"]
    page.page.click("#f-reset")
    assert len(page.rows()) == len(scenarios)

    text = page.open_panel(TELECOM)  # dual-side: user tool calls and DB-state predicates
    assert "assert_service_status" in text and "make_payment" in text
    assert "conversation ended: exit" in text
    assert page.errors == []


def test_failing_run_puts_failures_first_and_shows_the_evidence(reports: Reports, open_report: Any) -> None:
    page = open_report(reports.failing)
    assert page.page.inner_text('[data-kpi="failed"]') == "2"
    assert page.page.inner_text('[data-kpi="success"]') == "50.0%"
    assert page.rows()[:2] == ["tau2_retail__0", "tau2_retail__2"]  # failed first
    page.screenshot(reports.shots / "failing-overview.png", full_page=True)

    text = page.open_panel("tau2_retail__0")
    assert "db_state_match" in text
    diff = page.page.inner_text('#panel-body [data-check="db_state_match"]')
    assert "root['orders']['#W2378156']['status']" in diff
    assert "expected 'exchange requested' but found 'delivered'" in diff
    assert page.page.inner_text("#panel-body .diff-line .diff-act >> nth=0")  # the actual value is highlighted
    assert "no identical call in the transcript" in page.page.inner_text('#panel-body [data-check="action_match"]')
    page.screenshot(reports.shots / "failing-panel.png")
    page.close_panel()

    text = page.open_panel("tau2_retail__2")
    assert JUDGE_REASON in page.page.inner_text('#panel-body [data-check="nl_assertion[0]"]')
    assert "judge tokens" in text.lower()  # the judge ran through the fake server
    page.close_panel()

    text = page.open_panel("tau2_retail__1")  # passed, but a call errored: shown in red
    assert page.page.locator("#panel-body .call.error").count() == 1
    assert "Order not found" in page.page.inner_text("#panel-body .call.error")
    hrefs = page.page.eval_on_selector_all("#panel-body .files a", "links => links.map(a => a.getAttribute('href'))")
    assert "tau2_retail__1/transcript.json" in hrefs
    assert all((reports.failing_dir / href).is_file() for href in hrefs)
    page.close_panel()

    page.page.select_option("#f-signal", "db_state_match")
    assert page.rows() == ["tau2_retail__0", "tau2_retail__2"]
    page.page.select_option("#f-signal", "")
    page.page.select_option("#f-outcome", "passed")
    assert page.rows() == ["tau2_retail__1", "tau2_retail__5"]
    page.page.click('#scenario-head th[data-col="dur"]')
    page.page.click('#scenario-head th[data-col="dur"]')  # descending
    # The page sorts by the duration it shows, to the millisecond: a tie at that precision may go either way.
    passed = [s for s in _scenarios(reports.failing_dir) if s["is_successful"] is True]
    durations = {s["scenario"]: round(s["duration_s"], 3) for s in passed}
    assert len(durations) == 2 and durations[page.rows()[0]] == max(durations.values())
    assert page.errors == []


def test_comparison_flags_the_scenarios_that_flipped(reports: Reports, open_report: Any) -> None:
    page = open_report(reports.comparison)
    total = len({s["scenario"] for s in _scenarios(reports.sweep_dir) + _scenarios(reports.failing_dir)})
    assert page.shown() == f"{total} of {total} shown"
    assert "2 flipped" in page.page.inner_text("#flips")
    page.page.select_option("#f-flip", "broke")
    assert page.rows() == ["tau2_retail__0", "tau2_retail__2"]
    page.page.select_option("#f-flip", "fixed")
    assert page.rows() == []
    page.page.select_option("#f-a", "1")
    page.page.select_option("#f-b", "0")
    assert page.rows() == ["tau2_retail__0", "tau2_retail__2"]  # failed in A (now the failing run), passed in B
    page.screenshot(reports.shots / "comparison.png", full_page=True)

    page.page.select_option("#f-flip", "flipped")
    page.open_panel("tau2_retail__0")
    assert page.page.locator("#panel-body .run-tabs button").count() == 2
    page.page.click('#panel-body .run-tabs button[data-run="1"]')
    page.page.wait_for_selector('#panel-body [data-check="db_state_match"] .diff-line')
    assert page.errors == []


def test_compressed_details_open_in_the_browser(reports: Reports, open_report: Any, tmp_path: Path) -> None:
    """Large reports store details gzip-compressed; the page inflates them when a panel opens."""
    from pytest_tau2.report.html.loader import load_run
    from pytest_tau2.report.html.render import render_report

    html = render_report([load_run(reports.failing_dir)], reports.failing_dir, compress=True)
    assert 'type="application/x-tau2-gzip"' in html
    path = reports.failing_dir / "compressed.html"
    path.write_text(html, "utf-8")
    page = open_report(path, "#s=tau2_retail__0")
    page.page.wait_for_selector('#panel-body [data-check="db_state_match"]')
    assert "exchange requested" in page.page.inner_text("#panel-body")
    assert page.errors == []
