"""The do-nothing agent (``--tau2-agent null``) and the shipped list of tasks it passes
(report/null_passes.json, made by bench/bench_null_agent.py)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from pytest_tau2.conversation.null_agent import GOODBYE, POLITE, NullAgent
from pytest_tau2.report import null_baseline
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.run import participants
from pytest_tau2.run.pipeline import run_scenario
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.settings import Settings

END = {"type": "function", "function": {"name": "EndConversationTool", "parameters": {}}}
DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))


def test_it_speaks_politely_then_ends_the_call() -> None:
    agent = NullAgent(min_turns=3)
    replies = [asyncio.run(agent.respond([{"role": "user", "content": "Cancel my order"}], [END])) for _ in range(3)]
    assert [r.text for r in replies] == [POLITE, POLITE, GOODBYE]
    assert [r.tool_calls for r in replies[:2]] == [[], []]
    assert [c.name for c in replies[2].tool_calls] == ["EndConversationTool"]


def test_it_says_goodbye_when_the_user_stops_and_calls_nothing_it_is_not_offered() -> None:
    reply = asyncio.run(NullAgent(min_turns=5).respond([{"role": "user", "content": "Bye ###STOP###"}], []))
    assert (reply.text, reply.tool_calls) == (GOODBYE, [])


def test_it_is_a_registered_agent_kind() -> None:
    kind, argument = participants.agent_kind(Settings(agent="null"))
    assert (kind.name, argument, kind.follows_plan) == ("null", None, False)


def test_the_shipped_list_names_tasks_per_verdict() -> None:
    record = ScenarioRecord.read({"scenario": "tau2_airline__0", "domain": "tau2_airline", "tau2_id": "0"})
    assert null_baseline.passes_without_work(record)
    writes = ScenarioRecord.read({"scenario": "tau2_airline__11", "domain": "tau2_airline", "tau2_id": "11"})
    assert not null_baseline.passes_without_work(writes)
    reward = ScenarioRecord.read({"scenario": "tau2_airline__3", "tau2_id": "3", "success_signals": ["tau2_reward"]})
    assert not null_baseline.passes_without_work(reward)  # six-signal passes it, tau2's reward does not
    assert not null_baseline.passes_without_work(ScenarioRecord.read({"scenario": "tau2_airline__0"}))  # not tau2


@pytest.mark.skipif(not (DATA_DIR / "tau2" / "domains").is_dir(), reason=f"no tau2 data under {DATA_DIR}")
@pytest.mark.parametrize("name", ["tau2_airline__0", "tau2_airline__9", "tau2_airline__11", "tau2_retail__10"])
def test_the_list_matches_a_fresh_run(name: str, tmp_path: Path) -> None:
    """The null agent with the scripted user, in process: it passes exactly the listed tasks."""
    settings = Settings(data_dir=str(DATA_DIR), results_dir=str(tmp_path), agent="null", prompts="seed")
    scenario = all_scenarios(settings)[name]().bind(settings)
    ctx = participants.Context.for_scenario(scenario, settings)
    agent, user = participants.make_agent(ctx), participants.make_user(ctx)
    outcome = asyncio.run(run_scenario(scenario, agent=agent, user=user, settings=settings))
    table = json.loads((Path(null_baseline.__file__).parent / "null_passes.json").read_text("utf-8"))
    listed = name in table["six-signal"][scenario.domain]["passed"]
    assert outcome.is_successful is listed
    assert outcome.conversation.stop_reason == "exit" and not outcome.tool_errors
