"""A jury that disagrees, as the HTML report shows it in headless Chromium.

One real run (a ``python -m pytest`` subprocess): the offline oracle on retail task 36 (two NL
assertions), judged by two judges on the loopback fake OpenAI server given as a repeated
``--tau2-judge-model``. judgeA finds both assertions met; judgeB finds the first not met: a tie,
so the first assertion is not met (docs/rescoring.md) and the item fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai import FakeOpenAIServer, Reply, text
from tests.support.tau2_data import DATA_DIR, has_data, skip_reason

REPO = Path(__file__).resolve().parents[2]
TASK = "tau2_retail__36"
DISSENT = "judgeB: the agent never named the most expensive item."

if not has_data("retail"):
    pytest.skip(skip_reason("retail"), allow_module_level=True)


def _judge(dissent: bool) -> Any:
    def answer(request: dict[str, Any]) -> Reply:
        prompt = str(request["messages"][-1]["content"])
        numbered = re.findall(r"^(\d+)\. ", prompt.split("## nl_assertions", 1)[-1], re.MULTILINE)
        verdicts = [
            {"index": i, "passed": not (dissent and i == 0), "reason": DISSENT if dissent and i == 0 else "Stated."}
            for i in range(len(numbered))
        ]
        return text(json.dumps({"verdicts": verdicts}))

    return answer


@pytest.fixture(scope="module")
def jury_run(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Path:
    results = tmp_path_factory.mktemp("jury") / "results"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU2_", "PYTEST_"))}
    env.update(TAU2_DATA_DIR=str(DATA_DIR), LITELLM_LOCAL_MODEL_COST_MAP="True")
    with FakeOpenAIServer() as server:
        server.add_handler("judgeA", _judge(False))
        server.add_handler("judgeB", _judge(True))
        args = json.dumps({"api_base": server.base_url, "api_key": "sk-jury-report-test"})
        command = [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--tau2-results-dir={results}",
            "--tau2-scenarios", TASK, "--tau2-judge-model", "openai/judgeA", "--tau2-judge-model", "openai/judgeB",
            "--tau2-judge-args", args,
        ]  # fmt: skip
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]  # the tie fails the item
    assert "judge=openai/judgeA,openai/judgeB (majority of 2; a tie fails)" in done.stdout
    return results


def test_the_report_shows_the_judges_agreement_and_their_disagreement(jury_run: Path, open_report: Any) -> None:
    page = open_report(jury_run / "report.html")
    card = page.page.inner_text("#judge-agreement")
    assert "Judge agreement (2 judges, 2 assertions judged by all, 1 unanimous)" in card
    assert "openai/judgeA vs openai/judgeB: agreement 50.0%" in card
    assert TASK in card
    assert "judges disagree: 1" in page.page.inner_text(f'#scenario-body tr[data-key="{TASK}"]')
    page.open_panel(TASK)
    first = page.page.inner_text('#panel-body [data-check="nl_assertion[0]"]')
    assert "judges disagree" in first and DISSENT in first and "openai/judgeA" in first
    assert "1 of 2 judges found it met (a tie is not met)" in first
    second = page.page.inner_text('#panel-body [data-check="nl_assertion[1]"]')
    assert "unanimous" in second
    assert page.errors == []


def test_the_tie_and_every_judge_are_saved(jury_run: Path) -> None:
    metrics = json.loads((jury_run / TASK / "metrics.json").read_text("utf-8"))
    first, second = metrics["nl_assertion_verdicts"]
    assert first["passed"] is False and second["passed"] is True
    assert [(j["judge"], j["passed"]) for j in first["judges"]] == [("openai/judgeA", True), ("openai/judgeB", False)]
    summary = (jury_run / "all_summary.txt").read_text("utf-8")
    assert "Judge agreement (2 judges, 2 assertions judged by all, 1 unanimous): Fleiss' kappa" in summary
    block = json.loads((jury_run / "all_metrics.json").read_text("utf-8"))["judge_agreement"]
    assert block["pairs"][0]["agreement"] == 0.5
    run = json.loads((jury_run / "run.json").read_text("utf-8"))
    assert [j["model"] for j in run["fingerprint"]["judge_model"]] == ["openai/judgeA", "openai/judgeB"]
