"""The litellm client, end to end over real HTTP against the loopback fake server."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.errors import InfrastructureError
from pytest_tau2.llm import (
    Completion,
    ModelConfig,
    RetryPolicy,
    UsageMeter,
    aclose,
    acomplete,
    preload,
    redact,
)
from tests.support import fixtures
from tests.support.fake_openai import (
    FakeOpenAIServer,
    drop,
    error,
    hang,
    sequence,
    text,
    tool_calls,
)

API_KEY = "sk-test-fake-key-123456"
FAST = RetryPolicy(max_retries=3, backoff_s=0.01, max_backoff_s=0.02, timeout_s=10.0)
HELLO = [{"role": "user", "content": "Hello"}]
REPO_ROOT = Path(__file__).resolve().parents[2]

# Works whether or not a conftest also registers tests.support.fixtures.
fake_llm = fixtures.fake_llm
llm_transport = fixtures.llm_transport
pytestmark = pytest.mark.usefixtures("llm_transport")  # every test on both transports


def config(server: FakeOpenAIServer, model: str = "agent", **args: Any) -> ModelConfig:
    return ModelConfig(f"openai/{model}", {"api_base": server.base_url, "api_key": API_KEY, **args})


def complete(cfg: ModelConfig, messages: list[dict[str, Any]] = HELLO, **kwargs: Any) -> Completion:
    kwargs.setdefault("retry", FAST)

    async def call() -> Completion:
        try:
            return await acomplete(cfg, messages, **kwargs)
        finally:
            await aclose()

    return asyncio.run(call())


LOOKUP_TOOL = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look up an order",
        "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
    },
}


# --- successful calls -------------------------------------------------------


def test_text_reply(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", text("Hi, how can I help?"))

    result = complete(config(fake_llm))

    assert result.text == "Hi, how can I help?"
    assert result.tool_calls == []
    assert result.model == "agent"
    assert result.raw["choices"][0]["message"]["content"] == "Hi, how can I help?"
    (request,) = fake_llm.requests_for("agent")
    assert request["messages"] == HELLO
    assert "tools" not in request and "tool_choice" not in request


def test_tool_call_reply_keeps_raw_arguments(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler(
        "agent",
        tool_calls([("lookup", {"a": 1}), ("lookup", '{"a": ')], content="Checking."),
    )

    result = complete(config(fake_llm), tools=[LOOKUP_TOOL])

    assert result.text == "Checking."
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("lookup", '{"a": 1}'),
        ("lookup", '{"a": '),
    ]
    assert [c.id for c in result.tool_calls] == ["call_1", "call_2"]
    (request,) = fake_llm.requests
    assert request["tools"][0]["function"]["name"] == "lookup"
    assert request["tool_choice"] == "auto"


def test_args_and_response_format_are_forwarded(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", text("{}"))
    schema = {"type": "json_object"}

    complete(config(fake_llm, temperature=0.0, seed=7), response_format=schema)

    (request,) = fake_llm.requests
    assert request["temperature"] == 0.0
    assert request["seed"] == 7
    assert request["response_format"] == schema


def test_usage_is_metered_per_side(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", text("a reply of some length"))
    fake_llm.add_handler("user", text("ok"))
    meter = UsageMeter()

    first = complete(config(fake_llm), usage=meter)
    second = complete(config(fake_llm), usage=meter)
    user = complete(config(fake_llm, "user"), usage=meter, side="user")

    assert first.prompt_tokens > 0 and first.completion_tokens > 0
    totals = meter.to_dict()
    assert totals["agent"]["calls"] == 2
    assert totals["agent"]["prompt_tokens"] == first.prompt_tokens + second.prompt_tokens
    assert totals["agent"]["total_tokens"] == (
        first.prompt_tokens + first.completion_tokens + second.prompt_tokens + second.completion_tokens
    )
    assert totals["user"]["calls"] == 1
    assert totals["user"]["completion_tokens"] == user.completion_tokens
    assert totals["judge"] == {
        "calls": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 0,
        "cost_usd": 0.0,
    }


def test_unpriced_model_has_no_cost(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", text("hi"))
    meter = UsageMeter()

    result = complete(config(fake_llm), usage=meter)

    assert result.cost is None
    assert meter.to_dict()["agent"]["cost_usd"] is None


def test_priced_model_has_a_cost(fake_llm: FakeOpenAIServer) -> None:
    # A name litellm's bundled price map knows, served by the fake server.
    fake_llm.add_handler("gpt-4o", text("hi"))

    result = complete(config(fake_llm, "gpt-4o"))

    assert result.cost is not None and result.cost > 0


# --- retries ------------------------------------------------------------------


def test_server_error_then_success_is_retried(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", sequence(error(500, "boom"), text("recovered")))

    result = complete(config(fake_llm))

    assert result.text == "recovered"
    assert len(fake_llm.requests) == 2


@pytest.mark.parametrize("failure", [error(429, "slow down"), error(503, "busy"), drop()])
def test_transport_failures_are_retried(fake_llm: FakeOpenAIServer, failure: Any) -> None:
    fake_llm.add_handler("agent", sequence(failure, text("ok")))

    assert complete(config(fake_llm)).text == "ok"
    assert len(fake_llm.requests) == 2


def test_exhausted_retries_raise_without_the_api_key(
    fake_llm: FakeOpenAIServer,
) -> None:
    fake_llm.add_handler("agent", error(500, f"upstream rejected key {API_KEY}"))

    with pytest.raises(InfrastructureError) as caught:
        complete(config(fake_llm))

    message = str(caught.value)
    assert len(fake_llm.requests) == 4
    assert "openai/agent" in message and "4 attempts" in message
    assert "upstream rejected key" in message
    assert API_KEY not in message
    # The original exception is not chained when its text holds the key.
    assert caught.value.__cause__ is None


def test_hang_times_out_after_retries(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", hang(5))
    policy = RetryPolicy(max_retries=1, backoff_s=0.01, max_backoff_s=0.01, timeout_s=0.5)

    started = time.monotonic()
    with pytest.raises(InfrastructureError, match="2 attempts") as caught:
        complete(config(fake_llm), retry=policy)

    assert time.monotonic() - started < 4
    assert "Timeout" in str(caught.value)
    assert len(fake_llm.requests) == 2


def test_bad_request_is_not_retried(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", error(400, "messages must not be empty"))

    with pytest.raises(InfrastructureError, match="after 1 attempt") as caught:
        complete(config(fake_llm))

    assert "messages must not be empty" in str(caught.value)
    assert len(fake_llm.requests) == 1


def test_auth_error_is_not_retried(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", error(401, "invalid api key"))

    with pytest.raises(InfrastructureError, match="after 1 attempt"):
        complete(config(fake_llm))

    assert len(fake_llm.requests) == 1


def test_unscripted_model_is_a_clear_error(fake_llm: FakeOpenAIServer) -> None:
    with pytest.raises(InfrastructureError, match="no handler registered for model 'ghost'"):
        complete(config(fake_llm, "ghost"))


def test_retry_policy_backoff_is_capped() -> None:
    policy = RetryPolicy(backoff_s=0.5, max_backoff_s=3.0)

    assert [policy.delay(n) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 3.0, 3.0]


# --- configuration ------------------------------------------------------------


def test_from_option_parses_json_object() -> None:
    cfg = ModelConfig.from_option("openai/gpt-4o-mini", '{"temperature": 0, "seed": 3}', option_name="--agent-llm")

    assert cfg == ModelConfig("openai/gpt-4o-mini", {"temperature": 0, "seed": 3})
    assert ModelConfig.from_option("m", None, option_name="--x") == ModelConfig("m", {})
    assert ModelConfig.from_option(None, None, option_name="--x") is None


@pytest.mark.parametrize(
    ("args_json", "expected"),
    [
        ('{"temperature": ', "invalid JSON"),
        ("[1, 2]", "got list"),
        ('"text"', "got str"),
    ],
)
def test_from_option_rejects_non_objects(args_json: str, expected: str) -> None:
    with pytest.raises(ValueError, match=expected) as caught:
        ModelConfig.from_option("m", args_json, option_name="--agent-llm-args")

    assert "--agent-llm-args" in str(caught.value)
    assert args_json in str(caught.value)


def test_from_option_rejects_args_without_model() -> None:
    with pytest.raises(ValueError, match=r"--user-llm-args.*no model"):
        ModelConfig.from_option(None, '{"seed": 1}', option_name="--user-llm-args")


def test_safe_dict_masks_credentials() -> None:
    cfg = ModelConfig(
        "openai/x",
        {
            "api_key": "abc-secret-value",
            "temperature": 0,
            "max_tokens": 256,
            "extra_headers": {"Authorization": "Bearer abcdefghijk"},
        },
    )

    assert cfg.safe_dict() == {
        "model": "openai/x",
        "args": {
            "api_key": "***",
            "temperature": 0,
            "max_tokens": 256,
            "extra_headers": {"Authorization": "***"},
        },
    }
    assert sorted(cfg.secrets()) == ["Bearer abcdefghijk", "abc-secret-value"]


def test_redact(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_API_KEY", "acme-0123456789")
    monkeypatch.setenv("SHORT_TOKEN", "short")
    monkeypatch.setenv("PLAIN_SETTING", "plain-value-123")

    assert redact("key sk-abcdefgh1234 here") == "key *** here"
    assert redact("sk-short") == "sk-short"
    assert redact("env acme-0123456789!") == "env ***!"
    assert redact("short and plain-value-123") == "short and plain-value-123"
    assert redact("given hunter22 twice hunter22", ["hunter22"]) == "given *** twice ***"
    assert redact("Authorization: Bearer abc.def-ghi_jkl") == "Authorization: Bearer ***"
    assert redact("nothing to hide", None) == "nothing to hide"


# --- usage meter -----------------------------------------------------------------


def _completion(prompt: int, completion: int, cost: float | None) -> Completion:
    return Completion("t", [], prompt, completion, cost, "m", {})


def test_usage_meter_merge_and_unpriced_cost() -> None:
    one, two = UsageMeter(), UsageMeter()
    one.record("agent", _completion(10, 5, 0.25))
    two.record("agent", _completion(1, 1, 0.5))
    two.record("judge", _completion(3, 2, 0.1))
    two.record("judge", _completion(3, 2, None))

    merged = one.merge(two).to_dict()

    assert merged["agent"] == {
        "calls": 2,
        "prompt_tokens": 11,
        "completion_tokens": 6,
        "total_tokens": 17,
        "cost_usd": 0.75,
    }
    assert merged["judge"]["calls"] == 2 and merged["judge"]["cost_usd"] is None
    assert UsageMeter.from_dict(json.loads(json.dumps(merged))).to_dict() == merged


# --- import hygiene ------------------------------------------------------------------


def test_importing_the_package_does_not_import_litellm() -> None:
    code = "import sys, pytest_tau2.llm\nassert 'litellm' not in sys.modules, 'litellm imported eagerly'\n"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("LITELLM_LOCAL_MODEL_COST_MAP", None)

    proc = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert proc.returncode == 0, proc.stderr


# --- the fake server itself ------------------------------------------------------


def _post(conn: http.client.HTTPConnection, model: str) -> tuple[int, Any]:
    body = json.dumps({"model": model, "messages": HELLO})
    conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    return response.status, json.loads(response.read())


def test_fake_server_sequence_predicate_and_keep_alive() -> None:
    with FakeOpenAIServer() as server:
        server.add_handler("a", sequence(text("one"), text("two"), repeat_last=False))
        server.add_handler(lambda request: request["model"].startswith("judge"), text("j"))
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)

        replies = [_post(conn, m) for m in ("a", "judge-1", "a", "a")]

        statuses = [status for status, _ in replies]
        contents = [body.get("choices", [{}])[0].get("message", {}).get("content") for _, body in replies]
        assert statuses == [200, 200, 200, 500]
        assert contents == ["one", "j", "two", None]
        assert "exhausted" in replies[3][1]["error"]["message"]
        assert len(server.handler_errors) == 1
        assert [r["model"] for r in server.requests_for("openai/a")] == ["a", "a", "a"]
        usage = replies[0][1]["usage"]
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
        conn.close()


def test_fake_server_latency_and_prompt_stop_during_hang() -> None:
    server = FakeOpenAIServer(latency_s=0.2).start()
    server.add_handler("slow", hang(30))
    server.add_handler("fast", text("ok"))
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    started = time.monotonic()
    assert _post(conn, "fast")[0] == 200
    assert time.monotonic() - started >= 0.2

    hung = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    hung.request("POST", "/v1/chat/completions", json.dumps({"model": "slow"}))
    time.sleep(0.1)
    started = time.monotonic()
    server.stop()

    assert time.monotonic() - started < 2
    with pytest.raises((http.client.HTTPException, OSError)):
        hung.getresponse()
    conn.close()
    hung.close()


def test_preload_imports_litellm_offline() -> None:
    preload()

    assert "litellm" in sys.modules
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
