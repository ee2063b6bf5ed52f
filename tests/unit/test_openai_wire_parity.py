"""The OpenAI wire path sends what litellm sends and reads what litellm reads (docs/speed.md).

Every call shape pytest-tau2 makes (agent turns with tools and tool results, user-simulator
turns, judge calls with a JSON schema, every model argument the wire path accepts) goes once
through litellm and once through the wire path, against the same loopback server and the same
reply. The request bodies, the credentials and custom headers, and the completions (text, tool
calls, tokens, cost to the last bit, served model) must be identical, for priced, unpriced,
dated and bare model names. Calls the wire path must leave to litellm are listed at the end.
"""

from __future__ import annotations

import asyncio
import copy
import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_tau2.llm import Completion, ModelConfig, RetryPolicy, aclose, acomplete, openai_wire
from tests.support.fake_openai import FakeOpenAIServer, Reply, raw

KEY = "sk-parity-0123456789abcdef"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order_details",
            "description": "Look up an order by id.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        },
    },
    {
        "type": "function",
        "function": {"name": "transfer_to_human_agents", "description": "Hand over.", "parameters": {"type": "object"}},
    },
]
AGENT_MESSAGES = [
    {"role": "system", "content": "You are a retail agent. Policy: ..."},
    {"role": "user", "content": "Where is order #W2378156? Ça presse ✓"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_order_details", "arguments": '{"order_id": "#W2378156"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "name": "get_order_details", "content": '{"status": "delivered"}'},
    {"role": "assistant", "content": "It was delivered."},
    {"role": "user", "content": "Thanks. ###STOP###", "name": None},
]
USER_MESSAGES = [
    {"role": "system", "content": "You are a customer. Instructions: ..."},
    {"role": "user", "content": "Hi! How can I help you today?"},
    {"role": "assistant", "content": "I want to return a lamp."},
    {"role": "user", "content": ""},
]
JUDGE_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "verdicts",
        "schema": {
            "type": "object",
            "properties": {"results": {"type": "array", "items": {"type": "boolean"}}},
            "required": ["results"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}
CALLS: dict[str, dict[str, Any]] = {
    "agent": {"messages": AGENT_MESSAGES, "tools": TOOLS, "args": {"temperature": 0.0, "seed": 7}},
    "user-simulator": {"messages": USER_MESSAGES, "args": {"temperature": 0.0, "seed": 300}},
    "judge": {
        "messages": [{"role": "system", "content": "Judge."}, {"role": "user", "content": "Transcript ..."}],
        "response_format": JUDGE_FORMAT,
        "args": {"max_tokens": 256, "top_p": 1.0},
    },
    "every-argument": {
        "messages": AGENT_MESSAGES,
        "tools": TOOLS,
        "args": {
            "temperature": 0.3,
            "top_p": 0.9,
            "seed": 1,
            "max_tokens": 64,
            "stop": ["###STOP###"],
            "presence_penalty": 0.1,
            "frequency_penalty": 0.2,
            "parallel_tool_calls": False,
            "timeout": 30,
            "extra_headers": {"X-Team": "evals"},
        },
    },
}
HEAD = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000}
USAGE = {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280}
REPLIES: dict[str, dict[str, Any]] = {
    "text": {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}],
        "usage": USAGE,
    },
    "tool-calls": {
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "get_order_details", "arguments": '{"order_id": "#W1"}'},
                        },
                        {
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "transfer_to_human_agents", "arguments": "{}"},
                        },
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": USAGE,
    },
    "cached-prompt": {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}],
        "usage": {**USAGE, "prompt_tokens_details": {"cached_tokens": 1024}},
    },
}
# (requested model, model the server says it served)
MODELS = [
    ("openai/gpt-4o-mini", "gpt-4o-mini"),
    ("openai/gpt-4o-mini", "gpt-4o-mini-2024-07-18"),
    ("openai/gpt-4.1-2099-01-01", "gpt-4.1-2099-01-01"),  # priced by litellm as its family
    ("gpt-4.1", "gpt-4.1-2025-04-14"),  # a bare OpenAI name
    ("openai/agent", "agent"),  # a self-hosted, unpriced model
    ("openai/agent", "gpt-4o-mini-2024-07-18"),  # a proxy that names a priced model
    ("openai/Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct"),  # resembles priced entries
]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def _call(monkeypatch: pytest.MonkeyPatch, transport: str, config: ModelConfig, call: dict[str, Any]) -> Completion:
    monkeypatch.setenv("TAU2_LLM_TRANSPORT", transport)
    messages = copy.deepcopy(call["messages"])

    async def run() -> Completion:
        try:
            return await acomplete(
                config,
                messages,
                tools=call.get("tools"),
                response_format=call.get("response_format"),
                retry=RetryPolicy(max_retries=0, timeout_s=10.0),
            )
        finally:
            await aclose()

    done = asyncio.run(run())
    assert messages == call["messages"], "the caller's messages were changed"
    return done


