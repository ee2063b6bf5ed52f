"""Fault matrix, bot layer: a dead bot, an oversized frame, a bot URL with a password.

Each fault runs against real sockets on loopback (the reference bot, a misbehaving fake bot, a
port nobody listens on); the plugin-level ones run pytest in a subprocess and check the item's
outcome and message, that JUnit and all_metrics.json hold the same scenarios, and that the
password of the bot URL appears nowhere.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.bot.client import WebSocketAgent
from pytest_tau2.bot.server import BotServer
from pytest_tau2.errors import InfrastructureError
from pytest_tau2.run import ScenarioOutcome, run_scenario
from pytest_tau2.settings import Settings
from tests.e2e.conftest import fake_handshake, offline_user, scenario_or_skip
from tests.e2e.fault_matrix import assert_counts_agree, assert_no_secret, junit_outcome
from tests.e2e.llm_scripts import PytestRun, run_pytest

SCENARIO = "restaurant__pizza_pepperoni"
TWO = ("restaurant__margherita_for_two", "restaurant__menu_question")
PASSWORD = "botpass-Zq8xW3vLk0pY"  # no provider shape: only URL masking can hide it


def _free_port() -> int:
    with socket.socket() as sock:  # nobody listens on it once this socket is closed
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(agent: WebSocketAgent, registry: Any, settings: Settings) -> ScenarioOutcome:
    scenario = agent.scenario
    return asyncio.run(run_scenario(scenario, agent=agent, user=offline_user(scenario, settings), settings=settings))


def _pytest(url: str, tmp: Path, scenarios: tuple[str, ...]) -> PytestRun:
    return run_pytest(["--tau2-agent-url", url, "--tau2-scenarios", ",".join(scenarios)], tmp)


# ---- a frame over the size limit --------------------------------------------------------------------------


def test_a_frame_over_the_limit_is_named_as_such(registry: Any, bot_settings: Settings, fake_bot: Any) -> None:
    big = base64.b64encode(os.urandom(30_000)).decode()  # incompressible: the frame itself is over the limit

    async def handler(ws: Any) -> None:
        await fake_handshake(ws)
        await ws.recv()  # the user's opening
        await ws.send(json.dumps({"type": "agent_message", "text": big}))
        await ws.wait_closed()

    scenario = scenario_or_skip(registry, SCENARIO, bot_settings)
    agent = WebSocketAgent(fake_bot(handler), scenario, bot_settings, reply_timeout=10, max_size=4096)
    outcome = _run(agent, registry, bot_settings)
    error = outcome.conversation.error
    assert isinstance(error, InfrastructureError) and outcome.conversation.stop_reason == "error"
    message = str(error)
    assert "sent a frame too large (" in message and "> 4096-byte limit)" in message, message
    assert "while the runner waited for the agent's reply to user_message" in message
    assert "closed the connection" not in message  # the old, misleading wording
    assert not error.fatal  # one oversized reply says nothing about the next scenario


# ---- a dead bot stops the run at the first refusal ----------------------------------------------------------


def test_a_refused_connection_is_fatal(registry: Any, bot_settings: Settings) -> None:
    scenario = scenario_or_skip(registry, SCENARIO, bot_settings)
    url = f"ws://bot:{PASSWORD}@127.0.0.1:{_free_port()}"
    outcome = _run(WebSocketAgent(url, scenario, bot_settings, connect_timeout=2.0), registry, bot_settings)
    error = outcome.conversation.error
    assert isinstance(error, InfrastructureError) and error.fatal
    assert "connection refused" in str(error) and "Stopping the run." in str(error)
    assert PASSWORD not in str(error) and "ws://bot:***@127.0.0.1:" in str(error)


@pytest.fixture(scope="module")
def dead_bot_run(tmp_path_factory: pytest.TempPathFactory) -> PytestRun:
    return _pytest(f"ws://bot:{PASSWORD}@127.0.0.1:{_free_port()}", tmp_path_factory.mktemp("dead_bot"), TWO)


def test_a_dead_bot_stops_the_run_after_the_first_scenario(dead_bot_run: PytestRun) -> None:
    run = dead_bot_run
    first, second = TWO
    assert run.returncode == 2, run.stdout[-3000:]  # interrupted
    assert run.outcome_line(first) == "ERROR", run.stdout[-3000:]
    assert run.outcome_line(second) == ""  # never started
    assert "Interrupted: stopping the run" in run.stdout
    assert "connection refused" in run.stdout
    assert junit_outcome(run, first) == "error"
    assert "connection refused" in run.metrics(first)["infrastructure_error"]
    assert_counts_agree(run, [first])


def test_a_dead_bot_leaks_no_password(dead_bot_run: PytestRun) -> None:
    assert_no_secret(dead_bot_run, PASSWORD)


# ---- a bot URL with a password works, and the password is masked everywhere ------------------------------------


@pytest.fixture(scope="module")
def userinfo_run(reference_bot: BotServer, tmp_path_factory: pytest.TempPathFactory) -> PytestRun:
    url = reference_bot.url.replace("ws://", f"ws://bot:{PASSWORD}@", 1)
    return _pytest(url, tmp_path_factory.mktemp("userinfo"), (SCENARIO,))


def test_a_bot_url_with_a_password_is_masked_everywhere(userinfo_run: PytestRun) -> None:
    run = userinfo_run
    assert run.returncode == 0, run.stdout[-3000:]
    assert run.outcome_line(SCENARIO) == "PASSED"
    assert "tau2: agent=websocket:ws://bot:***@127.0.0.1:" in run.stdout  # the run header
    metrics = run.metrics(SCENARIO)
    assert metrics["agent"].startswith("websocket:ws://bot:***@127.0.0.1:")
    metadata = json.loads((run.results_dir / SCENARIO / "scenario_config" / "metadata.json").read_text("utf-8"))
    assert metadata["agent"].startswith("websocket:ws://bot:***@127.0.0.1:")
    assert_counts_agree(run, [SCENARIO])
    assert_no_secret(run, PASSWORD)
