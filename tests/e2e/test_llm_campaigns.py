"""Campaign controls on the model path (docs/campaigns.md), through both transports (the OpenAI wire
path and litellm) against the loopback fake server:

- a per-scenario limit (``--tau2-max-tokens``, ``--tau2-max-cost``, ``--tau2-max-messages``) stops
  the conversation with a stop reason naming it; the item is scored (FAILED on its clean-exit
  check, never an ERROR), and metrics.json, JUnit and the summary say which limit;
- ``--tau2-budget`` with ``--tau2-price`` stops starting conversations under ``--tau2-concurrency``,
  skips the rest naming the budget, says "budget reached after N of M scenarios", and
  ``--tau2-resume`` with a new budget runs them;
- ``pytest-tau2 estimate`` prints and writes an estimate, runs nothing, and a run given the
  estimate's file shows estimate vs actual.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.llm_scripts import (
    REPO_ROOT,
    ScriptedModels,
    judge_json,
    model_options,
    node,
    run_pytest,
    subprocess_env,
)
from tests.support.fake_openai import FakeOpenAIServer, text

TRANSPORTS = ["auto", "litellm"]
PRICES = "openai/agent=2/8,openai/user=1/4,openai/judge=1/4"
"""USD per million tokens: the fake models are in no price list."""
JUDGED = "tau2_retail__2"  # 11 gold actions and one NL assertion


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    ("option", "value", "reason"),
    [
        ("--tau2-max-tokens", "9000", "max_tokens"),
        ("--tau2-max-cost", "0.02", "max_cost"),
        ("--tau2-max-messages", "6", "max_messages"),
        ("--tau2-max-duration", "1.5", "max_duration"),  # the model answers in 0.3 s: ~16 calls do not fit
    ],
)
def test_a_limit_stops_the_conversation_which_is_scored(
    tmp_path: Path, transport: str, option: str, value: str, reason: str
) -> None:
    models = ScriptedModels()
    if reason == "max_duration":
        # On a loaded machine the clock can run out before the first reply (litellm's first import
        # alone is ~4 s of CPU): the judge then sees no message naming the task. It grades that
        # empty conversation (JUDGED has one NL assertion) instead of answering no verdict.
        models.judge[""] = text(judge_json([False]))
    with FakeOpenAIServer(latency_s=0.3 if reason == "max_duration" else 0.0) as server:
        models.install(server)
        run = run_pytest(
            [
                node(JUDGED),
                *model_options(server, sides=("agent", "user", "judge")),
                "--tau2-llm-transport",
                transport,
                "--tau2-price",
                PRICES,
                option,
                value,
            ],
            tmp_path,
        )
    assert run.outcome_line(JUDGED) == "FAILED", run.stdout[-4000:]
    metrics = run.metrics(JUDGED)
    assert metrics["stop_reason"] == reason
    assert metrics["infrastructure_error"] is None  # the agent's outcome, not the run's failure
    assert metrics["clean_exit"] is False
    check = next(c for c in metrics["checks"] if c["id"] == "clean_exit")
    assert f"stop_reason: {reason}; {reason} " in check["message"] and "reached" in check["message"]
    usage = metrics["token_usage"]
    assert usage["judge"]["calls"] == 1  # the judge still grades what was said
    # Priced by --tau2-price on both transports (max_duration on a loaded machine: maybe no call).
    assert usage["agent"]["cost_usd"] > 0 or (reason == "max_duration" and usage["agent"]["calls"] == 0), usage
    spent = sum(usage[s]["total_tokens"] for s in ("agent", "user"))
    if reason == "max_tokens":
        assert spent >= 9000  # reached; the judge's own tokens are not counted
        assert "max_tokens 9000 reached" in check["message"]
    if reason == "max_cost":
        assert sum(usage[s]["cost_usd"] for s in ("agent", "user")) >= 0.02
    if reason == "max_messages":
        assert len(run.transcript(JUDGED)) >= 6
    if reason == "max_duration":
        assert "max_duration 1.5 s reached" in check["message"]
        # Stopped by the clock, not by the script's end (~16 calls): every call takes at least the
        # server's 0.3 s, so 1.5 s holds at most 5 calls and one cut short; load only makes calls
        # slower, so fewer fit. (The wall-clock bound this replaces, duration < 3 s, failed under load.)
        assert usage["agent"]["calls"] + usage["user"]["calls"] <= 6, usage
    assert run.properties(JUDGED)["stop_reason"] == reason
    assert f'"sr":"{reason}"' in (run.results_dir / "report.html").read_text("utf-8")  # the HTML report's row
    assert f"stopped by a per-scenario limit (scored as the agent's outcome): {reason} 1" in run.summary()
    # Re-scored from its transcript (no model: the saved verdicts stand), it ends where it ended.
    rescored = tmp_path / "rescored"
    done = subprocess.run(
        [sys.executable, "-m", "pytest_tau2.cli", "rescore", str(run.results_dir), "--into", str(rescored)],
        cwd=REPO_ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    again = json.loads((rescored / JUDGED / "metrics.json").read_text("utf-8"))
    assert (again["stop_reason"], again["is_successful"], again["infrastructure_error"]) == (reason, False, None)


BUDGETED = [f"tau2_retail__{i}" for i in (0, 1, 5, 6, 7, 8)]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_budget_stops_starting_conversations_and_resume_continues(tmp_path: Path, transport: str) -> None:
    models = ScriptedModels()
    with FakeOpenAIServer() as server:
        models.install(server)
        options = [
            *model_options(server),
            "--tau2-llm-transport",
            transport,
            "--tau2-price",
            PRICES,
            "--tau2-concurrency",
            "2",
        ]
        first = run_pytest([*map(node, BUDGETED), *options, "--tau2-budget", "0.2", "-rs"], tmp_path / "a")
        ran = [n for n in BUDGETED if (first.results_dir / n / "metrics.json").is_file()]
        skipped = [n for n in BUDGETED if first.outcome_line(n) == "SKIPPED"]
        assert first.returncode == 0, first.stdout[-4000:]  # skipped items fail nothing
        assert 1 <= len(ran) < len(BUDGETED) and len(ran) + len(skipped) == len(BUDGETED), first.stdout[-4000:]
        spent = sum(u["cost_usd"] for n in ran for u in first.metrics(n)["token_usage"].values() if u["calls"])
        per_run = spent / len(ran)
        assert spent <= 0.2 + 2 * per_run  # over by at most the conversations in flight (2)
        summary = first.summary()
        assert f"Budget reached after {len(ran)} of {len(BUDGETED)} scenarios (${spent:.4f} spent" in summary
        assert "run budget $0.2 reached" in first.stdout  # -rs: the skip reason names the budget
        assert f"tau2: campaign: budget=$0.2 (split evenly between xdist workers), prices: {PRICES}" in first.stdout
        for case in skipped:
            assert first.testcase(case).find("skipped") is not None  # JUnit: skipped, with the reason

        if transport != "auto":
            return  # what a resume does is the same whichever way the calls travel: checked once
        second = run_pytest(
            [*map(node, BUDGETED), *options, "--tau2-budget", "5", f"--tau2-resume={first.results_dir}"],
            tmp_path / "a",  # the same results folder, which --tau2-resume names
        )
    assert second.returncode == 0, second.stdout[-4000:]
    assert all(second.outcome_line(n) == "PASSED" for n in BUDGETED), second.stdout[-4000:]
    assert f"{len(ran)} of {len(BUDGETED)} results resumed" in second.summary()


XDIST_BUDGET = ["--tau2-budget", "0.2", "-n", "2", "-rs"]


def test_under_xdist_the_workers_split_the_budget(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        ScriptedModels().install(server)
        run = run_pytest(
            [*map(node, BUDGETED), *model_options(server), "--tau2-price", PRICES, *XDIST_BUDGET],
            tmp_path,
        )
    ran = [n for n in BUDGETED if (run.results_dir / n / "metrics.json").is_file()]
    assert run.returncode == 0, run.stdout[-4000:]
    assert 1 <= len(ran) < len(BUDGETED), run.stdout[-4000:]
    costs = [sum(u["cost_usd"] for u in run.metrics(n)["token_usage"].values() if u["calls"]) for n in ran]
    assert sum(costs) <= 0.2 + 2 * max(costs)  # each worker's $0.10 passed by at most its one in flight
    assert f"Budget reached after {len(ran)} of {len(BUDGETED)} scenarios" in run.summary()
    assert "run budget $0.1 reached" in run.stdout  # a worker's share: the budget is split, not shared


def test_repeated_price_flags_all_count_in_a_budget_run(tmp_path: Path) -> None:
    """``--tau2-price A --tau2-price B`` is ``--tau2-price A,B``: both models are priced (issue 38:
    the last flag alone used to count, and the budget refused the other model as unpriced)."""
    with FakeOpenAIServer() as server:
        ScriptedModels().install(server)
        repeated = ["--tau2-price", "openai/agent=2/8", "--tau2-price", "openai/user=1/4"]
        run = run_pytest([node("tau2_retail__0"), *model_options(server), *repeated, "--tau2-budget", "5"], tmp_path)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "prices: openai/agent=2/8,openai/user=1/4" in run.stdout
    usage = run.metrics("tau2_retail__0")["token_usage"]
    for side, (rate_in, rate_out) in (("agent", (2, 8)), ("user", (1, 4))):
        expected = (usage[side]["prompt_tokens"] * rate_in + usage[side]["completion_tokens"] * rate_out) / 1e6
        assert usage[side]["calls"] and usage[side]["cost_usd"] == pytest.approx(expected), (side, usage[side])


def test_an_unpriced_model_refuses_a_budget_in_one_line(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        run = run_pytest([node("tau2_retail__0"), *model_options(server), "--tau2-budget", "1"], tmp_path)
    assert run.returncode == 4  # a usage error
    assert (
        "--tau2-budget: model 'openai/agent' (--tau2-agent-model) has no price in litellm's price list; "
        "give one with --tau2-price openai/agent=IN/OUT" in run.stderr
    ), run.stderr


ESTIMATED = ["tau2_retail__0", "tau2_retail__2"]


@pytest.fixture(scope="module")
def estimate_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pytest-tau2 estimate`` of two retail scenarios (it calls no model: the server is never asked)."""
    path = tmp_path_factory.mktemp("estimate") / "estimate.json"
    with FakeOpenAIServer() as server:
        done = subprocess.run(
            [sys.executable, "-m", "pytest_tau2.cli", "estimate", *map(node, ESTIMATED), *model_options(server),
             "--tau2-price", PRICES, f"--tau2-estimate-file={path}", "-p", "no:cacheprovider"],
            cwd=REPO_ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=240, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert not server.requests  # nothing was run, nothing paid
    assert "tau2: Estimate of 2 scenario runs (2 from prompt sizes): low / mid / high" in done.stdout
    assert "passed" not in done.stdout and "no scenario selected" not in done.stdout
    return path


def test_the_estimate_has_a_range_and_a_price(estimate_file: Path) -> None:
    saved = json.loads(estimate_file.read_text("utf-8"))
    low, mid, high = (saved["total"][level] for level in ("low", "mid", "high"))
    assert 0 < low["tokens"] < mid["tokens"] < high["tokens"]
    assert 0 < low["cost_usd"] < mid["cost_usd"] < high["cost_usd"]
    assert [item["source"] for item in saved["items"]] == ["prompt sizes", "prompt sizes"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_run_given_the_estimate_shows_estimate_vs_actual(tmp_path: Path, transport: str, estimate_file: Path) -> None:
    with FakeOpenAIServer() as server:
        ScriptedModels().install(server)
        options = [*model_options(server), "--tau2-llm-transport", transport, "--tau2-price", PRICES]
        run = run_pytest([*map(node, ESTIMATED), *options, f"--tau2-estimate-file={estimate_file}"], tmp_path)
    assert run.returncode == 0, run.stdout[-4000:]
    summary = run.summary()
    assert "Estimate vs actual (2 scenarios of the estimate ran)" in summary
    actual = sum(run.metrics(n)["token_usage"][s]["total_tokens"] for n in ESTIMATED for s in ("agent", "user"))
    assert f"-> {actual:,}" in summary
    assert "Estimate vs actual" in run.stdout  # the terminal summary says the same


def test_a_budget_that_stops_every_scenario_still_writes_the_run_files(tmp_path: Path) -> None:
    """A budget below one conversation's expected cost starts none: every scenario is skipped, and
    the run still says why and writes its files (issue 38 point 7: it printed only "3 skipped")."""
    with FakeOpenAIServer() as server:
        ScriptedModels().install(server)
        options = [*model_options(server), "--tau2-price", PRICES, "--tau2-budget", "0.000001"]
        run = run_pytest([*map(node, BUDGETED[:3]), *options], tmp_path)
        calls = len(server.requests)
    assert run.returncode == 0 and calls == 0, run.stdout[-3000:]
    assert "3 skipped" in run.stdout.splitlines()[-1]
    assert "Budget reached after 0 of 3 scenarios ($0.0000 spent in this run): 3 not started" in run.stdout
    assert (run.results_dir / "all_metrics.json").is_file()
    assert run.summary().startswith("Budget reached after 0 of 3 scenarios")
