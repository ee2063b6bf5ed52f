"""run/estimate.py's sources, best first (a recorded run, a cassette, the prompt sizes), its range
and prices, and plugin/estimating.py's estimate-vs-actual lines. No model is called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_tau2.llm.cassette import cassette_path
from pytest_tau2.llm.cassette_file import Interaction, match_key, write
from pytest_tau2.plugin.estimating import compare
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.run.catalog import Catalog
from pytest_tau2.run.estimate import Estimate, estimate
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.settings import Settings

MODELS = {"agent_model": "openai/agent", "user_model": "openai/user", "price": "openai/agent=2/8,openai/user=1/4"}


def _settings(tmp_path: Path, **more: object) -> Settings:
    return Settings(**MODELS, cassette_dir=str(tmp_path / "cassettes"), **more)  # type: ignore[arg-type]


def _scenario(settings: Settings, name: str = "tau2_retail__0") -> Scenario:
    return Catalog(settings).instance(name)


def _usage(calls: int, prompt: int, completion: int) -> dict[str, object]:
    return {"calls": calls, "prompt_tokens": prompt, "completion_tokens": completion, "cost_usd": 0.0}


def test_a_recorded_run_is_the_first_source_and_its_trials_make_the_range(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    run = tmp_path / "run"
    for trial, prompt in ((1, 1000), (2, 3000)):
        folder = run / f"tau2_retail__0-t{trial}"
        folder.mkdir(parents=True)
        usage = {"agent": _usage(4, prompt, 100), "user": _usage(2, 200, 20), "judge": _usage(0, 0, 0)}
        (folder / "metrics.json").write_text(json.dumps({"token_usage": usage}), "utf-8")
    found = estimate(settings, [(_scenario(settings), 1)], recorded=run)
    item = found.items[0]
    assert item.source == "recorded run"
    agent = item.sides["agent"]
    assert (agent.low["prompt_tokens"], agent.mid["prompt_tokens"], agent.high["prompt_tokens"]) == (1000, 2000, 3000)
    mid = found.total("mid")
    assert mid.calls == 6 and mid.tokens == 2000 + 100 + 200 + 20
    assert mid.cost_usd == pytest.approx((2000 * 2 + 100 * 8 + 200 * 1 + 20 * 4) / 1_000_000)  # --tau2-price


def test_a_cassette_comes_next_and_one_sample_gets_a_quarter_either_way(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    request = {"model": "agent", "args": {}, "tools": None, "messages": [{"role": "user", "content": "hi"}]}
    reply = {"content": "ok", "usage": {"prompt_tokens": 400, "completion_tokens": 40}}
    calls = [Interaction("agent", n, request, reply, match_key(request)) for n in (1, 2)]
    write(cassette_path(settings.cassette_dir or "", "tau2_retail__0"), "tau2_retail__0", calls)
    item = estimate(settings, [(_scenario(settings), 1)]).items[0]
    assert item.source == "cassette"
    agent = item.sides["agent"]
    assert agent.mid == {"calls": 2, "prompt_tokens": 800, "completion_tokens": 80}
    assert agent.low["prompt_tokens"] == 600 and agent.high["prompt_tokens"] == 1000


def test_prompt_sizes_last_and_an_offline_side_costs_nothing(tmp_path: Path) -> None:
    settings = Settings(agent_model="openai/agent", user="scripted", cassette_dir=str(tmp_path))
    found = estimate(settings, [(_scenario(settings), 1)])
    item = found.items[0]
    assert item.source == "prompt sizes"
    agent, user = item.sides["agent"], item.sides["user"]
    assert 0 < agent.low["prompt_tokens"] < agent.mid["prompt_tokens"] < agent.high["prompt_tokens"]
    assert user.high == {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}  # the scripted user
    assert found.total("mid").cost_usd is None  # openai/agent has no price: unpriced, never a made-up 0
    assert Estimate.from_dict(json.loads(json.dumps(found.to_dict()))).total("high") == found.total("high")


def test_estimate_vs_actual_leaves_resumed_results_out(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    made = estimate(settings, [(_scenario(settings), 1)])
    usage = {"agent": {**_usage(8, 20_000, 300), "total_tokens": 20_300}, "user": _usage(3, 900, 60)}
    record = ScenarioRecord.read({"scenario": "tau2_retail__0", "token_usage": usage})
    lines = compare(made, [record])
    assert lines[0].startswith("Estimate vs actual (1 scenarios of the estimate ran)")
    assert any(line.startswith("  agent: calls") and line.endswith("-> 20,300") for line in lines)
    assert "-> 21,260" in lines[-1]
    resumed = record.model_copy(update={"resumed": True})
    assert compare(made, [resumed]) == ["Estimate vs actual: none of this run's scenarios is in the estimate"]
