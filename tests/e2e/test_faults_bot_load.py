"""Fault matrix, the reference bot under bad clients and load (docs/websocket.md, docs/faults.md).

Each hostile client alone: a 100,000-deep frame is ``invalid_frame``, a NUL byte in ``db_path``
is ``bad_db_path``, error frames never show the data root (nor a symlink's target), too many
bytes or turns in one session are ``session_limit``, a connection beyond ``max_connections`` is
refused at the handshake, a client that stops reading is dropped after ``send_timeout``. Then a
bounded load: 40 honest sessions at once with every hostile client beside them keep the
verdicts of a quiet run, within a stated latency bound (bench/bench_bot_load.py runs 200).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from pytest_tau2.bot.agents import oracle_factory
from pytest_tau2.bot.protocol import PROTOCOL_VERSION
from pytest_tau2.bot.server import BotServer, ServerThread
from pytest_tau2.bot.session import BotConfig
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.settings import Settings
from tests.e2e.conftest import scenario_or_skip
from tests.support.bot_load import HOSTILE_KINDS, run_load

RETAIL = "tau2_retail__5"
HONEST = ("restaurant__pizza_pepperoni", "restaurant__menu_question", "tau2_retail__5", "tau2_retail__7")
LATENCY_FACTOR, LATENCY_SLACK_S = 2.5, 2.0
"""The stated bound: an honest session's p99 beside the hostile clients is within 2.5 times the
p99 of the same sessions run quietly, plus 2 s (the hostile clients' own work shares the CPUs:
the bot, its clients and the test are one process here, on a shared machine)."""


@pytest.fixture
def guarded_bot(bot_settings: Settings) -> Iterator[BotServer]:
    """A bot with small limits, so each one is reached quickly."""
    server = BotServer(
        BotConfig(bot_settings, oracle_factory()),
        port=0,
        max_session_bytes=3 << 20,
        max_connections=60,
        send_timeout=1.0,
    )
    with ServerThread(server):
        yield server


def _scenarios(registry: Any, settings: Settings, names: tuple[str, ...]) -> list[Scenario]:
    return [scenario_or_skip(registry, name, settings) for name in names]


async def _frames(url: str, *frames: str) -> list[dict[str, Any]]:
    """Send each frame, then read what the bot sends until it closes."""
    got: list[dict[str, Any]] = []
    async with connect(url, max_size=None) as ws:
        for frame in frames:
            await ws.send(frame)
        try:
            async for message in ws:
                got.append(json.loads(message))
        except ConnectionClosed:  # the bot closes with 1008 after its error frame
            pass
    return got


def _hello(name: str) -> str:
    return json.dumps({"type": "hello", "protocol_version": PROTOCOL_VERSION, "scenario": name})


def _init(name: str, state: dict[str, Any]) -> str:
    return json.dumps(
        {
            "type": "apply_initialization",
            "scenario": name,
            "side": "agent",
            "shared_state_init": state,
            "initialization_actions": [],
        }
    )


def test_a_100k_deep_frame_is_an_invalid_frame(guarded_bot: BotServer) -> None:
    got = asyncio.run(_frames(guarded_bot.url, "[" * 100_000 + "]" * 100_000))
    assert got[-1]["type"] == "error" and got[-1]["code"] == "invalid_frame", got
    assert "nested too deeply" in got[-1]["message"]


def test_a_nul_byte_in_db_path_is_a_bad_db_path(guarded_bot: BotServer, registry: Any, bot_settings: Settings) -> None:
    scenario_or_skip(registry, RETAIL, bot_settings)
    got = asyncio.run(_frames(guarded_bot.url, _hello(RETAIL), _init(RETAIL, {"db_path": "tau2/domains/a\x00b.json"})))
    assert got[-1]["code"] == "bad_db_path", got
    assert "not a readable path" in got[-1]["message"]


def test_error_frames_show_paths_relative_to_the_data_root(
    guarded_bot: BotServer, registry: Any, bot_settings: Settings, tmp_path: Path
) -> None:
    scenario_or_skip(registry, RETAIL, bot_settings)
    root = Path(str(bot_settings.data_dir)).resolve()
    outside = tmp_path / "secret-place" / "db.json"
    outside.parent.mkdir()
    outside.write_text("{}", "utf-8")
    link = root / "tau2" / f"escape-{os.getpid()}.json"
    link.symlink_to(outside)
    try:
        cases = {
            "missing": {"db_path": "tau2/domains/retail/nope.json"},
            "climbing": {"db_path": "../../etc/passwd"},
            "symlink": {"db_path": f"tau2/{link.name}"},
        }
        for label, state in cases.items():
            got = asyncio.run(_frames(guarded_bot.url, _hello(RETAIL), _init(RETAIL, state)))
            error = got[-1]
            assert error["code"] == "bad_db_path", (label, got)
            assert str(root) not in error["message"] and "secret-place" not in error["message"], (label, error)
            assert str(bot_settings.data_dir) not in error["message"], (label, error)
    finally:
        link.unlink()


def test_too_many_bytes_or_turns_in_one_session_is_a_session_limit(
    guarded_bot: BotServer, registry: Any, bot_settings: Settings
) -> None:
    scenario = scenario_or_skip(registry, "restaurant__menu_question", bot_settings)
    state: dict[str, Any] = {}
    scenario.setup_shared_state(state, "agent")
    opening = (_hello(scenario.name), _init(scenario.name, state))
    big = json.dumps({"type": "user_message", "text": "x" * 900_000, "user_tool_calls": []})
    got = asyncio.run(_frames(guarded_bot.url, *opening, *[big] * 4))
    assert got[-1]["code"] == "session_limit" and "--max-session-bytes" in got[-1]["message"], got[-1]
    small = json.dumps({"type": "user_message", "text": "hi", "user_tool_calls": []})
    # The oracle ends the conversation after its third reply: a bot allowing two turns refuses the third.
    strict = BotServer(BotConfig(bot_settings, oracle_factory()), port=0, max_turns=2)
    with ServerThread(strict):
        got = asyncio.run(_frames(strict.url, *opening, *[small] * 3))
    assert got[-1]["code"] == "session_limit" and "more than 2 user_message frames" in got[-1]["message"], got[-1]


def test_connections_beyond_the_cap_are_refused_at_the_handshake(guarded_bot: BotServer) -> None:
    async def flood() -> tuple[int, str]:
        held = [await connect(guarded_bot.url) for _ in range(guarded_bot.max_connections)]
        try:
            await connect(guarded_bot.url)
        except InvalidStatus as exc:
            refused = f"HTTP {exc.response.status_code}"
        else:
            refused = "accepted"
        for ws in held:
            await ws.close()
        return len(held), refused

    held, refused = asyncio.run(flood())
    assert (held, refused) == (60, "HTTP 503")
    assert guarded_bot.refused_connections >= 1


def test_honest_sessions_keep_their_verdicts_beside_hostile_clients(
    guarded_bot: BotServer, registry: Any, bot_settings: Settings
) -> None:
    scenarios = _scenarios(registry, bot_settings, HONEST)
    heavy = scenario_or_skip(registry, RETAIL, bot_settings)
    quiet = asyncio.run(run_load(guarded_bot.url, scenarios, bot_settings, 40))
    loud = asyncio.run(
        run_load(
            guarded_bot.url,
            scenarios,
            bot_settings,
            40,
            hostile=HOSTILE_KINDS,
            heavy=heavy,
            idle=10,
            hostile_s=6.0,
        )
    )
    expected = {s.scenario: (s.verdict, s.signals, s.actions) for s in quiet.sessions}
    for session in loud.sessions:
        assert not session.verdict.startswith("error"), session
        assert (session.verdict, session.signals, session.actions) == expected[session.scenario], session.scenario
    bound = LATENCY_FACTOR * quiet.latency()["p99"] + LATENCY_SLACK_S
    assert loud.latency()["p99"] < bound, (loud.latency(), quiet.latency())
    assert loud.hostile["deep_frame"] == "invalid_frame"
    assert loud.hostile["nul_path"] == "bad_db_path"
    # session_limit: its error frame, or the close that names it; a bare 1008 (policy violation,
    # which only the bot's refusals send) was seen under CI load when the frame and reason were lost
    # to the client still writing 900 KB frames.
    assert loud.hostile["big_frames"] in ("session_limit", "closed(1008)"), loud.hostile
    assert loud.hostile["non_reader"].startswith("dropped by the bot"), loud.hostile
    assert "summaries with the DB" in loud.hostile["summary_hog"]
    stops = [r.stop for r in guarded_bot.finished]
    assert "send_timeout" in stops
