"""Provider rate limits (llm/ratelimit.py), end to end over real HTTP on both transports.

The loopback server's rate limit (``FakeOpenAIServer.rate_limit``) answers 429 with
``Retry-After`` beyond R requests a second, as a provider does; the calls here go through
``acomplete`` exactly as a sweep's agent, user and judge calls do.
"""

from __future__ import annotations

import asyncio
import email.utils
import threading
import time
from typing import Any

import pytest

from pytest_tau2.errors import InfrastructureError
from pytest_tau2.llm import ModelConfig, RetryPolicy, aclose, acomplete
from pytest_tau2.llm.faults import RETRY_AFTER_CAP_S, reset_failure_streaks, retry_after_seconds
from pytest_tau2.llm.openai_wire import RateLimitError
from pytest_tau2.llm.ratelimit import DECREASE, INCREASE, Endpoint, endpoint, endpoint_name
from tests.support import fixtures
from tests.support.fake_openai import FakeOpenAIServer, Reply, error, sequence, text

fake_llm = fixtures.fake_llm
llm_transport = fixtures.llm_transport

API_KEY = "sk-test-rate-limits-0123"
HELLO = [{"role": "user", "content": "Hello"}]


def config(server: FakeOpenAIServer, model: str = "agent") -> ModelConfig:
    return ModelConfig(f"openai/{model}", {"api_base": server.base_url, "api_key": API_KEY})


def policy(**limits: Any) -> RetryPolicy:
    # No retries at all: whatever gets through a rate limit does so without spending one.
    return RetryPolicy(max_retries=0, backoff_s=0.01, max_backoff_s=0.05, timeout_s=10.0, **limits)


def run_calls(configs: list[ModelConfig], retry: RetryPolicy) -> list[Any]:
    async def all_calls() -> list[Any]:
        try:
            return list(
                await asyncio.gather(*(acomplete(c, HELLO, retry=retry) for c in configs), return_exceptions=True)
            )
        finally:
            await aclose()

    reset_failure_streaks()  # a fresh endpoint state for each test (also forgets the limits)
    return asyncio.run(all_calls())


