"""The single door to the models: :func:`acomplete` runs one chat completion, whichever transport answers it.

The transports (:mod:`pytest_tau2.llm.transport`) are asked in turn: a cassette replay first,
then the OpenAI wire path where it equals litellm's, else litellm. This module owns what every
call shares: retrying transport failures, the failure streaks that stop a run, usage, the
cassette's recording and errors with credentials redacted.

litellm is imported lazily on the first call that needs it
(:func:`pytest_tau2.llm.transport_litellm.import_litellm`): importing it costs seconds and,
without ``LITELLM_LOCAL_MODEL_COST_MAP``, fetches the price list from the internet, which
neither plugin start-up nor offline test runs can afford.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_tau2.errors import InfrastructureError, UnknownUsageWarning
from pytest_tau2.llm import openai_wire
from pytest_tau2.llm.completion import Completion, ToolCallRequest
from pytest_tau2.llm.config import ModelConfig, RetryPolicy
from pytest_tau2.llm.faults import (
    GIVE_UP_AFTER,
    STREAKS,
    MalformedReplyError,
    is_credentials_error,
    is_malformed,
    is_rate_limited,
    is_refused,
    reset_failure_streaks,
    retry_after_seconds,
    retry_delay,
)
from pytest_tau2.llm.ratelimit import Endpoint, endpoint
from pytest_tau2.llm.secrets import redact
from pytest_tau2.llm.transport import Call, Send, Transport, register_transport, transports
from pytest_tau2.llm.transport_cassette import CassetteTransport
from pytest_tau2.llm.transport_litellm import LitellmTransport, import_litellm, imported_litellm
from pytest_tau2.llm.transport_wire import WireTransport

if TYPE_CHECKING:
    from pytest_tau2.llm.cassette import Cassette
    from pytest_tau2.llm.usage import UsageMeter

__all__ = [
    "Completion",
    "ModelConfig",
    "RetryPolicy",
    "ToolCallRequest",
    "aclose",
    "acomplete",
    "preload",
    "redact",
    "reset_failure_streaks",
]

T = TypeVar("T")

# The built-in transports, in the order a call asks them (their priorities): replay, wire, litellm.
for _builtin in (CassetteTransport(), WireTransport(), LitellmTransport()):
    register_transport(_builtin)


def preload(*, litellm: bool = True) -> None:
    """Import what the calls will need now (litellm takes seconds) instead of inside the first call.

    Lets the plugin pay the import at session start rather than inflating the first test's
    duration while blocking its event loop. ``litellm=False``: only the OpenAI wire path's HTTP
    client (for runs whose models all take that path).
    """
    openai_wire.preload()
    if litellm:
        import_litellm()


async def aclose() -> None:
    """Close the cached HTTP clients (the wire path's and litellm's) of the running event loop.

    litellm caches one client per event loop and never closes them, so each
    ``asyncio.run`` that made calls leaves sockets open (``ResourceWarning``).
    Await this once, when the loop's last call has finished; concurrent calls
    in the same loop would lose their connections.  A no-op before the first
    call.
    """
    for transport in transports():
        await transport.aclose()


def _retryable_types(litellm: ModuleType | None) -> tuple[type[BaseException], ...]:
    names = (
        "RateLimitError",
        "InternalServerError",
        "ServiceUnavailableError",
        "BadGatewayError",
        "APIConnectionError",  # also the base of litellm.Timeout
        "Timeout",
    )
    found = tuple(getattr(litellm, name) for name in names if hasattr(litellm, name)) if litellm else ()
    return (*found, asyncio.TimeoutError, ConnectionError)


def _is_retryable(exc: BaseException, litellm: ModuleType | None) -> bool:
    if is_credentials_error(exc):
        return False
    if isinstance(exc, MalformedReplyError):
        return True  # a proxy or provider hiccup, like a 5xx
    if isinstance(exc, _retryable_types(litellm)):
        return True
    # Generic litellm.APIError, provider errors and the wire path's errors carry the HTTP status.
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status in (408, 429) or status >= 500)


async def acomplete(
    config: ModelConfig,
    messages: list[dict[str, Any]],
    *,
    tools: list[dict[str, Any]] | None = None,
    retry: RetryPolicy | None = None,
    usage: UsageMeter | None = None,
    response_format: dict[str, Any] | None = None,
    side: str = "agent",
    cassette: Cassette | None = None,
) -> Completion:
    """Run one chat completion, retrying transport failures.

    Retries HTTP 429, 5xx, timeouts and connection errors with exponential
    backoff; other errors (400, 401, 404, ...) fail at once.  Failures raise
    :class:`~pytest_tau2.errors.InfrastructureError` with credentials
    redacted.  A successful call is recorded in ``usage`` under ``side``.

    With a ``cassette`` (:mod:`pytest_tau2.llm.cassette`), a recorded call
    with the same content is replayed without importing litellm; a miss
    raises :class:`~pytest_tau2.llm.cassette.CassetteMissError` in the replay-only
    modes, or is called and recorded in the others.
    """
    call = Call(config, messages, tools, response_format, retry or RetryPolicy(), side, cassette)
    transport, send = _route(call)
    if transport.replays:
        completion = _user_priced(config, await send())
        if usage is not None:
            usage.record(side, completion)
        return completion
    completion = await within_limits(
        config,
        call.policy,
        lambda: _estimated_tokens(messages, tools),
        send,
        lambda done: done.prompt_tokens + done.completion_tokens,
    )
    completion = _user_priced(config, completion)
    if completion.unknown_usage:
        _warn_unknown_usage(config, side, completion)
    if usage is not None:
        usage.record(side, completion)
    for observe in call.on_success:
        observe(completion)
    return completion


async def within_limits(
    config: ModelConfig,
    policy: RetryPolicy,
    tokens: float | Callable[[], float],
    send: Callable[[], Awaitable[T]],
    used: Callable[[T], float],
) -> T:
    """``send()`` within the endpoint's limits (llm/ratelimit.py), retried as the policy says.

    Transport failures (5xx, timeouts, connections) spend the policy's retries; a rate limit
    (429, 503 with Retry-After) is waited out without spending one, for up to the policy's
    ``rate_limit_timeout_s``. ``tokens``: the call's estimated prompt tokens, or what estimates
    them (called only under ``--tau2-tpm``: printing a call's tool schemas costs ~0.05 ms);
    ``used``: the tokens its reply reports. Chat completions and embeddings alike.
    """
    limits = endpoint(config, policy)
    if callable(tokens):
        tokens = tokens() if limits.counts_tokens else 0.0
    attempts = max(1, policy.max_retries + 1)
    attempt = 0
    refused_first: float | None = None  # this call's first refusal (429 or 503 with Retry-After)
    while True:
        started = await limits.acquire(tokens)
        try:
            result = await send()
        except Exception as exc:
            limits.release()
            litellm = imported_litellm() or sys.modules.get("litellm")
            if is_rate_limited(exc):
                # The provider's limit, not a fault: waited out without spending a retry, until
                # the provider has refused for longer than --tau2-rate-limit-timeout.
                retry_after = retry_after_seconds(exc)
                refusing = limits.refused(started, retry_after)
                refused_first = time.monotonic() if refused_first is None else refused_first
                # The timeout is looked at before sleeping, and the wait never outlasts what is
                # left of it: a Retry-After of hours (a quota's reset) is one more try at the end.
                left = policy.rate_limit_timeout_s - (time.monotonic() - refused_first)
                if left <= 0:
                    raise _refused_too_long(config, limits, refusing, policy, exc) from None
                await asyncio.sleep(min(_refusal_delay(policy, retry_after), left))
                continue
            attempt += 1
            if not _is_retryable(exc, litellm) or attempt >= attempts:
                # Never chained: the provider SDK's frames hold the API key in their locals, which a
                # printed chain shows under ``pytest -l``; the message names the original error.
                raise _infrastructure_error(config, attempt, exc, litellm) from None
            await asyncio.sleep(retry_delay(policy, attempt, exc))
            continue
        except BaseException:
            limits.release()
            raise
        limits.release()
        limits.succeeded(started, tokens, used(result))
        STREAKS.succeeded(config)
        return result


def _estimated_tokens(messages: Sequence[Mapping[str, object]], tools: Sequence[Mapping[str, object]] | None) -> float:
    """A call's prompt tokens before it is sent, for --tau2-tpm (~4 characters a token; the
    real count is charged when the reply comes)."""
    size = sum(len(str(m.get("content") or "")) + len(str(m.get("tool_calls") or "")) for m in messages)
    size += len(str(tools)) if tools else 0
    return max(1.0, size / 4)


def _refusal_delay(policy: RetryPolicy, retry_after: float | None) -> float:
    """How long a refused call waits before it is sent again: what the provider asked, else the
    policy's first backoff; with jitter either way (refused together, calls come back apart)."""
    if retry_after is not None:
        return retry_after * random.uniform(1.0, 1.1)
    return policy.backoff_s * random.uniform(0.5, 1.5)


