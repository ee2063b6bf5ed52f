"""A bounded loopback load on the reference bot: many honest sessions, a few hostile clients.

Honest sessions are real scenario runs (:func:`pytest_tau2.run.run_scenario` with a
:class:`~pytest_tau2.bot.client.WebSocketAgent` and the offline scripted user), all started at
once on one event loop; each yields its verdict, DB hash, actions and wall time. Hostile clients
speak the protocol by hand: a summary hog (``get_scenario_summary`` with the DB, again and
again), a flood of ~1 MB frames, a client that stops reading, a 100,000-deep frame, a NUL byte in
``db_path``, and idle connections that never send a frame.

Used by tests/e2e/test_faults_bot_load.py (small) and bench/bench_bot_load.py (200 sessions).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from pytest_tau2.bot.client import WebSocketAgent
from pytest_tau2.bot.protocol import PROTOCOL_VERSION
from pytest_tau2.run import participants, run_scenario
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.settings import Settings

HOSTILE_KINDS = ("summary_hog", "big_frames", "non_reader", "deep_frame", "nul_path", "idle")


@dataclass(frozen=True)
class SessionResult:
    scenario: str
    verdict: str
    signals: str
    actions: str
    wall_s: float


@dataclass
class LoadResult:
    sessions: list[SessionResult]
    hostile: dict[str, str] = field(default_factory=dict)
    """What each hostile client saw (the error code it got, or how it ended)."""
    wall_s: float = 0.0

    def verdicts(self) -> list[tuple[str, str, str, str]]:
        return sorted((s.scenario, s.verdict, s.signals, s.actions) for s in self.sessions)

    def latency(self) -> dict[str, float]:
        walls = sorted(s.wall_s for s in self.sessions)
        cut = statistics.quantiles(walls, n=100) if len(walls) > 1 else walls * 99
        return {"p50": statistics.median(walls), "p95": cut[94], "p99": cut[98], "max": walls[-1]}


async def _honest(url: str, scenario: Scenario, settings: Settings) -> SessionResult:
    agent = WebSocketAgent(url, scenario, settings)
    user = participants.make_user(participants.Context.for_scenario(scenario, settings))
    started = time.perf_counter()
    outcome = await run_scenario(scenario, agent=agent, user=user, settings=settings)
    wall = time.perf_counter() - started
    error = outcome.conversation.error
    verdict = f"error: {error}" if error is not None else json.dumps(outcome.verdict.breakdown(), sort_keys=True)
    signals = json.dumps(outcome.signals, sort_keys=True, default=str)
    actions = json.dumps(outcome.recorded_actions, sort_keys=True, default=str)
    return SessionResult(scenario.name, f"{outcome.is_successful} {verdict}", signals, actions, wall)


async def _handshake(ws: ClientConnection, scenario: Scenario, init: dict[str, Any] | None = None) -> dict[str, Any]:
    await ws.send(json.dumps({"type": "hello", "protocol_version": PROTOCOL_VERSION, "scenario": scenario.name}))
    json.loads(await ws.recv())
    state: dict[str, Any] = {}
    scenario.setup_shared_state(state, "agent")
    frame = {
        "type": "apply_initialization",
        "scenario": scenario.name,
        "side": "agent",
        "shared_state_init": init if init is not None else state,
        "initialization_actions": [],
    }
    await ws.send(json.dumps(frame))
    return dict(json.loads(await ws.recv()))


async def _error_code(ws: ClientConnection) -> str:
    """Read until the bot's error frame (its code) or the close."""
    try:
        while True:
            frame = json.loads(await ws.recv())
            if frame.get("type") == "error":
                return str(frame["code"])
    except ConnectionClosed as exc:
        return f"closed({exc.rcvd.code if exc.rcvd else None})"


