"""The offline oracle states the task's communicate_info in its closing message (tau2's COMMUNICATE)."""

from __future__ import annotations

import asyncio
from typing import Any

from pytest_tau2.conversation.offline import GoldPlan, OracleAgent, closing_message
from pytest_tau2.conversation.protocol import Reply
from pytest_tau2.scoring.tau2_reward import communicate_checks

STOP = [{"role": "system", "content": "x"}, {"role": "user", "content": "Thanks. ###STOP###"}]


def close(plan: GoldPlan) -> Reply:
    return asyncio.run(OracleAgent(plan, min_turns=1).respond(list(STOP), []))


def test_closing_message_without_facts_is_the_plain_goodbye() -> None:
    assert closing_message(()) == "Thank you for contacting us. Goodbye!"


def test_the_oracle_states_every_fact_verbatim_then_exits() -> None:
    reply = close(GoldPlan([], communicate=("327", "1000", "1286")))
    assert reply.text == "To confirm: 327; 1000; 1286. Thank you for contacting us. Goodbye!"
    assert [c.name for c in reply.tool_calls] == ["EndConversationTool"]


def test_the_facts_pass_upstreams_communicate_check() -> None:
    facts = ("1628", "polyester", "cotton")
    reply = close(GoldPlan([], communicate=facts))
    transcript: list[dict[str, Any]] = [{"role": "assistant", "content": reply.text, "turn_idx": 5}]
    assert all(check.met for check in communicate_checks(list(facts), transcript))


def test_facts_are_stated_beside_a_gold_ending_tool() -> None:
    transfer = {"name": "transfer_to_human_agents", "arguments": {"summary": "s"}, "requestor": "assistant"}
    plan = GoldPlan([transfer], ending_tools=frozenset({"transfer_to_human_agents"}), communicate=("4",))
    reply = close(plan)
    assert reply.text is not None and "4" in reply.text
    assert [c.name for c in reply.tool_calls] == ["transfer_to_human_agents"]
