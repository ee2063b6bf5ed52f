"""Fixtures of the WebSocket end-to-end tests: the reference bot and misbehaving fake bots.

Every server binds 127.0.0.1 on a free port, runs in a background thread with its own event
loop, and is stopped by its fixture (open sessions closed).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import Server, ServerConnection, serve

from pytest_tau2.bot.agents import oracle_factory
from pytest_tau2.bot.server import BotServer, ServerThread
from pytest_tau2.bot.session import BotConfig
from pytest_tau2.run import participants
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.registry import all_scenarios
from pytest_tau2.settings import Settings

REPO = Path(__file__).resolve().parents[2]
RESTAURANT = (
    "restaurant__margherita_for_two",
    "restaurant__menu_question",
    "restaurant__party_order",
    "restaurant__pepperoni_mushrooms",
    "restaurant__pizza_pepperoni",
    "restaurant__veggie_and_lemonade",
)
RETAIL = tuple(f"tau2_retail__{i}" for i in range(10))
TELECOM = (  # dual-side: the phone on the runner, the carrier in the bot, synced both ways
    "tau2_telecom__service_issue_overdue_bill_suspension_unseat_sim_card_persona_easy",
    "tau2_telecom__mms_issue_airplane_mode_on_break_app_both_permissions_data_usage_exceeded_user_abroad_"
    "roaming_disabled_off_persona_none",
    "tau2_telecom__mobile_data_issue_bad_network_preference_bad_vpn_data_saver_mode_on_data_usage_exceeded_"
    "user_abroad_roaming_disabled_off_persona_easy",
    "tau2_telecom__service_issue_airplane_mode_on_break_apn_settings_contract_end_suspension_lock_sim_card_pin_"
    "persona_none",
)


def make_settings(**overrides: Any) -> Settings:
    """Settings as the plugin resolves them from the repository root (offline participants)."""
    values: dict[str, Any] = {
        "eval_data_root": str(REPO / "data"),
        "data_dir": os.environ.get("TAU2_DATA_DIR"),
        "results_dir": "unused",
        "prompts": "seed",  # these bots and fakes end with an exit tool and a closing turn
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture(scope="session")
def bot_settings() -> Settings:
    return make_settings()


@pytest.fixture(scope="session")
def registry(bot_settings: Settings) -> dict[str, type[Scenario]]:
    errors: list[tuple[str, Exception]] = []
    return all_scenarios(bot_settings, errors)


def scenario_or_skip(registry: dict[str, type[Scenario]], name: str, settings: Settings) -> Scenario:
    if name not in registry:
        pytest.skip(f"{name} is not registered here (tau2 data missing? set TAU2_DATA_DIR)")
    return registry[name]().bind(settings)


def offline_user(scenario: Scenario, settings: Settings) -> Any:
    """The scripted user the plugin would build for ``scenario``."""
    return participants.make_user(participants.Context.for_scenario(scenario, settings))


@pytest.fixture(scope="session")
def reference_bot(bot_settings: Settings) -> Iterator[BotServer]:
    """The reference bot serving the oracle, shared by the session's tests (sessions are independent)."""
    server = BotServer(BotConfig(bot_settings, oracle_factory()), port=0)
    with ServerThread(server):
        yield server


Handler = Callable[[ServerConnection], Awaitable[None]]


class FakeBot:
    """A deliberately misbehaving bot: any websockets handler, on a free loopback port."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.port = 0
        self._server: Server | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await serve(self.handler, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await asyncio.wait_for(self._server.wait_closed(), 10)


@pytest.fixture
def fake_bot() -> Iterator[Callable[[Handler], str]]:
    """``start(handler) -> url``; every fake started in the test is stopped afterwards."""
    threads: list[ServerThread] = []

    def start(handler: Handler) -> str:
        thread = ServerThread(FakeBot(handler))
        threads.append(thread)
        return thread.start()

    yield start
    for thread in threads:
        thread.stop()


async def fake_handshake(ws: ServerConnection) -> None:
    """Answer hello and apply_initialization as a well-behaved bot would."""
    json.loads(await ws.recv())
    await ws.send(json.dumps({"type": "ready", "protocol_version": 1, "session_id": "fake"}))
    json.loads(await ws.recv())
    await ws.send(json.dumps({"type": "initialized", "db_hash": None}))
