"""The reference bot server: handshake, refusals, limits, isolation, logging, CLI."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from pytest_tau2.bot import __main__ as cli
from pytest_tau2.bot.agents import oracle_factory
from pytest_tau2.bot.client import WebSocketAgent, initialization_frame
from pytest_tau2.bot.server import BotServer, ServerThread
from pytest_tau2.bot.session import BotConfig
from pytest_tau2.settings import Settings
from tests.e2e.conftest import REPO, scenario_or_skip

PIZZA = "restaurant__pizza_pepperoni"


async def _exchange(url: str, frames: list[dict[str, Any] | str], *, linger: float = 5.0) -> list[Any]:
    """Send frames one by one, collecting the answers, then the close code (or "open" after ``linger`` s)."""
    answers: list[Any] = []
    async with connect(url, proxy=None) as ws:
        try:
            for frame in frames:
                await ws.send(frame if isinstance(frame, str) else json.dumps(frame))
                answers.append(json.loads(await asyncio.wait_for(ws.recv(), 5)))
            while True:  # whatever else the bot says before it closes
                answers.append(json.loads(await asyncio.wait_for(ws.recv(), linger)))
        except ConnectionClosed as exc:
            answers.append(exc.rcvd.code if exc.rcvd else None)
        except TimeoutError:
            answers.append("open")
    return answers


def _hello(scenario: str = PIZZA, version: int = 1) -> dict[str, Any]:
    return {"type": "hello", "protocol_version": version, "scenario": scenario}


def _init(registry: Any, settings: Settings, **changes: Any) -> dict[str, Any]:
    frame = initialization_frame(scenario_or_skip(registry, PIZZA, settings))
    return {**frame, **changes}


def test_handshake_and_summary(reference_bot: BotServer, registry: Any, bot_settings: Settings) -> None:
    answers = asyncio.run(
        _exchange(
            reference_bot.url,
            [_hello(), _init(registry, bot_settings), {"type": "get_scenario_summary", "include_db": True}],
            linger=0.3,
        )
    )
    ready, initialized, summary, still_open = answers
    assert ready["type"] == "ready" and ready["protocol_version"] == 1 and ready["session_id"]
    assert initialized["type"] == "initialized" and initialized["tools"] == [
        "GetMenuTool",
        "PlaceOrderTool",
        "EndConversationTool",
    ]
    assert summary == {
        "type": "scenario_summary",
        "actions": [],
        "db_hash": initialized["db_hash"],
        "db": {"orders": []},
    }
    assert still_open == "open"  # a summary does not end the session; the runner closes it


@pytest.mark.parametrize(
    ("frames", "code", "words"),
    [
        ([_hello(version=2)], "unsupported_version", "protocol_version 2 is not supported"),
        ([_hello("restaurant__no_such_thing")], "unknown_scenario", "no registered scenario named"),
        (["not json"], "invalid_frame", "is not valid JSON"),
        ([{"type": "hello", "scenario": PIZZA}], "invalid_frame", "'protocol_version' is a required property"),
        ([{"type": "user_message", "text": "hi"}], "unexpected_message", "not allowed in phase 'new'"),
        ([{"type": "ready", "protocol_version": 1, "session_id": "x"}], "invalid_frame", "has type 'ready'"),
    ],
    ids=["version", "unknown-scenario", "not-json", "schema", "out-of-order", "bot-frame-type"],
)
def test_refusals(reference_bot: BotServer, frames: list[Any], code: str, words: str) -> None:
    *_, error, close_code = asyncio.run(_exchange(reference_bot.url, frames))
    assert error["type"] == "error" and error["code"] == code and words in error["message"]
    assert close_code == 1008


@pytest.mark.parametrize("path", ["../../../etc/passwd", "/etc/passwd", "restaurant/../../tests/e2e/conftest.py"])
def test_db_path_outside_the_data_root_is_refused(
    reference_bot: BotServer, registry: Any, bot_settings: Settings, path: str
) -> None:
    frames = [_hello(), _init(registry, bot_settings, shared_state_init={"db_path": path})]
    _, error, close_code = asyncio.run(_exchange(reference_bot.url, frames))
    assert error["code"] == "bad_db_path" and "escapes the data root" in error["message"]
    assert close_code == 1008


def test_missing_db_file_is_refused(reference_bot: BotServer, registry: Any, bot_settings: Settings) -> None:
    frames = [_hello(), _init(registry, bot_settings, shared_state_init={"db_path": "restaurant/nope.json"})]
    _, error, _ = asyncio.run(_exchange(reference_bot.url, frames))
    assert error["code"] == "bad_db_path" and "no such file" in error["message"]


@pytest.mark.parametrize(
    ("db_path", "words"),
    [
        ("restaurant/notes.txt", "the file is not a database this scenario can read (not JSON"),
        (7, "a db_path must be a string"),
    ],
    ids=["not-json", "not-a-string"],
)
def test_a_db_path_that_is_no_database_is_refused_saying_which(
    registry: Any, bot_settings: Settings, tmp_path: Path, db_path: Any, words: str
) -> None:
    shutil.copytree(REPO / "data", tmp_path / "data")
    (tmp_path / "data" / "restaurant" / "notes.txt").write_text("not a database\n", "utf-8")
    settings = dataclasses.replace(bot_settings, eval_data_root=str(tmp_path / "data"))
    with ServerThread(BotServer(BotConfig(settings, oracle_factory()), port=0)) as url:
        frames = [_hello(), _init(registry, settings, shared_state_init={"db_path": db_path})]
        _, error, _ = asyncio.run(_exchange(url, frames))
    assert error["code"] == "bad_db_path" and words in error["message"], error
    assert str(tmp_path) not in error["message"]  # the bot's data root is not the runner's business


def test_oversized_frame_closes_the_session(bot_settings: Settings) -> None:
    with ServerThread(BotServer(BotConfig(bot_settings, oracle_factory()), port=0, max_size=1000)) as url:
        huge = json.dumps({"type": "user_message", "text": "x" * 5000})
        answers = asyncio.run(_exchange(url, [_hello(), huge]))
    assert answers[-1] == 1009  # "message too big"


def test_idle_session_times_out(bot_settings: Settings) -> None:
    with ServerThread(BotServer(BotConfig(bot_settings, oracle_factory()), port=0, idle_timeout=0.3)) as url:
        started = time.monotonic()
        _ready, error, close_code = asyncio.run(_exchange(url, [_hello()]))
    assert error["code"] == "idle_timeout" and close_code == 1008
    assert time.monotonic() - started < 3


def test_one_log_line_per_session(bot_settings: Settings, registry: Any, caplog: pytest.LogCaptureFixture) -> None:
    scenario = scenario_or_skip(registry, PIZZA, bot_settings)
    server = BotServer(BotConfig(bot_settings, oracle_factory()), port=0)
    with caplog.at_level(logging.INFO, logger="pytest_tau2.bot"), ServerThread(server) as url:
        asyncio.run(_exchange(url, [_hello(), _init(registry, bot_settings)], linger=0.1))
        agent = WebSocketAgent(url, scenario, bot_settings)

        async def converse() -> None:
            await agent.start()
            await agent.respond([{"role": "user", "content": "Thanks. ###STOP###"}], [])
            await agent.aclose()

        asyncio.run(converse())
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("session=")]
    assert len(lines) == 2, lines
    assert all(f"scenario={PIZZA}" in line and "duration=" in line for line in lines)
    assert lines[0].endswith("stop=closed")
    assert lines[1].endswith("stop=exit")


def test_concurrent_sessions_do_not_share_state(
    reference_bot: BotServer, registry: Any, bot_settings: Settings
) -> None:
    scenario = scenario_or_skip(registry, PIZZA, bot_settings)

    async def two_sessions() -> tuple[dict[str, Any], ...]:
        writer = WebSocketAgent(reference_bot.url, scenario, bot_settings)
        reader = WebSocketAgent(reference_bot.url, scenario, bot_settings)
        try:
            first, second = await asyncio.gather(writer.start(), reader.start())
            reply = await writer.respond([{"role": "user", "content": "One pepperoni with extra cheese."}], [])
            assert [c.name for c in reply.tool_calls] == ["PlaceOrderTool"]  # the oracle places the order
            return first, second, await writer.summary(), await reader.summary()
        finally:
            await asyncio.gather(writer.aclose(), reader.aclose())

    first, second, written, untouched = asyncio.run(two_sessions())
    assert first["db_hash"] == second["db_hash"]
    assert [a["name"] for a in written["actions"]] == ["place_order"] and written["db_hash"] != first["db_hash"]
    assert untouched == {"actions": [], "db_hash": first["db_hash"]}


def test_model_without_litellm_participants_exits_clearly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pytest_tau2.conversation.llm_participants", None)  # import fails
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--model", "openai/gpt-4.1"])
    assert exit_info.value.code == 2
    assert "--model needs pytest_tau2.conversation.llm_participants" in capsys.readouterr().err


def test_cli_serves_and_logs(registry: Any, bot_settings: Settings, tmp_path: Any) -> None:
    scenario = scenario_or_skip(registry, PIZZA, bot_settings)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log_path = tmp_path / "bot.log"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    with log_path.open("w") as log:
        bot = subprocess.Popen(
            [sys.executable, "-m", "pytest_tau2.bot", "--oracle", "--port", str(port)], cwd=REPO, stderr=log, env=env
        )
    try:
        deadline = time.monotonic() + 20
        while "serving" not in log_path.read_text() and bot.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "serving" in log_path.read_text(), log_path.read_text()

        async def converse() -> dict[str, Any]:
            agent = WebSocketAgent(f"ws://127.0.0.1:{port}", scenario, bot_settings)
            try:
                await agent.respond([{"role": "user", "content": "Thanks. ###STOP###"}], [])
                return await agent.summary()
            finally:
                await agent.aclose()

        assert asyncio.run(converse())["actions"] == []
        deadline = time.monotonic() + 10
        while "stop=exit" not in log_path.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        bot.terminate()
        bot.wait(10)
    lines = log_path.read_text().splitlines()
    sessions = [line for line in lines if "session=" in line]
    assert len(sessions) == 1 and f"scenario={PIZZA}" in sessions[0] and sessions[0].endswith("stop=exit")
    assert not any("connection open" in line for line in lines)  # one line per session, not three


# ---- the shipped schemas and the documentation agree -----------------------------------------------

DOC = REPO / "docs" / "websocket.md"


def test_every_frame_type_has_a_valid_schema() -> None:
    import jsonschema

    from pytest_tau2.bot.protocol import BOT_FRAMES, RUNNER_FRAMES, schema

    for frame_type in sorted(set(RUNNER_FRAMES + BOT_FRAMES)):
        document = schema(frame_type)
        jsonschema.Draft202012Validator.check_schema(document)
        assert document["properties"]["type"] == {"const": frame_type, "description": "The message type."}
        assert f"### `{frame_type}`" in DOC.read_text("utf-8")  # documented


def test_documented_example_session_is_valid() -> None:
    from pytest_tau2.bot.protocol import decode

    text = DOC.read_text("utf-8")
    lines = [line for line in text.splitlines() if line.startswith(("→ {", "← {"))]
    frames = [decode(line[2:], "runner" if line.startswith("→") else "bot") for line in lines]  # all valid
    session = [
        decode(line[2:], "runner" if line.startswith("→") else "bot")
        for line in text.split("## A complete example session", 1)[1].splitlines()
        if line.startswith(("→ {", "← {"))
    ]
    assert [f["type"] for f in session][:4] == ["hello", "ready", "apply_initialization", "initialized"]
    assert session[-1]["type"] == "scenario_summary" and len(session) == 14
    assert any(f.get("user_tool_calls") for f in frames)


def test_documented_hashes() -> None:
    from pytest_tau2.environment.db import db_hash

    text = DOC.read_text("utf-8")
    canonical = next(line for line in text.splitlines() if line.startswith('{"orders": [{"customer_name"'))
    assert db_hash(json.loads(canonical)) == "51b8b8befb6cf9eb665d1d58c967d82fdc523625a019984def7825de4d03f3d1"
    assert db_hash(json.loads(canonical)) in text and db_hash({"orders": []}) in text
