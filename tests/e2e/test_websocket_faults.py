"""Each transport or protocol fault ends the scenario as an error naming what happened."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest

from pytest_tau2.bot.client import WebSocketAgent
from pytest_tau2.errors import InfrastructureError, ProtocolError
from pytest_tau2.run import ScenarioOutcome, run_scenario
from pytest_tau2.settings import Settings
from tests.e2e.conftest import fake_handshake, offline_user, scenario_or_skip

SCENARIO = "restaurant__pizza_pepperoni"


def _run(url: str, registry: Any, settings: Settings, timeout: float = 5.0) -> ScenarioOutcome:
    scenario = scenario_or_skip(registry, SCENARIO, settings)
    agent = WebSocketAgent(url, scenario, settings, reply_timeout=timeout, connect_timeout=2.0)
    return asyncio.run(run_scenario(scenario, agent=agent, user=offline_user(scenario, settings), settings=settings))


def _error(outcome: ScenarioOutcome, kind: type[Exception]) -> str:
    assert outcome.conversation.stop_reason == "error"
    assert isinstance(outcome.conversation.error, kind), repr(outcome.conversation.error)
    assert outcome.is_successful is False
    return str(outcome.conversation.error)


def test_connection_refused(registry: Any, bot_settings: Settings) -> None:
    with socket.socket() as sock:  # a port nobody listens on once this socket is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    message = _error(_run(f"ws://127.0.0.1:{port}", registry, bot_settings), InfrastructureError)
    assert f"cannot connect to the bot at ws://127.0.0.1:{port}: connection refused" in message


def test_bot_closes_mid_conversation(registry: Any, bot_settings: Settings, fake_bot: Any) -> None:
    async def handler(ws: Any) -> None:
        await fake_handshake(ws)
        await ws.recv()  # the user's opening
        await ws.close(1011, "pipeline crashed")

    message = _error(_run(fake_bot(handler), registry, bot_settings), InfrastructureError)
    assert "closed the connection (code 1011, reason 'pipeline crashed')" in message
    assert "while the runner waited for the agent's reply to user_message" in message
    assert '"type": "user_message"' in message  # excerpt of the last frame sent


def test_frame_failing_the_schema(registry: Any, bot_settings: Settings, fake_bot: Any) -> None:
    received: list[dict[str, Any]] = []

    async def handler(ws: Any) -> None:
        await fake_handshake(ws)
        await ws.recv()
        await ws.send(
            json.dumps(
                {
                    "type": "tool_call",
                    "id": "c1",
                    "name": "PlaceOrderTool",
                    "arguments": {},
                    "result": 42,
                    "error": False,
                }
            )
        )
        received.append(json.loads(await ws.recv()))  # the runner says why it gives up
        await ws.wait_closed()

    message = _error(_run(fake_bot(handler), registry, bot_settings), ProtocolError)
    assert "tool_call frame from the bot fails its schema: 42 is not of type 'string' (at 'result')" in message
    assert '"result": 42' in message
    assert received and received[0]["type"] == "error" and received[0]["code"] == "invalid_frame"


def test_not_json(registry: Any, bot_settings: Settings, fake_bot: Any) -> None:
    async def handler(ws: Any) -> None:
        await fake_handshake(ws)
        await ws.recv()
        await ws.send("Sure, one pepperoni pizza coming up")
        await ws.wait_closed()

    message = _error(_run(fake_bot(handler), registry, bot_settings), ProtocolError)
    assert "is not valid JSON" in message and "Sure, one pepperoni pizza coming up" in message


def test_reply_never_comes(registry: Any, bot_settings: Settings, fake_bot: Any) -> None:
    async def handler(ws: Any) -> None:
        await fake_handshake(ws)
        await ws.wait_closed()  # reads the user's words, never answers

    message = _error(_run(fake_bot(handler), registry, bot_settings, timeout=0.3), InfrastructureError)
    assert "no frame from the bot" in message and "within 0.3 s" in message
    assert "waiting for the agent's reply to user_message" in message and '"type": "user_message"' in message


def test_summary_without_hash(registry: Any, bot_settings: Settings, fake_bot: Any) -> None:
    async def handler(ws: Any) -> None:
        await fake_handshake(ws)
        await ws.recv()
        await ws.send(json.dumps({"type": "exit", "reason": "exit"}))
        await ws.recv()
        await ws.send(json.dumps({"type": "scenario_summary", "actions": []}))
        await ws.wait_closed()

    message = _error(_run(fake_bot(handler), registry, bot_settings), ProtocolError)
    assert "scenario_summary frame from the bot fails its schema: 'db_hash' is a required property" in message


def test_summary_with_null_hash_for_a_db_scenario(registry: Any, bot_settings: Settings, fake_bot: Any) -> None:
    async def handler(ws: Any) -> None:
        await fake_handshake(ws)
        await ws.recv()
        await ws.send(json.dumps({"type": "exit", "reason": "exit"}))
        await ws.recv()
        await ws.send(json.dumps({"type": "scenario_summary", "actions": [], "db_hash": None}))
        await ws.wait_closed()

    message = _error(_run(fake_bot(handler), registry, bot_settings), ProtocolError)
    assert f"scenario_summary has no db_hash, but {SCENARIO} has an agent DB" in message


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        (
            {"type": "error", "code": "bad_db_path", "message": "escapes the data root"},
            "sent error 'bad_db_path': escapes the data root",
        ),
        ({"type": "ready", "protocol_version": 2, "session_id": "x"}, "speaks protocol version 2, this runner 1"),
        (
            {"type": "agent_message", "text": "hi"},
            "unexpected agent_message frame from the bot while waiting for the answer to hello (ready)",
        ),
    ],
    ids=["error-frame", "version", "out-of-order"],
)
def test_refused_handshake(registry: Any, bot_settings: Settings, fake_bot: Any, frame: Any, expected: str) -> None:
    async def handler(ws: Any) -> None:
        await ws.recv()
        await ws.send(json.dumps(frame))
        await ws.wait_closed()

    message = _error(_run(fake_bot(handler), registry, bot_settings), ProtocolError)
    assert expected in message


def test_the_sweep_continues(registry: Any, bot_settings: Settings, fake_bot: Any, reference_bot: Any) -> None:
    """After a faulty session, the next scenario runs normally (nothing leaks between them)."""

    async def handler(ws: Any) -> None:
        await ws.close(1011, "down")

    _error(_run(fake_bot(handler), registry, bot_settings), InfrastructureError)
    outcome = _run(reference_bot.url, registry, bot_settings)
    assert outcome.conversation.error is None and outcome.is_successful is True
