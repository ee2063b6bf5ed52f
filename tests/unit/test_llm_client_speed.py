"""The lean call path of the litellm client: litellm's success logging is skipped only when no
litellm callback is registered, and what a call returns (text, tool calls, usage, cost) is the
same either way."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_tau2.llm import (
    Completion,
    ModelConfig,
    RetryPolicy,
    aclose,
    acomplete,
    compat_litellm,
    preload,
    transport_litellm,
)
from tests.support.fake_openai import FakeOpenAIServer, text, tool_calls

FAST = RetryPolicy(max_retries=0, timeout_s=10.0)
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Where is my order #W1?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order_details",
            "description": "Look up an order.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        },
    }
]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        fake.add_handler("gpt-4o-mini", text("It shipped yesterday."))  # priced in litellm's map
        fake.add_handler("unpriced-model", tool_calls([("get_order_details", {"order_id": "#W1"})]))
        yield fake


def _calls(server: FakeOpenAIServer, model: str, count: int) -> list[Completion]:
    cfg = ModelConfig(f"openai/{model}", {"api_base": server.base_url, "api_key": "sk-test"})

    async def run() -> list[Completion]:
        try:
            return [await acomplete(cfg, MESSAGES, tools=TOOLS, retry=FAST) for _ in range(count)]
        finally:
            await aclose()

    return asyncio.run(run())


def _essentials(completion: Completion) -> tuple[Any, ...]:
    calls = [(c.name, c.arguments) for c in completion.tool_calls]
    return (completion.text, calls, completion.prompt_tokens, completion.completion_tokens, completion.cost)


@pytest.mark.parametrize("model", ["gpt-4o-mini", "unpriced-model"])
def test_lean_path_returns_what_the_logged_path_returns(server: FakeOpenAIServer, model: str) -> None:
    preload()
    import litellm
    from litellm.integrations.custom_logger import CustomLogger

    events: list[str] = []

    class Listener(CustomLogger):  # type: ignore[misc]
        async def async_log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
            events.append(str(kwargs.get("model")))

    lean = _calls(server, model, 2)
    assert events == []
    saved = {name: list(getattr(litellm, name)) for name in compat_litellm.CALLBACK_LISTS if hasattr(litellm, name)}
    litellm.callbacks = [Listener()]
    try:
        assert transport_litellm._without_success_logging(litellm).__class__.__name__ == "nullcontext"
        logged = _calls(server, model, 2)
    finally:
        for name, value in saved.items():  # litellm copies callbacks into its other lists
            setattr(litellm, name, value)
    assert [_essentials(c) for c in lean] == [_essentials(c) for c in logged]
    if model == "gpt-4o-mini":
        assert lean[0].cost is not None and lean[0].cost > 0
    else:
        assert lean[0].cost is None  # unpriced: no made-up 0.0 on either path
    assert events, "a registered litellm callback must still see every success"


def test_lean_path_is_used_when_no_callback_is_registered() -> None:
    preload()
    import litellm

    assert not any(getattr(litellm, name, None) for name in compat_litellm.CALLBACK_LISTS)
    assert transport_litellm._without_success_logging(litellm).__class__.__name__ != "nullcontext"
