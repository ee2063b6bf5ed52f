"""The tau2-reward and pass^k lines of the run summary, and all_metrics.json's pass_hat_k block."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_tau2.report.leaderboard import (
    domain_lines,
    pass_hat_k_document,
    six_signal_trials,
    summary_lines,
    tau2_reward_trials,
)


def item(
    scenario: str,
    trial: int,
    *,
    ok: bool | str = True,
    reward: float | None = 1.0,
    trials: int = 4,
    infra: bool = False,
    nl_missing: bool = False,
) -> dict[str, Any]:
    tau2 = scenario.startswith("tau2_")
    return {
        "scenario": scenario,
        "domain": scenario.split("__")[0],
        "tau2_id": scenario.split("__")[1] if tau2 else None,
        "trial": trial,
        "trials": trials,
        "is_successful": False if infra else ok,
        "infrastructure_error": "the model endpoint is unreachable" if infra else None,
        "success_signals": ["db_state_match", "clean_exit"],
        "tau2_reward": None if infra or not tau2 else reward,
        "tau2_reward_info": {"not_evaluated": ["NL_ASSERTION"] if nl_missing else []} if tau2 else None,
    }


def four(scenario: str, rewards: str, oks: str | None = None) -> list[dict[str, Any]]:
    """``rewards``: 1 / 0 per trial, ``-`` an infrastructure error; ``oks`` the six-signal verdicts."""
    out = []
    for index, mark in enumerate(rewards, start=1):
        ok = (oks or rewards)[index - 1] == "1"
        out.append(item(scenario, index, ok=ok, reward=float(mark == "1"), infra=mark == "-"))
    return out


RUN = (
    four("tau2_retail__1", "1111")
    + four("tau2_retail__2", "1010", oks="1110")
    + four("tau2_airline__3", "1-01")
    + four("tau2_airline__4", "0000", oks="1111")
)


def test_trials_from_metrics() -> None:
    tau2 = tau2_reward_trials(RUN)
    assert len(tau2) == 16 and sum(t.infrastructure_error for t in tau2) == 1
    six = six_signal_trials([*RUN, item("restaurant__x", 1, ok="N/A", reward=None)])
    assert six[-1].success is None  # N/A: no verdict
    assert not [t for t in tau2_reward_trials([item("restaurant__x", 1)])]  # only tau2 tasks have a reward


def test_summary_lines_with_four_trials() -> None:
    """tau2 reward: retail__1 4/4, retail__2 2/4, airline__3 2 of 3 valid, airline__4 0/4.

    max k = 3 (airline__3). pass^1 = (1 + 1/2 + 2/3 + 0)/4 = 13/24; pass^2 = (1 + 1/6 + 1/3 + 0)/4 = 3/8;
    pass^3 = (1 + 0 + 0 + 0)/4 = 1/4. Average over the 15 valid trials: 8/15.
    Six-signal: 4/4, 3/4, 2 of 3, 4/4 -> pass^1 = (1 + 3/4 + 2/3 + 1)/4 = 41/48.
    """
    lines = summary_lines(RUN)
    assert lines[0] == (
        "tau2 reward: 0.533 average over 15 trials of 4 tasks; pass^1 0.542, pass^2 0.375, pass^3 0.250, pass^4 n/a"
    )
    assert lines[1] == (
        "  1 of 16 trials lost to infrastructure errors; 1 task has fewer than 4 valid trials; "
        "pass^k reported up to k=3"
    )
    assert lines[2].startswith("Six-signal verdict over 4 trials per scenario: pass^1 0.854, ")


def test_errors_without_a_result_are_lost_trials() -> None:
    run = four("tau2_retail__1", "111") + four("tau2_retail__2", "1111")
    lines = summary_lines(run, ["tau2_retail__1-t4"])
    assert "1 of 8 trials lost to infrastructure errors" in lines[1]
    assert "1 task has fewer than 4 valid trials" in lines[1]


def test_one_trial_shows_the_reward_and_what_was_not_evaluated() -> None:
    run = [item("tau2_retail__1", 1, trials=1, nl_missing=True), item("tau2_retail__2", 1, trials=1, reward=0.0)]
    lines = summary_lines(run)
    assert lines == [
        "tau2 reward: 0.500 average over 2 trials of 2 tasks",
        "  NL_ASSERTION not evaluated in 1 trials (no judge): those rewards leave it out and are not "
        "leaderboard-comparable",
    ]


def test_no_tau2_task_and_one_trial_adds_nothing() -> None:
    assert summary_lines([item("restaurant__x", 1, trials=1)]) == []
    assert domain_lines([item("restaurant__x", 1, trials=1)]) == []


def test_the_verdict_in_force_is_named() -> None:
    run = [dict(item("tau2_retail__1", 1, trials=1), success_signals=["tau2_reward"])]
    assert summary_lines(run)[0] == "Verdict: tau2 reward (--tau2-verdict tau2-reward) decides the tau2 items"


def test_domain_lines() -> None:
    airline = [m for m in RUN if m["domain"] == "tau2_airline"]
    lines = domain_lines(airline)
    assert lines[0].startswith("tau2 reward: 0.286 average over 7 trials of 2 tasks; pass^1 0.333, pass^2 0.167")
    assert lines[0].endswith("(1 of 8 trials lost to infrastructure errors; 1 task has fewer than 4 valid trials; "
                             "pass^k reported up to k=3)")  # fmt: skip
    assert lines[1].startswith("six-signal: pass^1 0.833")  # (2/3 + 1)/2


def test_all_metrics_block() -> None:
    doc = pass_hat_k_document(RUN)
    json.dumps(doc)
    assert doc["trials_per_task"] == 4
    assert doc["tau2_reward"]["run"]["pass_hat_k"]["1"] == pytest.approx(13 / 24)
    assert doc["tau2_reward"]["run"]["pass_hat_k"]["4"] is None
    assert doc["tau2_reward"]["domains"]["tau2_retail"]["pass_hat_k"]["4"] == pytest.approx(1 / 2)  # (1 + 0)/2
    assert doc["six_signal"]["run"]["infrastructure_errors"] == 1
    assert doc["tau2_reward"]["not_evaluated"] == {}
    assert set(doc["six_signal"]["domains"]) == {"tau2_airline", "tau2_retail"}
