"""pytest-tau2 compare: pairing, refusal, the tests chosen, Holm over domains, the verdict line, JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.cli import main
from pytest_tau2.report import files
from pytest_tau2.report.compare import compare_outcomes
from pytest_tau2.report.compare_runs import CompareError, RunSide, compare
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.run_record import RunMetrics
from pytest_tau2.stats import mcnemar_exact


def record(name: str, ok: bool, *, trial: int = 1, trials: int = 1, pin: str | None = None) -> ScenarioRecord:
    domain = name.split("__")[0]
    data: dict[str, Any] = {"scenario": name, "domain": domain, "trial": trial, "trials": trials, "is_successful": ok,
                            "success_signals": ["db_state_match"]}  # fmt: skip
    if pin:
        data["data_pin"] = {"commit": pin}
    return ScenarioRecord.read(data)


def side(label: str, outcomes: dict[str, str], *, pin: str | None = None) -> RunSide:
    """``{"d__1": "1101"}``: one record per trial."""
    trials = max(len(v) for v in outcomes.values())
    records = [
        record(name, c == "1", trial=i + 1, trials=trials, pin=pin)
        for name, text in outcomes.items()
        for i, c in enumerate(text)
    ]
    return RunSide(label, records)


def write_run(path: Path, s: RunSide) -> Path:
    path.mkdir(parents=True)
    files.write_json(path / "all_metrics.json", RunMetrics.of(s.records, []).document())
    return path


def test_one_trial_uses_mcnemar_on_the_discordant_tasks() -> None:
    # 20 tasks: 1 broke (passed in A only), 9 fixed (passed in B only), the rest agree:
    # p = 2 * (1 + 10) / 2^10 = 0.0215
    a = {f"d__{i}": "1" if i < 10 else "0" for i in range(20)}
    b = {f"d__{i}": "1" if 1 <= i < 19 else "0" for i in range(20)}
    result = compare(side("A", a), side("B", b))
    primary = result.run.primary
    assert primary.test == "McNemar exact"
    assert primary.p_value == pytest.approx(mcnemar_exact(1, 9)) == pytest.approx(22 / 1024)
    assert primary.a_only == ["d__0"] and len(primary.b_only) == 9
    assert primary.difference == pytest.approx(8 / 20) and primary.a == 0.5 and primary.b == pytest.approx(0.9)
    assert primary.verdict == "B better"
    assert primary.line().startswith("B better: +40.0 points [")
    assert primary.line().endswith(f", p = {primary.p_value:.3g}, 20 paired tasks")


def test_several_trials_use_the_permutation_test_and_compare_pass_k() -> None:
    a = {f"d__{i}": "1111" if i < 6 else "0000" for i in range(12)}
    b = {f"d__{i}": "1111" if i < 6 else "1100" for i in range(12)}
    result = compare(side("A", a), side("B", b))
    names = [m.name for m in result.run.metrics]
    assert names == ["success rate", "pass^2", "pass^3", "pass^4"]
    primary = result.run.primary
    assert primary.test == "paired permutation over tasks"
    # six tasks each +0.5, every other task 0: the exact test sees 2^6 sign patterns, two as extreme
    assert primary.p_value == pytest.approx(2 / 64)
    assert result.run.metrics[1].difference == pytest.approx(6 * (1 / 6) / 12)  # pass^2 of "1100" is C(2,2)/C(4,2)
    assert result.run.noise_a is not None and result.run.noise_a.unstable_tasks == 0
    assert result.run.noise_b is not None and result.run.noise_b.unstable_tasks == 6


def test_identical_runs_have_no_detectable_difference() -> None:
    a = {f"d__{i}": "10"[i % 2] for i in range(30)}
    result = compare(side("A", a), side("B", a))
    assert result.verdict == "no detectable difference"
    assert result.run.primary.line() == "no detectable difference: +0.0 points [+0.0, +0.0], p = 1, 30 paired tasks"


def test_different_scenario_sets_are_refused_unless_intersect() -> None:
    a = side("A", {"d__1": "1", "d__2": "0", "d__3": "1"})
    b = side("B", {"d__1": "1", "d__2": "1", "d__4": "0"})
    with pytest.raises(CompareError, match=r"scenario sets differ: 1 only in A \(d__3\); 1 only in B \(d__4\)"):
        compare(a, b)
    result = compare(a, b, intersect=True)
    assert result.run.primary.tasks == 2
    assert result.notes == ["the scenario sets differ: 1 only in A (d__3); 1 only in B (d__4)"]


def test_different_data_pins_are_refused() -> None:
    a = side("A", {"d__1": "1", "d__2": "0"}, pin="aaa")
    b = side("B", {"d__1": "1", "d__2": "0"}, pin="bbb")
    with pytest.raises(CompareError, match=r"tau2 data pins differ: A \{\"commit\": \"aaa\"\}"):
        compare(a, b)


def test_domains_are_holm_corrected() -> None:
    a = {**{f"x__{i}": "0" for i in range(10)}, **{f"y__{i}": "0" for i in range(10)}}
    b = {**{f"x__{i}": "1" for i in range(10)}, **{f"y__{i}": "1" if i < 3 else "0" for i in range(10)}}
    result = compare(side("A", a), side("B", b))
    assert result.correction == "Holm over 2 domains"
    x, y = (d.primary for d in result.domains)
    assert x.p_value == pytest.approx(2 / 1024) and y.p_value == pytest.approx(0.25)
    assert x.p_adjusted == pytest.approx(2 * 2 / 1024) and y.p_adjusted == pytest.approx(0.25)
    assert "(Holm over 2 domains)" in x.line()
    assert result.run.primary.p_adjusted is None  # the run's comparison is one test


def test_compare_outcomes_skips_tasks_short_of_k() -> None:
    m = compare_outcomes("pass^2", {"t1": [1, 1], "t2": [1]}, {"t1": [1, 0], "t2": [0]}, k=2)
    assert m.tasks == 1 and m.difference == -1.0


def test_the_command_prints_the_verdict_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_run(tmp_path / "a", side("A", {f"d__{i}": "11" if i < 5 else "00" for i in range(40)}))
    b = write_run(tmp_path / "b", side("B", {f"d__{i}": "11" if i < 30 else "00" for i in range(40)}))
    out = tmp_path / "cmp.json"
    assert main(["compare", str(a), str(b), "--json", str(out), "--power", "0.8", "--delta", "0.05"]) == 0
    text = capsys.readouterr().out
    assert "Verdict (success rate, B - A): B better: +62.5 points [" in text
    assert "runs needed: to detect 5.0 points at power 0.8 (alpha 0.05): about " in text
    document = json.loads(out.read_text("utf-8"))
    assert document["verdict"] == "B better" and document["run"]["power"]["tasks_now"] == 40
    assert document["run"]["metrics"][0]["b_better_tasks"][:2] == ["d__5", "d__6"]


def test_the_command_refuses_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write_run(tmp_path / "a", side("A", {"d__1": "1"}))
    b = write_run(tmp_path / "b", side("B", {"d__2": "1"}))
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pytest-tau2 compare: cannot pair the runs: the scenario sets differ")
    assert main(["compare", str(a), str(tmp_path / "missing")]) == 2
    assert "not a results folder" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["compare", str(a), str(b), "--power", "0.8"])


# ---- issue 38 point 4: runs scored under different rules ---------------------------------------------------


def _with_fingerprint(path: Path, **fingerprint: Any) -> Path:
    base = {"agent": "oracle", "min_agent_turns": 3, "judge_model": None, "verdict": "six-signal", "max_turns": None}
    files.write_json(path / "run.json", {"fingerprint": {**base, **fingerprint}})
    return path


def test_runs_scored_under_different_rules_are_refused_naming_each_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcomes = {f"d__{i}": "1" for i in range(10)}
    a = _with_fingerprint(write_run(tmp_path / "a", side("A", outcomes)))
    judge = {"model": "openai/judge", "args": {"api_key": "***"}}
    b = _with_fingerprint(
        write_run(tmp_path / "b", side("B", {**outcomes, "d__0": "0"})),
        agent="litellm:openai/agent",  # the agent is what a comparison compares: never a rule
        min_agent_turns=0,
        judge_model=judge,
        judge_prompt="upstream",
    )
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pytest-tau2 compare: the runs were scored under different rules"), err
    assert "min_agent_turns: A 3, B 0" in err
    assert "judge_model: A none, B openai/judge {'api_key': '***'}" in err
    assert 'judge_prompt: A "ours", B "upstream"' in err  # a fingerprint leaves the default prompt out
    assert "agent" not in err.replace("agents'", "").replace("min_agent_turns", "")
    assert "verdict:" not in err and "--allow-different-rules" in err

    out = tmp_path / "cmp.json"
    assert main(["compare", str(a), str(b), "--allow-different-rules", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "note: scored under different rules: min_agent_turns: A 3, B 0" in text
    assert "Verdict (success rate, B - A)" in text
    notes = json.loads(out.read_text("utf-8"))["notes"]
    assert any(n.startswith("scored under different rules: judge_prompt") for n in notes)


def test_same_rules_or_a_side_without_run_json_compare_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcomes = {f"d__{i}": "1" for i in range(10)}
    a = _with_fingerprint(write_run(tmp_path / "a", side("A", outcomes)), seed=1)
    b = _with_fingerprint(write_run(tmp_path / "b", side("B", outcomes)), seed=2, agent="other")
    c = write_run(tmp_path / "c", side("C", outcomes))  # no run.json
    assert main(["compare", str(a), str(b)]) == 0
    assert main(["compare", str(a), str(c)]) == 0
    assert "different rules" not in capsys.readouterr().out
