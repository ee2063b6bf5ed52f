"""Per-scenario limits of docs/campaigns.md in the loop and the pipeline: max_tokens, max_cost,
max_messages stop the conversation between steps, with a stop reason naming the limit and no
infrastructure error (the conversation is scored); the judge's usage is never counted."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_tau2 import EndConversationTool
from pytest_tau2.conversation.loop import LIMIT_STOP_REASONS, Conversation, Limits, Spend
from pytest_tau2.environment.env import Environment
from pytest_tau2.llm.completion import Completion
from pytest_tau2.llm.usage import UsageMeter
from pytest_tau2.run.pipeline import conversation_spend, limits_for
from pytest_tau2.settings import Settings


class Script:
    """Always the same reply."""

    def __init__(self, then: str) -> None:
        self.then = then

    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        return self.then


def make_env() -> Environment:
    state: dict[str, Any] = {"db": {}}
    return Environment("agent", state, [EndConversationTool(state)])


def _completion(prompt: int, completion: int, cost: float | None, *, replayed: bool = False) -> Completion:
    return Completion("ok", [], prompt, completion, cost, "m", {}, replayed=replayed)


def _run(limits: Limits, spend: Any = None) -> Any:
    import asyncio

    conversation = Conversation(
        agent=Script("Sure."),
        user=Script("Go on."),
        agent_env=make_env(),
        user_env=None,
        agent_prompt="a",
        user_prompt="u",
        limits=limits,
        spend=spend,
    )
    return asyncio.run(conversation.run())


def test_max_messages_stops_between_steps_and_is_not_an_error() -> None:
    result = _run(Limits(max_messages=5))
    assert (result.stop_reason, result.error, result.clean_exit) == ("max_messages", None, False)
    assert len(result.transcript) == 5
    assert result.limit == "max_messages 5 reached: 5 messages"


def test_max_tokens_reads_the_spend_of_every_side_but_the_judge() -> None:
    meter = UsageMeter()
    meter.record("judge", _completion(10_000, 10_000, 1.0))  # never counted: the judge grades afterwards
    agent, user = Script("Sure."), Script("Go on.")

    class Counting:
        def __init__(self, inner: Script, side: str) -> None:
            self.inner, self.side = inner, side

        async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
            meter.record(self.side, _completion(40, 10, 0.001))
            return await self.inner.respond(messages, tools)

    import asyncio

    result = asyncio.run(
        Conversation(
            agent=Counting(agent, "agent"),
            user=Counting(user, "user"),
            agent_env=make_env(),
            user_env=None,
            agent_prompt="a",
            user_prompt="u",
            limits=Limits(max_tokens=200),
            spend=conversation_spend(meter),
        ).run()
    )
    assert (result.stop_reason, result.error) == ("max_tokens", None)
    assert len(result.transcript) == 4  # 4 calls x 50 tokens: stopped before the fifth
    assert result.limit == "max_tokens 200 reached: 200 tokens (user 100, agent 100)"


def test_max_cost_stops_once_the_spend_reaches_it() -> None:
    spent = iter([Spend(0, 0.0), Spend(10, 0.02), Spend(20, 0.05, (("agent", 20, 0.05),))])
    result = _run(Limits(max_cost=0.05), spend=lambda: next(spent))
    assert result.stop_reason == "max_cost"
    assert result.limit == "max_cost $0.05 reached: $0.0500 (agent $0.0500)"


def test_an_unpriced_spend_never_stops_on_cost() -> None:
    result = _run(Limits(max_cost=0.01, max_messages=6), spend=lambda: Spend(10, None))
    assert result.stop_reason == "max_messages"


def test_replayed_calls_count_towards_limits_but_not_towards_the_run_budget() -> None:
    meter = UsageMeter()
    meter.record("agent", _completion(100, 20, 0.5, replayed=True))
    meter.record("agent", _completion(10, 2, 0.25))
    assert conversation_spend(meter)().tokens == 132  # a replay behaves as the recording did
    assert meter.spent() == 0.25  # but only the live call was paid for


class _Limited:
    max_turns = 30
    max_duration = 600.0
    max_tokens: int | None = 5000
    max_cost: float | None = None
    max_messages: int | None = 40


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, (5000, None, 40)),
        ({"max_tokens": 100, "max_cost": 0.5}, (100, 0.5, 40)),  # an option overrides the scenario's value
    ],
)
def test_limits_come_from_the_scenario_unless_an_option_overrides_them(
    options: dict[str, Any], expected: tuple[Any, ...]
) -> None:
    limits = limits_for(_Limited(), Settings(**options))  # type: ignore[arg-type]
    assert (limits.max_tokens, limits.max_cost, limits.max_messages) == expected


def test_every_limit_is_a_documented_stop_reason() -> None:
    from pytest_tau2.report.record import LIMIT_STOP_REASONS as RECORDED
    from pytest_tau2.report.record import STOP_REASONS

    assert LIMIT_STOP_REASONS <= set(STOP_REASONS)
    assert LIMIT_STOP_REASONS == RECORDED