def _essentials(completion: Completion) -> dict[str, Any]:
    return {
        "text": completion.text,
        "tool_calls": [(c.id, c.name, c.arguments) for c in completion.tool_calls],
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "cost": completion.cost,
        "model": completion.model,
    }


def _headers(headers: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in headers.items() if name in ("authorization", "content-type", "x-team")}


@pytest.mark.parametrize(("model", "served"), MODELS, ids=[f"{m}->{s}" for m, s in MODELS])
@pytest.mark.parametrize("reply_name", list(REPLIES))
@pytest.mark.parametrize("call_name", list(CALLS))
def test_the_wire_path_equals_litellm(
    server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    model: str,
    served: str,
    reply_name: str,
    call_name: str,
) -> None:
    call = CALLS[call_name]
    body = {**HEAD, "model": served, **REPLIES[reply_name]}
    server.add_handler(lambda request: True, lambda request: raw(body))
    config = ModelConfig(model, {"api_base": server.base_url, "api_key": KEY, **call["args"]})
    assert openai_wire.route(config.model, config.args, call["messages"]) is not None

    seen = len(server.requests)
    by_litellm = _call(monkeypatch, "litellm", config, call)
    by_wire = _call(monkeypatch, "auto", config, call)

    requests, headers = server.requests[seen:], server.request_headers[seen:]
    assert len(requests) == 2
    assert requests[1] == requests[0], json.dumps(requests, indent=1)[:3000]
    assert _headers(headers[1]) == _headers(headers[0])
    assert _headers(headers[1])["authorization"] == f"Bearer {KEY}"
    assert _essentials(by_wire) == _essentials(by_litellm)


def test_unpriced_models_are_priced_without_importing_litellm(tmp_path: Any) -> None:
    """A self-hosted model's reply is priced (None) from litellm's price file, litellm never imported."""
    import subprocess

    script = (
        "import asyncio, sys\n"
        "from pytest_tau2.llm import ModelConfig, aclose, acomplete\n"
        "from tests.support.fake_openai import FakeOpenAIServer, text\n"
        "async def main(url):\n"
        "    try:\n"
        "        return await acomplete(ModelConfig('openai/agent', {'api_base': url, 'api_key': 'k'}),"
        " [{'role': 'user', 'content': 'hi'}])\n"
        "    finally:\n"
        "        await aclose()\n"
        "with FakeOpenAIServer() as server:\n"
        "    server.add_handler('agent', text('hello'))\n"
        "    done = asyncio.run(main(server.base_url))\n"
        "print(done.text, done.cost, 'litellm' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, "TAU2_LLM_TRANSPORT": "auto"},
    )
    assert out.stdout.split() == ["hello", "None", "False"], out.stdout + out.stderr