def _refused_too_long(
    config: ModelConfig, limits: Endpoint, refusing: float, policy: RetryPolicy, exc: BaseException
) -> InfrastructureError:
    """The call gives up after --tau2-rate-limit-timeout of refusals. When no call to the endpoint
    got through meanwhile, the provider refuses everyone: the run stops, and every other call to
    the endpoint ends with this very message (one line in the summary, not one per scenario)."""
    timeout = policy.rate_limit_timeout_s
    status = getattr(exc, "status_code", 429)
    if refusing >= timeout:
        limits.stop(
            f"the provider at {limits.name} refused every call with HTTP {status} (rate limited) for "
            f"{timeout:g} s (--tau2-rate-limit-timeout). Stopping the run: check the account's rate "
            f"limits and quota, or lower --tau2-max-connections / --tau2-rpm / --tau2-tpm."
        )
        return InfrastructureError(limits.stopped or "", fatal=True)
    return InfrastructureError(
        f"LLM call to model {config.model!r} was refused with HTTP {status} (rate limited) for "
        f"{timeout:g} s (--tau2-rate-limit-timeout) while other calls to {limits.name} got through "
        f"(last error: {_error_text(config, exc)})."
    )


def _user_priced(config: ModelConfig, completion: Completion) -> Completion:
    """The completion priced at the user's ``--tau2-price`` for this model, when one was given
    (unpriced still when a usage count is unknown: its price would be made from that count)."""
    if config.price is not None and not completion.unknown_usage:
        rate_in, rate_out = config.price
        completion.cost = (completion.prompt_tokens * rate_in + completion.completion_tokens * rate_out) / 1_000_000
    return completion


