"""The reference bot with the oracle gives the same verdicts as the in-process oracle."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from pytest_tau2.bot.client import WebSocketAgent
from pytest_tau2.bot.server import BotServer, ServerThread
from pytest_tau2.bot.session import BotConfig
from pytest_tau2.conversation.protocol import Reply
from pytest_tau2.environment.db import db_hash
from pytest_tau2.run import ScenarioOutcome, participants, run_scenario
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.model import SuccessSignal
from pytest_tau2.settings import Settings
from tests.e2e.conftest import RESTAURANT, RETAIL, TELECOM, offline_user, scenario_or_skip


def _in_process(scenario: Scenario, settings: Settings) -> ScenarioOutcome:
    ctx = participants.Context.for_scenario(scenario, settings)
    agent, user = participants.make_agent(ctx), participants.make_user(ctx)
    return asyncio.run(run_scenario(scenario, agent=agent, user=user, settings=settings))


def _remote(scenario: Scenario, settings: Settings, url: str) -> ScenarioOutcome:
    agent = WebSocketAgent(url, scenario, settings, reply_timeout=10)
    return asyncio.run(run_scenario(scenario, agent=agent, user=offline_user(scenario, settings), settings=settings))


ID_KEYS = ("id", "id_generated", "sent_id")


def _without_ids(transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Call ids are minted by whichever process made the call (and where a side sent none, the
    # transcript says so: id_generated, sent_id); everything else must agree.
    out = []
    for message in transcript:
        entry = {k: v for k, v in message.items() if k != "tool_call_id"}
        if entry.get("tool_calls"):
            entry["tool_calls"] = [{k: v for k, v in c.items() if k not in ID_KEYS} for c in entry["tool_calls"]]
        out.append(entry)
    return out


# banking tasks whose customer has no tools (one DB: a customer's tools would write the runner's
# copy while the agent's write the bot's, see docs/tau2-banking-knowledge.md), and mock tasks
# whose initialization (data, actions, a replayed history) runs in the bot as well.
BANKING_AND_MOCK = (
    "tau2_banking_knowledge__task_075",
    "tau2_banking_knowledge__task_076",
    "tau2_mock__update_task_with_initialization_actions",
    "tau2_mock__update_task_with_initialization_data",
)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("tau2_mock__update_task_with_message_history", "opens with a message history"),
        ("tau2_banking_knowledge__task_010", "share one DB"),
    ],
)
def test_bot_agents_skip_what_the_protocol_cannot_carry(
    name: str, why: str, registry: Any, bot_settings: Settings
) -> None:
    from pytest_tau2.errors import ScenarioNotApplicable

    scenario = scenario_or_skip(registry, name, bot_settings)
    settings = dataclasses.replace(bot_settings, agent="websocket", agent_url="ws://127.0.0.1:9")
    ctx = participants.Context.for_scenario(scenario, settings)
    with pytest.raises(ScenarioNotApplicable, match=why):
        participants.make_agent(ctx)


@pytest.mark.parametrize("name", RESTAURANT + RETAIL + TELECOM + BANKING_AND_MOCK)
def test_remote_oracle_matches_in_process(name: str, registry: Any, bot_settings: Settings, reference_bot: Any) -> None:
    local = _in_process(scenario_or_skip(registry, name, bot_settings), bot_settings)
    remote = _remote(scenario_or_skip(registry, name, bot_settings), bot_settings, reference_bot.url)

    assert remote.conversation.error is None
    assert remote.is_successful == local.is_successful is True
    assert remote.signals == local.signals
    assert [(c.id, c.passed) for c in remote.checks] == [(c.id, c.passed) for c in local.checks]
    assert remote.extra["remote"]["db_hashes"] == {side: db_hash(db) for side, db in local.final_dbs.items()}
    assert remote.extra["remote"]["initial_db_hash"] == remote.extra["remote"]["runner_initial_db_hash"]
    assert remote.recorded_actions == local.recorded_actions
    assert remote.conversation.stop_reason == local.conversation.stop_reason in ("exit", "transfer")
    assert remote.conversation.agent_turns == local.conversation.agent_turns
    assert _without_ids(remote.conversation.transcript) == _without_ids(local.conversation.transcript)


class _HangUpAgent:
    """Says one line, then ends the call without any tool (a voice pipeline hanging up)."""

    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        return Reply(text="Goodbye.", tool_calls=[])


def test_db_mismatch_is_diffed_from_the_bot_db(registry: Any, bot_settings: Settings) -> None:
    """A bot that changes nothing: DB_STATE_MATCH fails with a diff of the DB the runner fetched."""
    scenario = scenario_or_skip(registry, "tau2_retail__0", bot_settings)
    config = BotConfig(bot_settings, lambda s, st: _HangUpAgent(), max_steps_per_turn=2)
    with ServerThread(BotServer(config, port=0)) as url:
        outcome = _remote(scenario, bot_settings, url)
    assert outcome.conversation.error is None
    assert outcome.signals[SuccessSignal.DB_STATE_MATCH] is False
    check = next(c for c in outcome.checks if c.id == "db_state_match")
    assert "diff (expected -> actual):" in check.message and "did not send its DB" not in check.message
    assert "values_changed: root['orders']['#W2378156']['status']" in check.message
    assert outcome.final_dbs["agent"] is not None  # fetched with include_db after the hash mismatch
    assert outcome.is_successful is False


def test_exit_without_tool_is_a_clean_exit(registry: Any, bot_settings: Settings, fake_bot: Any) -> None:
    """An exit frame with no tool call ends the loop cleanly, through the bot_exit pseudo call."""
    import json

    from tests.e2e.conftest import fake_handshake

    async def handler(ws: Any) -> None:
        await fake_handshake(ws)
        await ws.recv()
        await ws.send(json.dumps({"type": "exit", "reason": "exit", "text": "Bye now."}))
        await ws.recv()
        await ws.send(json.dumps({"type": "scenario_summary", "actions": [], "db_hash": db_hash({"orders": []})}))
        await ws.wait_closed()

    scenario = scenario_or_skip(registry, "restaurant__menu_question", bot_settings)
    outcome = _remote(scenario, bot_settings, fake_bot(handler))
    assert outcome.conversation.stop_reason == "exit"
    assert outcome.signals[SuccessSignal.CLEAN_EXIT] is True
    assert outcome.signals[SuccessSignal.ACTION_MATCH] is True
    last_call = outcome.conversation.transcript[-2]
    assert last_call["content"] == "Bye now." and last_call["tool_calls"][0]["name"] == "bot_exit"
