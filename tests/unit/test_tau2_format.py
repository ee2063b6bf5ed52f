"""tau2's formats, piece by piece: upstream's submission rules as refusals, our transcript and
reward in upstream's shapes, the upstream-results loader's refusals, and the turn-by-turn replay."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pytest_tau2.conversation.turn_replay import SavedTurns, split_sides
from pytest_tau2.errors import SettingsError
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.run import participants
from pytest_tau2.settings import Settings
from pytest_tau2.tau2_format import export, export_cli, submission
from pytest_tau2.tau2_format.upstream_runs import UpstreamRunsError, is_results, load_runs
from tests.support.tau2_data import DATA_DIR, requires_data

AGENT = {"model": "openai/gpt-4.1", "args": {"temperature": 0.0}}


def record(task: str, trial: int = 1, trials: int = 1, domain: str = "tau2_airline", **extra: Any) -> ScenarioRecord:
    seed = 1000 + trial
    models = {"agent": {**AGENT, "args": {**AGENT["args"], "seed": seed}}, "user": AGENT, "judge": None}
    data = {"scenario": f"{domain}__{task}", "domain": domain, "tau2_id": task, "trial": trial, "trials": trials,
            "seed": seed, "models": models, "stop_reason": "exit", "tau2_reward": 1.0}  # fmt: skip
    return ScenarioRecord.read({**data, **extra})


def airline(trials: int = 1, *, drop: tuple[str, ...] = (), extra_trial: str | None = None) -> export.DomainRun:
    ids = [str(i) for i in range(50) if str(i) not in drop]
    records = [record(task, t, trials) for task in ids for t in range(1, trials + 1)]
    if extra_trial:
        records.append(record(extra_trial, trials + 1, trials))
    return export.DomainRun("airline", records)


# ---- the rules ------------------------------------------------------------------------------------


@requires_data("airline", "mock")
def test_a_complete_domain_breaks_no_rule() -> None:
    assert export.rule_problems({"airline": airline(2)}, DATA_DIR, 2) == []


@requires_data("airline", "mock")
def test_missing_tasks_extra_trials_and_lost_items_are_each_named() -> None:
    run = airline(2, drop=("3", "17"), extra_trial="5")
    run.missing.append("tau2_airline__9-t2")
    problems = export.rule_problems({"airline": run}, DATA_DIR, 2)
    assert problems == [
        "airline: 2 of 50 base-split tasks have no result: 3, 17",
        "airline: tasks without exactly 2 trials: 5 (3)",
        "airline: 1 items ended without a result: tau2_airline__9-t2",
    ]


@requires_data("airline", "mock")
def test_a_task_outside_the_base_split_is_refused() -> None:
    run = airline()
    run.records.append(record("not_a_task"))
    assert "airline: 1 tasks are not in the base split: not_a_task" in export.rule_problems(
        {"airline": run}, DATA_DIR, 1
    )


@requires_data("airline", "mock")
def test_two_agent_models_across_domains_are_refused_but_the_trial_seed_is_no_difference() -> None:
    other = export.DomainRun("mock", [record(t, domain="tau2_mock") for t in export.pinned_tasks(DATA_DIR, "mock")[0]])
    assert export.rule_problems({"airline": airline(), "mock": other}, DATA_DIR, 1) == []
    for item in other.records:
        item.models["agent"] = {"model": "openai/gpt-4.1", "args": {"temperature": 0.5}}
    [problem] = export.rule_problems({"airline": airline(), "mock": other}, DATA_DIR, 1)
    assert problem.startswith("the agent model or its arguments differ between results") and "0.5" in problem


# ---- our shapes in upstream's -----------------------------------------------------------------------


def test_messages_keep_roles_calls_results_and_turns() -> None:
    transcript = [
        {"role": "assistant", "content": "Hi! How can I help you today?", "generated": False, "turn_idx": 0},
        {"role": "user", "content": None, "turn_idx": 1,
         "tool_calls": [{"id": "c1", "name": "toggle_airplane_mode", "arguments": {}}]},
        {"role": "tool", "requestor": "user", "tool_call_id": "c1", "name": "toggle_airplane_mode",
         "content": "Airplane Mode is now OFF.", "error": False, "turn_idx": 2},
        {"role": "assistant", "content": None, "turn_idx": 3,
         "tool_calls": [{"id": "c2", "name": "get_order_details", "arguments": '{"order_id": "#W1',
                         "invalid_arguments": "cut off"}]},
        {"role": "tool", "requestor": "agent", "tool_call_id": "c2", "content": "Error: bad arguments",
         "error": True, "turn_idx": 4},
    ]  # fmt: skip
    out = [m.model_dump(exclude_none=True) for m in export.messages(transcript)]
    assert [m["role"] for m in out] == ["assistant", "user", "tool", "assistant", "tool"]
    assert [m["turn_idx"] for m in out] == [0, 1, 2, 3, 4]
    assert out[1]["tool_calls"] == [{"id": "c1", "name": "toggle_airplane_mode", "arguments": {}, "requestor": "user"}]
    assert out[2] == {"role": "tool", "id": "c1", "content": "Airplane Mode is now OFF.", "requestor": "user",
                      "error": False, "turn_idx": 2}  # fmt: skip
    assert out[3]["tool_calls"][0]["arguments"] == {export.INVALID_ARGUMENTS_KEY: '{"order_id": "#W1'}
    assert out[4]["requestor"] == "assistant" and out[4]["error"] is True


def test_the_reward_in_upstreams_shape() -> None:
    checks = [{"info": "1628", "met": False, "turn_idx": None}]
    info = {"reward_basis": ["DB", "COMMUNICATE"], "not_evaluated": [], "reasons": {"COMMUNICATE": "never said"},
            "terminated_early": None, "communicate_checks": checks}  # fmt: skip
    found = export.reward_info(
        record("7", tau2_reward=0.0, tau2_reward_breakdown={"DB": 1.0, "COMMUNICATE": 0.0}, tau2_reward_info=info)
    )
    assert found is not None and found.reward == 0.0 and found.reward_basis == ["DB", "COMMUNICATE"]
    assert found.reward_breakdown == {"DB": 1.0, "COMMUNICATE": 0.0}
    assert found.db_check is not None and found.db_check.db_match
    assert [(c.info, c.met) for c in found.communicate_checks or []] == [("1628", False)]


def test_an_unevaluated_component_is_left_out_and_an_infrastructure_error_has_no_reward() -> None:
    partial = record("2", tau2_reward=1.0, tau2_reward_breakdown={"DB": 1.0, "NL_ASSERTION": None})
    assert (found := export.reward_info(partial)) is not None and found.reward_breakdown == {"DB": 1.0}
    assert export.reward_info(record("2", tau2_reward=None, infrastructure_error="judge 500")) is None
    broken = record("2", tau2_reward=None, infrastructure_error="judge 500", stop_reason="exit")
    assert export.simulation(broken, [], "2026-01-01T00:00:00+00:00").termination_reason == "infrastructure_error"


def test_each_stop_reason_maps_to_an_upstream_termination() -> None:
    cases = {"exit": "agent_stop", "transfer": "agent_stop", "user_stop": "user_stop", "max_turns": "max_steps",
             "too_many_tool_errors": "too_many_errors", "timeout": "timeout"}  # fmt: skip
    for ours, theirs in cases.items():
        sim = export.simulation(record("1", 2, 4, stop_reason=ours), [], "2026-01-01T00:00:00+00:00")
        assert sim.termination_reason == theirs and sim.trial == 1 and sim.id == "tau2_airline__1-t2"


def test_banking_results_need_their_retrieval_configuration() -> None:
    with pytest.raises(ValidationError, match="retrieval_config"):
        submission.DomainTable.model_validate({"banking_knowledge": {"pass_1": 20.0}})
    with pytest.raises(ValidationError, match="pass_1"):
        submission.DomainResults(pass_1=120.0)


# ---- upstream results in ----------------------------------------------------------------------------


def _results_file(tmp_path: Path, simulations: list[dict[str, Any]], name: str = "r.json") -> str:
    info = {"git_commit": "x", "num_trials": 2, "max_steps": 200, "max_errors": 10,
            "user_info": {"implementation": "user_simulator"}, "agent_info": {"implementation": "llm_agent"},
            "environment_info": {"domain_name": "airline", "policy": ""}}  # fmt: skip
    path = tmp_path / name
    path.write_text(json.dumps({"info": info, "tasks": [], "simulations": simulations}), "utf-8")
    load_runs.cache_clear()
    return str(path)


def _sim(task: str, trial: int, sim_id: str = "") -> dict[str, Any]:
    return {"id": sim_id or f"s{task}-{trial}", "task_id": task, "trial": trial, "start_time": "", "end_time": "",
            "duration": 1.0, "termination_reason": "user_stop", "messages": []}  # fmt: skip


def test_results_load_by_task_and_trial_counted_from_one(tmp_path: Path) -> None:
    runs = load_runs(_results_file(tmp_path, [_sim("7", 0), _sim("7", 1)]))
    assert runs.max_trial == 2 and runs.find("airline", "7", 2) is not None and runs.find("airline", "7", 3) is None


def test_a_trial_twice_and_a_file_that_is_no_results_are_refused_naming_the_file(tmp_path: Path) -> None:
    path = _results_file(tmp_path, [_sim("7", 0, "a"), _sim("7", 0, "b")])
    with pytest.raises(UpstreamRunsError, match=r"r\.json: task '7' trial 0 appears twice \(simulations 'a' and 'b'\)"):
        load_runs(path)
    bad = _results_file(tmp_path, [{**_sim("7", 0), "termination_reason": "bored"}], "bad.json")
    with pytest.raises(
        UpstreamRunsError, match=r"bad\.json: not an upstream Results file: simulations\.0\.termination"
    ):
        load_runs(bad)


def test_a_json_lines_replay_file_is_not_taken_for_upstream_results(tmp_path: Path) -> None:
    lines = tmp_path / "recorded.jsonl"
    lines.write_text('{"scenario": "a__1", "actions": []}\n{"scenario": "a__2", "actions": []}\n', "utf-8")
    assert not is_results(str(lines)) and is_results(_results_file(tmp_path, []))


def test_saved_turns_come_back_in_order_then_silence() -> None:
    saved = [
        {"role": "assistant", "content": "Hi! How can I help you today?"},
        {"role": "user", "content": "Cancel it."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": "cancel", "arguments": {"x": 1}}]},
        {"role": "tool", "id": "c1", "content": "done"},
        {"role": "assistant", "content": "Done."},
    ]
    agent_turns, user_turns = split_sides(saved, skip=1)
    agent = SavedTurns(agent_turns)
    first = asyncio.run(agent.respond([], []))
    assert [(c.name, c.arguments, c.id) for c in first.tool_calls] == [("cancel", {"x": 1}, "c1")]
    assert asyncio.run(agent.respond([], [])).text == "Done."
    assert asyncio.run(agent.respond([], [])).text == ""  # nothing left to say
    assert [m["content"] for m in user_turns] == ["Cancel it."]


# ---- settings refused before anything runs --------------------------------------------------------------


def _refusal(**fields: Any) -> str:
    with pytest.raises(SettingsError) as raised:
        participants.validate_settings(Settings(**fields))
    return str(raised.value)


def test_an_upstream_replay_needs_the_user_replayed_and_every_trial(tmp_path: Path) -> None:
    path = _results_file(tmp_path, [_sim("7", 0), _sim("7", 1)])
    assert "add --tau2-user replay (the user is 'scripted')" in _refusal(agent=f"replay:{path}")
    assert "holds 2 trials per task (upstream's 0..1); run with --tau2-trials 2" in _refusal(
        agent=f"replay:{path}", user="replay"
    )
    participants.validate_settings(Settings(agent=f"replay:{path}", user="replay", trials=2))


def test_the_replay_user_needs_upstream_runs_to_replay(tmp_path: Path) -> None:
    lines = tmp_path / "recorded.jsonl"
    lines.write_text('{"scenario": "a__1", "actions": []}\n', "utf-8")
    for agent in ("oracle", f"replay:{lines}"):
        assert _refusal(agent=agent, user="replay").startswith("--tau2-user replay replays the saved user turns")


def test_export_of_a_folder_that_is_no_results_folder_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert export_cli.main([str(tmp_path), "--into", str(tmp_path / "out")]) == 1
    assert "no readable run.json (not a pytest-tau2 results folder)" in capsys.readouterr().err