def _warn_unknown_usage(config: ModelConfig, side: str, completion: Completion) -> None:
    """One warning per usage field that is not a token count: the reply is kept, the count unknown."""
    for name, value in completion.unknown_usage.items():
        field = name if name == "usage" else f"usage.{name}"
        warnings.warn(
            UnknownUsageWarning(
                f"model {config.model!r} ({side}) reported {field} = {value!r}, not a token count: the reply is "
                f"kept, its {name} recorded as unknown (token_usage.{side}.unknown_usage) and the call unpriced"
            ),
            stacklevel=3,
        )


def _route(call: Call) -> tuple[Transport, Send]:
    """The first registered transport that takes ``call``, and its sender."""
    for transport in transports():
        send = transport.route(call)
        if send is not None:
            return transport, send
    names = ", ".join(t.name for t in transports()) or "none"
    raise InfrastructureError(f"no LLM transport takes a call to model {call.config.model!r} (registered: {names})")


def _error_text(config: ModelConfig, exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    # litellm embeds the provider SDK's traceback in some messages; the first line says it all.
    text = text.split("Traceback (most recent call last)")[0].rstrip()
    return redact(text, config.secrets())


def _infrastructure_error(
    config: ModelConfig, attempts: int, exc: BaseException, litellm: ModuleType | None
) -> InfrastructureError:
    if is_malformed(exc):
        kind = "malformed reply"
    else:
        kind = "transport error" if attempts > 1 else "error"
    plural = "attempt" if attempts == 1 else "attempts"
    message = (
        f"LLM call to model {config.model!r} failed after {attempts} {plural} "
        f"(last {kind}: {_error_text(config, exc)}). Check the model name, "
        f"api_base and credentials, or raise the retry/timeout settings."
    )
    if is_credentials_error(exc):
        return InfrastructureError(message, fatal=True)
    stop = None
    if _is_retryable(exc, litellm):  # a transport failure that outlived every retry
        streak = STREAKS.failed(config)
        if is_refused(exc):
            stop = "nothing accepts connections at the model's address (connection refused)"
        elif streak >= GIVE_UP_AFTER:
            stop = f"{streak} calls in a row to this model failed after every retry"
    if stop is None:
        return InfrastructureError(message)
    return InfrastructureError(f"{message} Stopping the run: {stop}.", fatal=True)