@pytest.mark.usefixtures("llm_transport")
def test_a_rate_limited_provider_is_waited_out_without_a_retry(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", text("ok"))
    run_calls([config(fake_llm)], policy())  # litellm imported, connections open: not timed
    fake_llm.rate_limit(40)
    started = time.monotonic()
    results = run_calls([config(fake_llm)] * 40, policy())
    wall = time.monotonic() - started

    assert [r.text if not isinstance(r, BaseException) else repr(r) for r in results] == ["ok"] * 40
    assert fake_llm.refused > 0  # the provider did refuse, and every refused call came back
    assert len(fake_llm.requests) == 41
    assert 0.8 < wall < 15.0, wall  # rate-bound: ~(40 - 4 of burst) / 40 per second (a loaded machine: slower)


@pytest.mark.usefixtures("llm_transport")
@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_in_seconds_is_honoured(fake_llm: FakeOpenAIServer, status: int) -> None:
    stamps: list[float] = []
    replies = sequence(error(status, "not now", headers=[("Retry-After", "1")]), text("ok"))

    def handler(request: dict[str, Any]) -> Reply:
        stamps.append(time.monotonic())
        return replies(request)

    fake_llm.add_handler("agent", handler)
    [result] = run_calls([config(fake_llm)], policy())

    assert not isinstance(result, BaseException), result
    assert result.text == "ok"
    # 1 s plus at most 10% jitter; the upper bound leaves a loaded machine room and still fails a
    # doubled wait (2 s).
    assert len(stamps) == 2 and 1.0 <= stamps[1] - stamps[0] < 1.95, stamps


@pytest.mark.usefixtures("llm_transport")
def test_max_connections_caps_calls_in_flight_across_models_of_one_endpoint(fake_llm: FakeOpenAIServer) -> None:
    lock = threading.Lock()
    busy = [0, 0]  # now, highest

    def slow(request: dict[str, Any]) -> Reply:
        with lock:
            busy[0] += 1
            busy[1] = max(busy[1], busy[0])
        time.sleep(0.05)
        with lock:
            busy[0] -= 1
        return text("ok")

    for model in ("agent", "user", "judge"):
        fake_llm.add_handler(model, slow)
    configs = [config(fake_llm, model) for model in ("agent", "user", "judge") for _ in range(4)]
    results = run_calls(configs, policy(max_connections=2))

    assert all(not isinstance(r, BaseException) for r in results), results
    assert busy[1] == 2  # agent, user and judge share the endpoint's two connections


@pytest.mark.usefixtures("llm_transport")
def test_requests_per_minute_spread_the_calls(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", text("ok"))
    started = time.monotonic()
    results = run_calls([config(fake_llm)] * 6, policy(rpm=600))  # 10 a second, one at once
    wall = time.monotonic() - started

    assert all(not isinstance(r, BaseException) for r in results), results
    assert 0.45 < wall < 5.0, wall  # ~0.5 s; one call a second (6 s) fails; loose for a loaded machine
    assert fake_llm.refused == 0


@pytest.mark.usefixtures("llm_transport")
def test_tokens_per_minute_charge_what_the_replies_report(fake_llm: FakeOpenAIServer) -> None:
    # The fake server reports ~10 tokens a call (9 prompt, 1 completion); the prompt is estimated
    # at 1.25 before sending. At 600 a minute (10 a second, 10 at hand), the second call waits for
    # the first's real count (~0.1 s) and the third for the second's (~0.9 s).
    fake_llm.add_handler("agent", text("ok"))

    async def three() -> None:
        try:
            for _ in range(3):
                await acomplete(config(fake_llm), HELLO, retry=policy(tpm=600))
        finally:
            await aclose()

    run_calls([config(fake_llm)], policy())  # litellm imported: not timed (the limits forgotten after it)
    reset_failure_streaks()
    started = time.monotonic()
    asyncio.run(three())
    wall = time.monotonic() - started
    assert 0.8 < wall < 6.0, wall
    assert len(fake_llm.requests) == 4


@pytest.mark.usefixtures("llm_transport")
def test_a_provider_that_keeps_refusing_stops_the_run_with_one_message(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", error(429, "You exceeded your current quota", headers=[("Retry-After", "0.1")]))
    fake_llm.add_handler("judge", error(429, "You exceeded your current quota", headers=[("Retry-After", "0.1")]))
    started = time.monotonic()
    results = run_calls(
        [config(fake_llm), config(fake_llm), config(fake_llm, "judge")], policy(rate_limit_timeout_s=0.5)
    )
    wall = time.monotonic() - started

    assert all(isinstance(r, InfrastructureError) and r.fatal for r in results), results
    messages = {str(r) for r in results}
    assert len(messages) == 1, messages  # every call to the endpoint ends with the same line
    [message] = messages
    assert f"the provider at openai {fake_llm.base_url} refused every call with HTTP 429" in message
    assert "for 0.5 s (--tau2-rate-limit-timeout). Stopping the run" in message
    assert API_KEY not in message
    assert wall < 3.0, wall


@pytest.mark.usefixtures("llm_transport")
def test_a_call_refused_while_others_get_through_is_an_error_of_its_own(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", error(429, "Request too large for tokens per min", headers=[("Retry-After", "0.05")]))
    fake_llm.add_handler("user", text("ok"))

    async def calls() -> list[Any]:
        async def users() -> None:
            for _ in range(20):
                await acomplete(config(fake_llm, "user"), HELLO, retry=policy())
                await asyncio.sleep(0.03)

        try:
            refused = acomplete(config(fake_llm), HELLO, retry=policy(rate_limit_timeout_s=0.3))
            return list(await asyncio.gather(refused, users(), return_exceptions=True))
        finally:
            await aclose()

    reset_failure_streaks()
    refused, users = asyncio.run(calls())

    assert users is None
    assert isinstance(refused, InfrastructureError) and not refused.fatal
    assert "was refused with HTTP 429 (rate limited) for 0.3 s" in str(refused)
    assert "while other calls to openai" in str(refused) and "Request too large" in str(refused)


# ---- the parts, without HTTP ------------------------------------------------------------------------


def _refusal(**headers: str) -> RateLimitError:
    return RateLimitError("slow down", 429, headers)


def test_retry_after_forms() -> None:
    assert retry_after_seconds(_refusal(**{"retry-after": "3"})) == 3.0
    assert retry_after_seconds(_refusal(**{"retry-after": "2", "retry-after-ms": "150"})) == 0.15
    assert retry_after_seconds(_refusal(**{"retry-after": "soon"})) is None
    assert retry_after_seconds(_refusal()) is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    seconds = retry_after_seconds(_refusal(**{"retry-after": later}))
    assert seconds is not None and 27 < seconds <= 30


def test_retry_after_is_capped_in_every_form() -> None:
    cap = RETRY_AFTER_CAP_S
    for value in ("inf", "Infinity", "99999999999", "100000", "1e400"):
        assert retry_after_seconds(_refusal(**{"retry-after": value})) == cap, value
    assert retry_after_seconds(_refusal(**{"retry-after": "-5"})) == 0.0
    assert retry_after_seconds(_refusal(**{"retry-after": "nan"})) is None
    assert retry_after_seconds(_refusal(**{"retry-after-ms": "inf"})) == cap
    assert retry_after_seconds(_refusal(**{"retry-after-ms": "nan", "retry-after": "2"})) == 2.0
    hours = email.utils.formatdate(time.time() + 6 * 3600, usegmt=True)  # a quota's reset time
    assert retry_after_seconds(_refusal(**{"retry-after": hours})) == cap
    past = email.utils.formatdate(time.time() - 3600, usegmt=True)
    assert retry_after_seconds(_refusal(**{"retry-after": past})) == 0.0
    assert retry_after_seconds(_refusal(**{"retry-after": "Mon, 01 Jan 99999 00:00:00 GMT"})) in (None, cap)


def test_the_cap_falls_once_per_burst_of_refusals_and_climbs_back() -> None:
    reset_failure_streaks()
    limits = Endpoint("openai http://x", RetryPolicy(max_connections=10))
    sent = time.monotonic()
    limits.refused(sent)
    limits.refused(sent)  # the same burst: sent before the first decrease
    assert limits.limit == pytest.approx(10 * DECREASE)
    assert limits.decreases == 1
    limits.refused(time.monotonic())  # sent after it: the cap falls again
    assert limits.limit == pytest.approx(10 * DECREASE * DECREASE)
    low = limits.limit
    limits.in_flight = 10  # the cap binds: successes raise it
    limits.succeeded(sent, 1, 1)
    limits.succeeded(sent, 1, 1)
    assert limits.limit == pytest.approx(low + 2 * INCREASE)
    for _ in range(40):
        limits.succeeded(sent, 1, 1)
    assert limits.limit == 10  # never above --tau2-max-connections
    assert limits.refused_since is None


def test_an_endpoint_is_its_provider_and_address() -> None:
    base = "https://user:hunter2@gateway.example/v1/"
    one = endpoint_name(ModelConfig("openai/agent", {"api_base": base}))
    assert one == "openai https://user:***@gateway.example/v1"
    assert endpoint_name(ModelConfig("gpt-4.1", {})) == endpoint_name(ModelConfig("openai/gpt-4o", {}))
    assert endpoint_name(ModelConfig("anthropic/claude-x", {})) == "anthropic"
    reset_failure_streaks()
    shared = endpoint(ModelConfig("openai/a", {"api_base": base}), RetryPolicy())
    assert endpoint(ModelConfig("openai/b", {"api_base": base.rstrip("/")}), RetryPolicy()) is shared


def test_xdist_workers_each_take_their_share_of_the_limits(tmp_path: Any) -> None:
    from pytest_tau2.plugin.worker_settings import receive
    from pytest_tau2.settings import Settings

    values = Settings(max_connections=10, rpm=600.0, tpm=90000.0).to_dict()
    worker = receive(values, {}, tmp_path, workers=3)
    assert (worker.max_connections, worker.rpm, worker.tpm) == (4, 200.0, 30000.0)
    assert receive(values, {}, tmp_path, workers=1).max_connections == 10
    assert receive(Settings(max_connections=2).to_dict(), {}, tmp_path, workers=4).max_connections == 1
    assert receive(Settings().to_dict(), {}, tmp_path, workers=4).rpm is None