async def _hostile(kind: str, url: str, heavy: Scenario, duration_s: float) -> str:
    deadline = time.monotonic() + duration_s
    try:
        async with connect(url, max_size=None, open_timeout=10) as ws:
            if kind == "deep_frame":
                await ws.send("[" * 100_000 + "]" * 100_000)
                return await _error_code(ws)
            if kind == "nul_path":
                await ws.send(
                    json.dumps({"type": "hello", "protocol_version": PROTOCOL_VERSION, "scenario": heavy.name})
                )
                await ws.recv()
                frame = {
                    "type": "apply_initialization",
                    "scenario": heavy.name,
                    "side": "agent",
                    "shared_state_init": {"db_path": "tau2/domains/retail/db\x00.json"},
                    "initialization_actions": [],
                }
                await ws.send(json.dumps(frame))
                return await _error_code(ws)
            if kind == "idle":
                await asyncio.sleep(duration_s)
                return "idle to the end"
            await _handshake(ws, heavy)
            if kind == "summary_hog":
                count = 0
                while time.monotonic() < deadline:
                    await ws.send(json.dumps({"type": "get_scenario_summary", "include_db": True}))
                    await ws.recv()
                    count += 1
                return f"{count} summaries with the DB"
            if kind == "big_frames":
                text = "x" * 900_000
                while time.monotonic() < deadline:
                    await ws.send(json.dumps({"type": "user_message", "text": text, "user_tool_calls": []}))
                    try:
                        reply = json.loads(await ws.recv())
                    except ConnectionClosed as exc:
                        # The bot sends the error frame, then closes with its code as the reason; a
                        # client still sending 900 KB frames may lose the frame (the peer's reset
                        # drops unread data) but the close names the code all the same.
                        if exc.rcvd is not None and exc.rcvd.reason:
                            return exc.rcvd.reason
                        return f"closed({exc.rcvd.code if exc.rcvd else None})"
                    if reply.get("type") == "error":
                        return str(reply["code"])
                return "never refused"
            if kind == "non_reader":
                ws.transport.pause_reading()  # stop reading: the bot's replies pile up until its send timeout
                sent = 0
                give_up = time.monotonic() + max(30.0, duration_s)  # until the bot drops it (its send timeout)
                try:
                    while time.monotonic() < give_up:
                        await ws.send(json.dumps({"type": "get_scenario_summary", "include_db": True}))
                        sent += 1
                        await asyncio.sleep(0.05)
                except ConnectionClosed:
                    return f"dropped by the bot after {sent} requests"
                return f"{sent} requests, not dropped"
    except InvalidStatus as exc:
        return f"refused at the handshake (HTTP {exc.response.status_code})"
    except ConnectionClosed as exc:
        return f"closed({exc.rcvd.code if exc.rcvd else None})"
    raise ValueError(f"unknown hostile client {kind!r}")


async def run_load(
    url: str,
    scenarios: Sequence[Scenario],
    settings: Settings,
    sessions: int,
    *,
    hostile: Sequence[str] = (),
    heavy: Scenario | None = None,
    idle: int = 0,
    hostile_s: float = 10.0,
) -> LoadResult:
    """``sessions`` honest runs (round robin over ``scenarios``) at once, beside the hostile clients."""
    started = time.perf_counter()
    honest = [asyncio.ensure_future(_honest(url, scenarios[i % len(scenarios)], settings)) for i in range(sessions)]
    bad: dict[str, asyncio.Future[str]] = {}
    if hostile or idle:
        assert heavy is not None, "hostile clients need a scenario with a big DB"
        for kind in hostile:
            bad[kind] = asyncio.ensure_future(_hostile(kind, url, heavy, hostile_s))
        for i in range(idle):
            bad[f"idle{i}"] = asyncio.ensure_future(_hostile("idle", url, heavy, hostile_s))
    results = await asyncio.gather(*honest)
    wall = time.perf_counter() - started
    seen = {kind: await future for kind, future in bad.items()}
    return LoadResult(list(results), seen, wall)
