"""The report's reader and numbers, without a browser: folders as written today, folders with the
fields later versions add (trials, tau2 reward, pass^k, resume/replay markers), broken folders.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pytest_tau2.cli import main as cli_main
from pytest_tau2.report.html import ReportInputError, load_run, write_report
from pytest_tau2.report.html.passk import pass_k_curves
from pytest_tau2.report.html.render import render_report
from pytest_tau2.report.html.stats import overview
from pytest_tau2.report.leaderboard import pass_hat_k_document
from pytest_tau2.report.metrics import metrics_schema


def metrics(name: str, *, passed: bool = True, **overrides: Any) -> dict[str, Any]:
    """A metrics.json as the plugin writes it (schema-valid), for a DB-state-match scenario."""
    usage = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "cost_usd": 0.0}
    data: dict[str, Any] = {
        "schema_version": 1, "scenario": name, "domain": name.split("__")[0], "tau2_id": None,
        "description": f"what {name} checks", "is_action_match": passed, "db_state_match": passed,
        "db_state_assertion_pass_rate": None, "nl_assertion_pass_rate": None, "judge_score": None,
        "judge_passed": None, "clean_exit": True, "success_signals": ["db_state_match", "clean_exit"],
        "is_successful": passed,
        "success_breakdown": {"passed": ["clean_exit"] + (["db_state_match"] if passed else []),
                              "failed": [] if passed else ["db_state_match"], "not_applicable": [],
                              "excluded": {"is_action_match": passed}},
        "stalled": False, "stop_reason": "exit", "infrastructure_error": None, "agent_turns": 3,
        "duration_s": 1.5, "conversation_duration_s": 1.0, "tool_errors": 0,
        "db_state_assertion_verdicts": [], "nl_assertion_verdicts": [],
        "checks": [{"id": "db_state_match", "signal": "db_state_match", "passed": passed,
                    "message": "" if passed else "DB hash a != expected b\ndiff (expected -> actual):\n"
                    "values_changed: root['orders']['#1']['status']: expected 'cancelled' but found 'pending'"}],
        "token_usage": {"agent": dict(usage, calls=2, prompt_tokens=900, completion_tokens=100, total_tokens=1000,
                                      cost_usd=0.01), "user": dict(usage), "judge": dict(usage)},
        "agent": "litellm:openai/gpt-4.1", "user": "scripted",
        "models": {"agent": {"model": "openai/gpt-4.1", "args": {"api_key": "***"}}, "user": None, "judge": None},
        "data_pin": None, "labels": {"behavior_config": None, "voice_config": None},
    }  # fmt: skip
    data.update(overrides)
    return data


def write_folder(root: Path, items: list[dict[str, Any]], *, top: dict[str, Any] | None = None) -> Path:
    """A results folder: one sub-folder per scenario (and trial), all_metrics.json when ``top`` is given."""
    for item in items:
        folder = root / (item["scenario"] + (f"-t{item['trial']}" if item.get("trial") is not None else ""))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "metrics.json").write_text(json.dumps(item), "utf-8")
        transcript = {"scenario": item["scenario"], "messages": [{"role": "user", "content": "hi", "turn_idx": 0}]}
        (folder / "transcript.json").write_text(json.dumps(transcript), "utf-8")
    if top is not None:
        (root / "all_metrics.json").write_text(json.dumps({"scenarios": items, **top}), "utf-8")
    return root


def test_the_helper_writes_what_the_schema_allows() -> None:
    """Every field the helper writes is valid; fields added to the schema later may be absent."""
    validator = jsonschema.Draft202012Validator(metrics_schema())
    for data in (metrics("shop__a"), metrics("shop__b", passed=False)):
        errors = [e.message for e in validator.iter_errors(data) if e.validator != "required"]
        assert errors == []


def test_a_folder_of_today_loads_with_rates_and_usage(tmp_path: Path) -> None:
    items = [metrics("shop__a"), metrics("shop__b", passed=False), metrics("bank__c")]
    run = load_run(write_folder(tmp_path, items, top={"errors_without_result": ["bank__d"]}))
    assert [s.key for s in run.scenarios] == ["bank__c", "shop__a", "shop__b"]
    assert run.folders["shop__b"] == tmp_path / "shop__b"
    numbers = overview(run, "run")
    assert (numbers.success.passed, numbers.success.total) == (2, 4)  # the error without a result counts
    assert numbers.outcomes == {"error": 1, "failed": 1, "n/a": 0, "passed": 2}
    shop = next(d for d in numbers.domains if d.domain == "shop")
    assert (shop.success.passed, shop.success.total) == (1, 2)
    assert [(label, rate.passed, rate.total) for label, rate, _ in numbers.signals] == [
        ("DB-state match", 2, 3),
        ("Clean exit", 3, 3),
    ]
    assert [(label, rate.passed, rate.total) for label, rate, _ in numbers.informational] == [("Action match", 2, 3)]
    agent = next(u for u in numbers.usage if u.side == "agent")
    assert (agent.calls, agent.prompt_tokens, agent.cost_usd) == (6, 2700, pytest.approx(0.03))
    assert numbers.errors_without_result == [("bank__d", "")]
    assert numbers.models == [("agent", "openai/gpt-4.1", '{"api_key": "***"}')]


def test_without_all_metrics_the_scenario_files_are_read(tmp_path: Path) -> None:
    run = load_run(write_folder(tmp_path, [metrics("shop__a"), metrics("shop__b", passed=False)]))
    assert [(s.key, s.outcome) for s in run.scenarios] == [("shop__a", "passed"), ("shop__b", "failed")]


def test_fields_of_later_versions_are_read_and_shown(tmp_path: Path) -> None:
    extra = {"tau2_reward": 0.0, "tau2_reward_breakdown": {"DB": 0.0, "COMMUNICATE": {"reward": 1.0}},
             "resumed": True, "replayed": {"cassette": "x.yaml"}, "seed_used": 1234}  # fmt: skip
    recording = {"mode": "once", "cassette": "cassettes/shop__a.yaml", "replayed_calls": 0, "recorded_calls": 2}
    items = [metrics("shop__a", trial=0, **extra), metrics("shop__a", trial=1, tau2_reward=1.0, recording=recording)]
    folder = write_folder(tmp_path, items, top={"errors_without_result": [{"scenario": "shop__z", "reason": "killed"}],
                                                "interrupted": False})  # fmt: skip
    info = {"fingerprint": {"seed": 300, "trials": 2, "judge_model": None}, "started": "2026-12-01T04:48:37+00:00"}
    (folder / "run.json").write_text(json.dumps(info), "utf-8")
    run = load_run(folder)
    assert [s.key for s in run.scenarios] == ["shop__a-t0", "shop__a-t1"]
    first = run.scenarios[0]
    assert first.model_extra == {"seed_used": 1234}
    numbers = overview(run, "run")
    assert numbers.reward.value == 0.5
    assert [(name, mean.value) for name, mean in numbers.reward_components] == [("COMMUNICATE", 1.0), ("DB", 0.0)]
    assert numbers.markers == {"trials": 2, "resumed": 1, "replayed": 1, "recorded": 1, "stalled": 0}
    assert numbers.errors_without_result == [("shop__z", "killed")]
    assert run.extra == {"interrupted": False}
    assert numbers.options == {"seed": 300, "trials": 2}  # run.json's settings, unset ones left out
    html = render_report([run], folder)
    assert "2026-12-01T04:48:37+00:00" in html and "Options that decide verdicts" in html
    assert "tau2 reward per domain" in html and "tau2 reward components" in html
    assert "seed_used" in html  # travels in the scenario's details, shown under "Other fields"
    index = json.loads(re.search(r'id="tau2-index">(.*?)</script>', html, re.DOTALL)[1])  # type: ignore[index]
    assert [row["key"] for row in index["rows"]] == ["shop__a-t0", "shop__a-t1", "shop__z"]
    assert [row["runs"][0]["mk"] for row in index["rows"][:2]] == [["resumed", "replayed"], ["recorded"]]


def test_one_trial_per_scenario_keeps_plain_names(tmp_path: Path) -> None:
    """Runs record ``trial: 1, trials: 1`` without ``--tau2-trials``: no ``-t1`` suffix, no pass^k."""
    items = [metrics("shop__a", trial=1, trials=1), metrics("shop__b", trial=1, trials=1)]
    run = load_run(write_folder(tmp_path, items, top={}))
    assert [s.key for s in run.scenarios] == ["shop__a", "shop__b"]
    assert run.folders == {"shop__a": tmp_path / "shop__a-t1", "shop__b": tmp_path / "shop__b-t1"}
    assert pass_k_curves(run) == ([], "", {})
    assert overview(run, "run").markers["trials"] == 0


@pytest.mark.parametrize(
    "block",
    [
        {"is_successful": {"1": 0.9, "2": 0.8, "3": 0.7}},
        {"is_successful": [0.9, 0.8, 0.7]},
        {"is_successful": [{"k": 1, "value": 0.9}, {"k": 2, "value": 0.8}, {"k": 3, "value": 0.7}]},
        {"is_successful": {"pass^1": 0.9, "pass^2": 0.8, "pass^3": 0.7}, "k": 3},
    ],
    ids=["mapping", "list", "records", "labelled-keys"],
)
def test_pass_k_blocks_of_several_shapes_become_curves(tmp_path: Path, block: dict[str, Any]) -> None:
    run = load_run(write_folder(tmp_path, [metrics("shop__a")], top={"pass_k": block}))
    curves, source, notes = pass_k_curves(run)
    assert [(c.name, c.points) for c in curves] == [("is_successful", [(1, 0.9), (2, 0.8), (3, 0.7)])]
    assert source == "all_metrics.json"
    assert notes == ({"k": 3} if "k" in block else {})
    assert "pass^k over k" in render_report([run], tmp_path)


def test_pass_hat_k_block_of_the_run_report_becomes_curves_and_notes(tmp_path: Path) -> None:
    """The block as report/leaderboard.py writes it: six-signal and tau2-reward curves, per domain too."""
    items = [
        metrics("tau2_shop__a", trial=t, trials=3, tau2_id="a", tau2_reward=r, passed=r == 1.0)
        for t, r in ((1, 1.0), (2, 1.0), (3, 0.0))
    ] + [
        metrics("tau2_shop__b", trial=1, trials=3, tau2_id="b", tau2_reward=1.0),
        metrics("tau2_shop__b", trial=2, trials=3, tau2_id="b", tau2_reward=1.0),
        metrics("tau2_shop__b", trial=3, trials=3, tau2_id="b", tau2_reward=None, passed=False,
                infrastructure_error="HTTP 500 from the provider"),
    ]  # fmt: skip
    block = pass_hat_k_document(items)
    run = load_run(write_folder(tmp_path, items, top={"pass_hat_k": block}))
    curves, source, notes = pass_k_curves(run)
    assert source == "all_metrics.json"
    by_name = {c.name: c for c in curves}
    assert sorted(by_name) == ["six-signal verdict", "tau2 reward", "tau2_shop: six-signal verdict",
                               "tau2_shop: tau2 reward"]  # fmt: skip
    assert [c.name for c in curves if c.overall] == ["six-signal verdict", "tau2 reward"]
    expected = block["six_signal"]["run"]["pass_hat_k"]
    assert by_name["six-signal verdict"].points == [(int(k), v) for k, v in expected.items() if v is not None]
    assert by_name["six-signal verdict"].points[0] == (1, pytest.approx(5 / 6))  # (2/3 + 2/2) / 2
    assert notes["trials per task"] == 3
    assert notes["six-signal verdict, infrastructure errors"] == 1
    assert "pass_hat_k" not in run.extra
    html = render_report([run], tmp_path)
    assert "pass^k over k" in html and "pass^2" in html and "pass^3" not in html  # b has 2 valid trials


def test_one_trial_per_task_draws_no_pass_k_chart(tmp_path: Path) -> None:
    items = [metrics("tau2_shop__a", trial=1, trials=1, tau2_id="a", tau2_reward=1.0)]
    run = load_run(write_folder(tmp_path, items, top={"pass_hat_k": pass_hat_k_document(items)}))
    assert [c.points for c in pass_k_curves(run)[0] if c.overall] == [[(1, 1.0)], [(1, 1.0)]]
    assert "pass^k over k" not in render_report([run], tmp_path)


def test_pass_k_from_trials_when_the_block_is_absent(tmp_path: Path) -> None:
    """Task a: 2 of 3 trials pass. Task b: 2 valid trials, both pass (a third lost to infrastructure)."""
    items = [
        metrics("shop__a", trial=0), metrics("shop__a", trial=1), metrics("shop__a", trial=2, passed=False),
        metrics("shop__b", trial=0), metrics("shop__b", trial=1),
        metrics("shop__b", trial=2, passed=False, infrastructure_error="HTTP 500 from the provider"),
    ]  # fmt: skip
    run = load_run(write_folder(tmp_path, items, top={}))
    curves, source, notes = pass_k_curves(run)
    assert source == "computed from the trials' results"
    (curve,) = curves  # no tau2_reward in these results: one curve
    assert curve.name == "six-signal verdict"
    # k=1: (2/3 + 2/2) / 2; k=2: (C(2,2)/C(3,2) + C(2,2)/C(2,2)) / 2; k=3: not reported, task b has only
    # 2 valid trials (report/pass_k.py's rule, the one all_metrics.json's block and the summary follow)
    assert [k for k, _ in curve.points] == [1, 2]
    assert [v for _, v in curve.points] == pytest.approx([5 / 6, 2 / 3])
    assert notes == {"six-signal verdict, infrastructure errors": 1, "six-signal verdict, short tasks": 1}


def test_a_malformed_metrics_file_names_the_file_and_the_field(tmp_path: Path) -> None:
    write_folder(tmp_path, [metrics("shop__a", agent_turns="three")])
    with pytest.raises(ReportInputError, match=r"shop__a/metrics\.json: agent_turns: .*integer"):
        load_run(tmp_path)
    (tmp_path / "shop__a" / "metrics.json").write_text("{not json", "utf-8")
    with pytest.raises(ReportInputError, match=r"shop__a/metrics\.json: cannot be read as JSON"):
        load_run(tmp_path)


def test_a_folder_without_results_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ReportInputError, match="not a results folder"):
        load_run(tmp_path)
    with pytest.raises(ReportInputError, match="no such directory"):
        load_run(tmp_path / "missing")


def test_the_file_is_self_contained(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "run", [metrics("shop__a"), metrics("shop__b", passed=False)], top={})
    html = write_report([folder], folder / "report.html").read_text("utf-8")
    assert "<link" not in html and " src=" not in html and "@import" not in html
    assert not re.findall(r"https?://(?!www\.w3\.org/2000/svg)", html), "the page must not reference the network"
    assert html.count("<svg") >= 3
    assert 'href="shop__b/metrics.json"' not in html  # links travel in the details JSON, relative to the report
    assert '["metrics.json","shop__b/metrics.json"]' in html


def test_compressed_details_inflate_to_the_same_json(tmp_path: Path) -> None:
    """Compressed: 32 scenarios to a gzip chunk ``{detail id: details}``; plain: one element each."""
    names = [f"shop__{i:02d}" for i in range(40)]
    folder = write_folder(tmp_path, [metrics(name, passed=False) for name in names], top={})
    run = load_run(folder)
    plain = dict(
        re.findall(r'<script type="application/json" id="(d0-\d+)">(.*?)</script>', render_report([run], folder))
    )
    packed = re.findall(
        r'<script type="application/x-tau2-gzip" id="(z\d+)">(.*?)</script>',
        render_report([run], folder, compress=True),
    )
    assert [chunk_id for chunk_id, _ in packed] == ["z0", "z1"]
    inflated: dict[str, Any] = {}
    for _, text in packed:
        inflated.update(json.loads(gzip.decompress(base64.b64decode(text))))
    assert len(inflated) == len(plain) == 40
    assert inflated == {key: json.loads(text) for key, text in plain.items()}


def test_cli_writes_the_report_into_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_folder(tmp_path / "run", [metrics("shop__a")], top={})
    assert cli_main(["report", str(folder)]) == 0
    assert (folder / "report.html").is_file()
    assert f"report: {folder / 'report.html'}" in capsys.readouterr().out


def test_cli_compares_several_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = write_folder(tmp_path / "a" / "out", [metrics("shop__a")], top={})
    b = write_folder(tmp_path / "b" / "out", [metrics("shop__a", passed=False)], top={})
    monkeypatch.chdir(tmp_path)
    assert cli_main(["report", str(a), str(b)]) == 0
    html = (tmp_path / "tau2-comparison.html").read_text("utf-8")
    assert "tau2 comparison: a/out vs b/out" in html  # same folder names: told apart by their parents
    assert cli_main(["report", str(a), str(b), "-o", str(tmp_path / "x.html")]) == 0
    assert (tmp_path / "x.html").is_file()


def test_cli_names_a_folder_it_cannot_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["report", str(tmp_path / "nowhere")]) == 2
    assert f"pytest-tau2 report: {tmp_path / 'nowhere'}: not a results folder" in capsys.readouterr().err


def test_a_file_nested_past_showing_is_left_out_and_one_within_is_shown() -> None:
    """loader._shallow: orjson's encoder answers for the usual shallow files; the walk decides the rest."""
    from pytest_tau2.report.html import loader

    def nested(levels: int) -> object:
        value: object = "x"
        for _ in range(levels):
            value = [value]
        return value

    assert loader._shallow({"messages": [{"role": "user", "content": "hi"}]}, loader.SHOWN_DEPTH)
    assert loader._shallow(nested(256), loader.SHOWN_DEPTH)  # past orjson's 255 levels: walked, still shown
    assert not loader._shallow(nested(258), loader.SHOWN_DEPTH)
    assert loader._shallow({"n": 2**70, "deep": nested(10)}, loader.SHOWN_DEPTH)  # orjson refuses the integer
    assert not loader._shallow(nested(5), 3)
