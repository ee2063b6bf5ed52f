"""An agent behind MCP reaches the in-process oracle's verdicts; a broken one is its scenario's error.

The agent is tests/support/mcp_scripted_agent.py: the oracle, in its own process started by
``--tau2-agent mcp:COMMAND``, driving the SDK's own ``Client`` over streamable HTTP
(``TAU2_MCP_URL``) or through the stdio bridge named in ``TAU2_MCP_CONFIG``. A sample per domain
(each MCP scenario starts an agent process, and over stdio a bridge too: ~3-5 s apiece on 2 cores):
one scenario per domain and transport;
``TAU2_MCP_PARITY=full`` runs every scenario of the e2e lists below instead.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.run import ScenarioOutcome, participants, run_scenario
from pytest_tau2.settings import Settings
from tests.e2e.conftest import REPO, RESTAURANT, RETAIL, TELECOM, scenario_or_skip

pytest.importorskip("mcp", reason="the MCP SDK is the optional 'mcp' extra (in the test extra)")

AIRLINE = tuple(f"tau2_airline__{i}" for i in range(5))
FULL = os.environ.get("TAU2_MCP_PARITY") == "full"
SAMPLE = {
    "http": (RESTAURANT[2], RETAIL[0], AIRLINE[0], TELECOM[0]),
    "stdio": (RESTAURANT[1], RETAIL[1], AIRLINE[1], TELECOM[1]),
}
EVERY = RESTAURANT + RETAIL + AIRLINE + TELECOM
CASES = [(via, name) for via in ("http", "stdio") for name in (EVERY if FULL else SAMPLE[via])]


def _run(scenario: Any, settings: Settings) -> ScenarioOutcome:
    ctx = participants.Context.for_scenario(scenario, settings)
    agent, user = participants.make_agent(ctx), participants.make_user(ctx)
    return asyncio.run(run_scenario(scenario, agent=agent, user=user, settings=settings))


def _plans_file(tmp_path: Path, scenario: Any, settings: Settings) -> Path:
    """The oracle's plan for the agent's process (which then loads no registry)."""
    plan = participants.Context.for_scenario(scenario, settings).plan
    spec = {
        "actions": plan.actions,
        "ending_tools": sorted(plan.ending_tools),
        "communicate": list(plan.communicate),
        "min_turns": max(settings.min_agent_turns, 1),
    }
    path = tmp_path / "plans.json"
    path.write_text(json.dumps({scenario.name: spec}), "utf-8")
    return path


def mcp_settings(settings: Settings, command: str, **overrides: Any) -> Settings:
    return dataclasses.replace(settings, agent="mcp:" + command, **overrides)


def scripted_command(via: str, plans: Path) -> str:
    return f"cd {REPO} && {sys.executable} -m tests.support.mcp_scripted_agent --via {via} --plans {plans}"


@pytest.mark.parametrize(("via", "name"), CASES)
def test_scripted_mcp_agent_matches_the_in_process_oracle(
    via: str, name: str, registry: Any, bot_settings: Settings, tmp_path: Path
) -> None:
    local = _run(scenario_or_skip(registry, name, bot_settings), bot_settings)
    scenario = scenario_or_skip(registry, name, bot_settings)
    settings = mcp_settings(bot_settings, scripted_command(via, _plans_file(tmp_path, scenario, bot_settings)))
    remote = _run(scenario, settings)

    assert remote.conversation.error is None, remote.conversation.error
    assert remote.is_successful == local.is_successful is True
    assert remote.signals == local.signals
    assert [(c.id, c.passed) for c in remote.checks] == [(c.id, c.passed) for c in local.checks]
    assert remote.recorded_actions == local.recorded_actions
    assert remote.final_dbs == local.final_dbs
    assert remote.conversation.stop_reason == local.conversation.stop_reason in ("exit", "transfer")
    assert remote.extra["remote"]["mcp_requests"] > 0


def _broken(tmp_path: Path, script: str, registry: Any, bot_settings: Settings, **overrides: Any) -> ScenarioOutcome:
    agent = tmp_path / "agent.py"
    agent.write_text(script, "utf-8")
    settings = mcp_settings(bot_settings, f"{sys.executable} {agent}", **overrides)
    return _run(scenario_or_skip(registry, "restaurant__menu_question", settings), settings)


def test_an_agent_that_exits_is_the_scenarios_error_with_its_stderr(
    registry: Any, bot_settings: Settings, tmp_path: Path
) -> None:
    outcome = _broken(tmp_path, "import sys\nprint('no API key for the agent', file=sys.stderr)\nsys.exit(3)\n",
                      registry, bot_settings)  # fmt: skip
    assert outcome.conversation.stop_reason == "error"
    message = str(outcome.conversation.error)
    assert "exited with code 3" in message and "no API key for the agent" in message
    assert "never sent an MCP request" in message


def test_an_agent_that_never_connects_is_an_error_within_agent_timeout(
    registry: Any, bot_settings: Settings, tmp_path: Path
) -> None:
    script = "import sys, time\nprint('waiting for nothing', file=sys.stderr, flush=True)\ntime.sleep(60)\n"
    outcome = _broken(tmp_path, script, registry, bot_settings, agent_timeout=2.0)
    assert outcome.conversation.stop_reason == "error"
    message = str(outcome.conversation.error)
    assert "made no call within 2 s" in message and "never sent an MCP request" in message
    assert "still running" in message and "waiting for nothing" in message
    assert outcome.conversation.duration_s < 30  # stopped, not the script's 60 s (loose for a loaded machine)


HANGS_AFTER_LISTENING = """
import anyio, os
from mcp import Client

async def main():
    async with Client(os.environ["TAU2_MCP_URL"]) as client:
        await client.call_tool("send_message_to_user", {"text": ""})
        await anyio.sleep(60)

anyio.run(main)
"""


def test_an_agent_that_hangs_past_max_duration_is_the_scenarios_error(
    registry: Any, bot_settings: Settings, tmp_path: Path
) -> None:
    outcome = _broken(tmp_path, HANGS_AFTER_LISTENING, registry, bot_settings, max_duration=3.0)
    assert outcome.conversation.stop_reason == "error"
    message = str(outcome.conversation.error)
    assert "before the scenario's max_duration" in message
    assert "last request: send_message_to_user (listening)" in message and "its last MCP request" in message
    assert "still running" in message


@pytest.mark.parametrize("parallel", [["--tau2-concurrency", "3"], ["-n", "2"]], ids=["concurrency", "xdist"])
def test_a_pytest_run_of_mcp_agents_in_parallel(
    parallel: list[str], registry: Any, bot_settings: Settings, tmp_path: Path
) -> None:
    """Several agents' processes and servers side by side (one port each), through the plugin."""
    from tests.e2e.llm_scripts import run_pytest

    names = RESTAURANT[:3]
    plans: dict[str, Any] = {}
    for name in names:
        plans.update(
            json.loads(_plans_file(tmp_path, scenario_or_skip(registry, name, bot_settings), bot_settings).read_text())
        )
    (tmp_path / "plans.json").write_text(json.dumps(plans), "utf-8")
    command = scripted_command("http", tmp_path / "plans.json")
    run = run_pytest(
        ["scenarios", "--tau2-agent", "mcp:" + command, "--tau2-scenarios", ",".join(names), *parallel], tmp_path
    )
    assert run.returncode == 0, run.output[-3000:]
    for name in names:
        assert run.outcome_line(name) == "PASSED", run.output[-3000:]
        metrics = run.metrics(name)
        assert metrics["agent"] == "mcp:" + command
        assert metrics["stop_reason"] == "exit" and metrics["is_successful"] is True
