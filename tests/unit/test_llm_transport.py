"""The transport table (pytest_tau2.llm.transport): a new transport is one class and one registration,
and the client still owns retries, usage and the failure streaks for it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from pytest_tau2.errors import InfrastructureError
from pytest_tau2.llm import Completion, ModelConfig, RetryPolicy, UsageMeter, acomplete, client
from pytest_tau2.llm.transport import Call, Send, register_transport, transports, unregister_transport


class EchoTransport:
    """Answers ``echo/...`` models with the last message; fails the first ``failures`` attempts."""

    name = "echo"
    priority = 50  # after the cassette, before the wire path and litellm
    replays = False

    def __init__(self, failures: int = 0, status: int = 503) -> None:
        self.failures = failures
        self.status = status
        self.attempts = 0
        self.closed = 0

    def route(self, call: Call) -> Send | None:
        if not call.config.model.startswith("echo/"):
            return None

        async def send() -> Completion:
            self.attempts += 1
            if self.attempts <= self.failures:
                error = RuntimeError(f"echo is down ({self.status})")
                error.status_code = self.status  # type: ignore[attr-defined]
                raise error
            text = str(call.messages[-1]["content"])
            return Completion(text, [], 3, 1, 0.5, call.config.model, {})

        return send

    async def aclose(self) -> None:
        self.closed += 1


@pytest.fixture
def echo() -> Iterator[EchoTransport]:
    transport = EchoTransport(failures=1)
    register_transport(transport)
    yield transport
    unregister_transport("echo")


FAST = RetryPolicy(max_retries=2, backoff_s=0.0, max_backoff_s=0.0)


def test_the_builtins_are_asked_replay_first_then_wire_then_litellm() -> None:
    assert [t.name for t in transports()] == ["cassette", "wire", "litellm"]


def test_a_registered_transport_answers_its_calls_with_the_clients_retries_and_usage(echo: EchoTransport) -> None:
    usage = UsageMeter()
    reply = asyncio.run(
        acomplete(ModelConfig("echo/one"), [{"role": "user", "content": "hi"}], retry=FAST, usage=usage)
    )
    assert reply.text == "hi"
    assert echo.attempts == 2  # the first attempt's 503 was retried by the client
    assert usage.side("agent").calls == 1 and usage.side("agent").cost == 0.5
    assert [t.name for t in transports()] == ["cassette", "echo", "wire", "litellm"]
    asyncio.run(client.aclose())
    assert echo.closed == 1


def test_a_registered_transports_lasting_failure_is_an_infrastructure_error(echo: EchoTransport) -> None:
    echo.failures = 10
    with pytest.raises(InfrastructureError, match=r"'echo/one' failed after 3 attempts .*echo is down \(503\)"):
        asyncio.run(acomplete(ModelConfig("echo/one"), [{"role": "user", "content": "hi"}], retry=FAST))
    client.reset_failure_streaks()


def test_a_second_transport_under_a_taken_name_is_refused(echo: EchoTransport) -> None:
    with pytest.raises(ValueError, match=r"'echo' is already registered"):
        register_transport(EchoTransport())
    replacement = EchoTransport()
    assert register_transport(replacement, replace=True) is replacement
    assert [t for t in transports() if t.name == "echo"] == [replacement]