@pytest.mark.parametrize(
    ("model", "args", "messages"),
    [
        ("openai/o3-mini", {}, [{"role": "user", "content": "hi"}]),  # litellm renames max_tokens, drops temperature
        ("openai/gpt-5-mini", {}, [{"role": "user", "content": "hi"}]),
        ("openai/gpt-4o-audio-preview", {}, [{"role": "user", "content": "hi"}]),
        ("anthropic/claude-3-5-sonnet-20241022", {}, [{"role": "user", "content": "hi"}]),
        ("azure/gpt-4o", {}, [{"role": "user", "content": "hi"}]),
        ("my-unknown-bare-model", {}, [{"role": "user", "content": "hi"}]),
        ("openai/agent", {"reasoning_effort": "low"}, [{"role": "user", "content": "hi"}]),
        ("openai/agent", {"user": "me"}, [{"role": "user", "content": "hi"}]),  # litellm drops it
        ("openai/agent", {"input_cost_per_token": 1e-6}, [{"role": "user", "content": "hi"}]),  # custom price
        ("openai/agent", {"extra_headers": "not a mapping"}, [{"role": "user", "content": "hi"}]),
        ("openai/agent", {"api_base": "http://u:pw@127.0.0.1:9/v1"}, [{"role": "user", "content": "hi"}]),
        ("openai/agent", {}, [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]),
        ("openai/agent", {}, [{"role": "user", "content": "hi", "cache_control": {"type": "ephemeral"}}]),
        ("openai/agent", {}, [{"role": "developer", "content": "hi"}]),
    ],
)
def test_calls_litellm_transforms_stay_with_litellm(model: str, args: dict[str, Any], messages: list[Any]) -> None:
    assert openai_wire.route(model, args, messages) is None


def test_a_litellm_configured_by_the_user_keeps_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Callbacks, a global api_base or the SDK's organisation variables: litellm takes the call."""
    messages = [{"role": "user", "content": "hi"}]
    args = {"api_base": "http://127.0.0.1:9/v1", "api_key": "k"}
    assert openai_wire.route("openai/agent", args, messages) is not None
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    assert openai_wire.route("openai/agent", args, messages) is None
    monkeypatch.delenv("OPENAI_ORG_ID")
    fake_litellm = type(sys)("litellm")
    fake_litellm.success_callback = ["langfuse"]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "litellm", fake_litellm)
    assert openai_wire.route("openai/agent", args, messages) is None


def test_the_litellm_transport_never_takes_the_wire_path(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add_handler(lambda request: True, Reply(content="hello"))
    config = ModelConfig("openai/agent", {"api_base": server.base_url, "api_key": KEY})
    seen = len(server.requests)
    _call(monkeypatch, "litellm", config, {"messages": [{"role": "user", "content": "hi"}]})
    assert "openai" in server.request_headers[seen].get("user-agent", "").lower()  # the OpenAI SDK's client
    _call(monkeypatch, "auto", config, {"messages": [{"role": "user", "content": "hi"}]})
    assert "openai" not in server.request_headers[seen + 1].get("user-agent", "").lower()


def test_an_unknown_transport_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAU2_LLM_TRANSPORT", "fast")
    config = ModelConfig("openai/agent", {"api_base": "http://127.0.0.1:9/v1", "api_key": KEY})
    with pytest.raises(ValueError, match=r"'fast' is not one of auto, litellm"):
        asyncio.run(acomplete(config, [{"role": "user", "content": "hi"}]))


def test_proxies_come_from_the_environment_as_for_the_openai_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://user:pw@proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1,.corp.example")
    openai_wire._proxy_for.cache_clear()
    try:
        assert openai_wire._proxy_for("https://api.openai.com/v1/chat/completions") == (
            "http://user:pw@proxy.internal:3128"
        )
        assert openai_wire._proxy_for("http://127.0.0.1:8000/v1/chat/completions") is None
        assert openai_wire._proxy_for("https://llm.corp.example/v1/chat/completions") is None
        assert openai_wire._proxy_for("http://vllm.lab:8000/v1/chat/completions") is None  # no HTTP_PROXY
    finally:
        openai_wire._proxy_for.cache_clear()
