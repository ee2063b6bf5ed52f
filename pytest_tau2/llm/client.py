"""The single place where pytest-tau2 talks to litellm.

litellm is imported lazily on the first call: importing it costs seconds and,
without ``LITELLM_LOCAL_MODEL_COST_MAP``, fetches the price list from the
internet, which neither plugin start-up nor offline test runs can afford.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pytest_tau2.errors import InfrastructureError
from pytest_tau2.llm import openai_wire
from pytest_tau2.llm.completion import Completion, ToolCallRequest, from_litellm, from_wire
from pytest_tau2.llm.faults import (
    GIVE_UP_AFTER,
    STREAKS,
    MalformedReplyError,
    is_credentials_error,
    is_malformed,
    is_refused,
    reset_failure_streaks,
    retry_delay,
)
from pytest_tau2.llm.pricing import cost_of_response, cost_of_wire_reply
from pytest_tau2.llm.secrets import SecretDict, mask_args, mask_json_text, redact, secret_items

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

# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelConfig:
    """A litellm model string plus the keyword arguments passed to ``acompletion``.

    ``args`` carries api_base, api_key, temperature, seed, reasoning_effort,
    timeout, ... verbatim.
    """

    model: str
    args: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_option(cls, model: str | None, args_json: str | None, *, option_name: str) -> ModelConfig | None:
        """Build a config from a ``--<option>`` model and its JSON-object args string.

        Returns ``None`` when neither is given.  Raises ``ValueError`` naming
        ``option_name`` and the offending text when the args are not a JSON
        object, or when args come without a model.
        """
        has_args = args_json is not None and args_json.strip() != ""
        if model is None or not model.strip():
            if has_args:
                raise ValueError(
                    f"{option_name}: model arguments {mask_json_text(args_json or '')!r} were given "
                    f"but no model; pass a litellm model string such as 'openai/gpt-4o-mini'"
                )
            if model is not None:
                raise ValueError(f"{option_name}: the model name is empty")
            return None
        return cls(
            model=model.strip(),
            args=_parse_args(args_json, option_name) if has_args else {},
        )

    def __repr__(self) -> str:
        # What tracebacks (also with ``pytest -l``) and JUnit files show: credentials masked.
        return f"ModelConfig(model={self.model!r}, args={mask_args(self.args)!r})"

    def secrets(self) -> list[str]:
        """String values of credential-like arguments (used by :func:`redact`)."""
        return [value for _, value in secret_items(self.args)]

    def safe_dict(self) -> dict[str, Any]:
        """``{"model", "args"}`` with credential arguments masked, for metrics files."""
        return {"model": self.model, "args": mask_args(self.args)}


def _parse_args(args_json: str | None, option_name: str) -> dict[str, Any]:
    text = args_json or ""
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{option_name}: expected a JSON object such as '{{\"temperature\": 0}}', "
            f"got invalid JSON {mask_json_text(text)!r} ({exc.msg} at position {exc.pos})"
        ) from None
    if not isinstance(parsed, dict):
        # ValueError, not TypeError: it is bad option text, like invalid JSON.
        raise ValueError(
            f"{option_name}: expected a JSON object such as '{{\"temperature\": 0}}', "
            f"got {type(parsed).__name__} {mask_json_text(text)!r}"
        )
    return parsed


@dataclass
class RetryPolicy:
    """How :func:`acomplete` retries transport failures (429, 5xx, timeouts, resets)."""

    max_retries: int = 3
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    timeout_s: float = 120.0  # per call, not for all attempts together
    transport: str | None = None
    """``auto`` (the OpenAI wire path where it equals litellm's, else litellm) or ``litellm``;
    None reads ``$TAU2_LLM_TRANSPORT``, default ``auto`` (docs/speed.md)."""

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        return min(self.max_backoff_s, self.backoff_s * 2.0 ** (attempt - 1))


# ---------------------------------------------------------------------------
# litellm access
# ---------------------------------------------------------------------------

_litellm_module: ModuleType | None = None
_litellm_lock = threading.Lock()


def _litellm() -> ModuleType:
    """Import litellm once, offline, and quietly."""
    global _litellm_module
    if _litellm_module is None:
        with _litellm_lock:
            if _litellm_module is None:
                # Without this, importing litellm downloads the model price map.
                os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
                import litellm

                # Otherwise every failed call prints "Give Feedback / Get Help" banners.
                litellm.suppress_debug_info = True
                global _internal_sub_call
                _internal_sub_call = _find_internal_sub_call()
                _litellm_module = litellm
    return _litellm_module


def preload(*, litellm: bool = True) -> None:
    """Import what the calls will need now (litellm takes seconds) instead of inside the first call.

    Lets the plugin pay the import at session start rather than inflating the first test's
    duration while blocking its event loop. ``litellm=False``: only the OpenAI wire path's HTTP
    client (for runs whose models all take that path).
    """
    openai_wire.preload()
    if litellm:
        _litellm()


async def aclose() -> None:
    """Close the cached HTTP clients (the wire path's and litellm's) of the running event loop.

    litellm caches one client per event loop and never closes them, so each
    ``asyncio.run`` that made calls leaves sockets open (``ResourceWarning``).
    Await this once, when the loop's last call has finished; concurrent calls
    in the same loop would lose their connections.  A no-op before the first
    call.
    """
    await openai_wire.aclose()
    if _litellm_module is None:
        return
    close = getattr(_litellm_module, "close_litellm_async_clients", None)
    if close is not None:
        await close()


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


TRANSPORTS = ("auto", "litellm")


def transport_of(policy: RetryPolicy) -> str:
    """The transport in force: the policy's, else ``$TAU2_LLM_TRANSPORT``, else ``auto``."""
    chosen = policy.transport or os.environ.get("TAU2_LLM_TRANSPORT") or "auto"
    if chosen not in TRANSPORTS:
        raise ValueError(f"LLM transport {chosen!r} is not one of {', '.join(TRANSPORTS)} (--tau2-llm-transport)")
    return chosen


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
    """Run one chat completion through litellm, retrying transport failures.

    Retries HTTP 429, 5xx, timeouts and connection errors with exponential
    backoff; other errors (400, 401, 404, ...) fail at once.  Failures raise
    :class:`~pytest_tau2.errors.InfrastructureError` with credentials
    redacted.  A successful call is recorded in ``usage`` under ``side``.

    With a ``cassette`` (:mod:`pytest_tau2.llm.cassette`), a recorded call
    with the same content is replayed without importing litellm; a miss
    raises :class:`~pytest_tau2.llm.cassette.CassetteMissError` in the replay-only
    modes, or is called and recorded in the others.
    """
    lookup = None
    if cassette is not None:
        lookup = cassette.lookup(side, config, messages, tools, response_format)
        if lookup.completion is not None:
            if usage is not None:
                usage.record(side, lookup.completion)
            return lookup.completion
    policy = retry or RetryPolicy()
    wire = None
    if transport_of(policy) == "auto":
        wire = openai_wire.route(config.model, config.args, messages)
    litellm = _litellm() if wire is None else None
    kwargs = _call_kwargs(config, messages, tools, policy, response_format) if litellm is not None else {}
    attempts = max(1, policy.max_retries + 1)
    for attempt in range(1, attempts + 1):
        try:
            if wire is not None:
                completion = await _call_wire(config, wire, messages, tools, response_format, policy)
            else:
                assert litellm is not None
                completion = await _call_litellm(litellm, config, kwargs)
        except Exception as exc:
            litellm = litellm or sys.modules.get("litellm")
            if not _is_retryable(exc, litellm) or attempt == attempts:
                # Never chained: the provider SDK's frames hold the API key in their locals, which a
                # printed chain shows under ``pytest -l``; the message names the original error.
                raise _infrastructure_error(config, attempt, exc, litellm) from None
            await asyncio.sleep(retry_delay(policy, attempt, exc))
            continue
        STREAKS.succeeded(config)
        if usage is not None:
            usage.record(side, completion)
        if cassette is not None and lookup is not None:
            cassette.record(lookup, completion)
        return completion
    raise AssertionError("unreachable: the retry loop always returns or raises")


def _call_kwargs(
    config: ModelConfig,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    policy: RetryPolicy,
    response_format: dict[str, Any] | None,
) -> dict[str, Any]:
    # A SecretDict: ``pytest -l`` prints this local in a traceback, credentials masked.
    kwargs: dict[str, Any] = SecretDict({"timeout": policy.timeout_s, **config.args})
    kwargs.update(model=config.model, messages=messages, drop_params=True)
    # This loop owns retrying; litellm's and the OpenAI SDK's own retries would
    # multiply attempts and hide them from the attempt count.
    kwargs.update(num_retries=0, max_retries=0)
    if tools:
        kwargs.update(tools=tools, tool_choice="auto")
    else:
        kwargs.pop("tools", None)
        kwargs.pop("tool_choice", None)
    if response_format is not None:
        kwargs["response_format"] = response_format
    return kwargs


async def _call_wire(
    config: ModelConfig,
    wire: openai_wire.WireRoute,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    response_format: dict[str, Any] | None,
    policy: RetryPolicy,
) -> Completion:
    timeout = config.args.get("timeout", policy.timeout_s)
    body = openai_wire.request_body(wire, messages, tools, response_format)
    reply = await openai_wire.post(wire, body, timeout)
    return from_wire(reply, config.model, lambda: cost_of_wire_reply(config, reply, _litellm))


async def _call_litellm(litellm: ModuleType, config: ModelConfig, kwargs: dict[str, Any]) -> Completion:
    response = await _call_once(litellm, kwargs)
    return from_litellm(response, config.model, lambda: cost_of_response(litellm, config, response))


async def _call_once(litellm: ModuleType, kwargs: dict[str, Any]) -> Any:
    timeout = kwargs.get("timeout")
    with _without_success_logging(litellm):
        if not isinstance(timeout, (int, float)):
            return await litellm.acompletion(**kwargs)
        # Backstop for providers that ignore litellm's timeout: a hung socket must
        # not stall a whole test session.
        return await asyncio.wait_for(litellm.acompletion(**kwargs), timeout=timeout * 1.5 + 1.0)


_CALLBACK_LISTS = openai_wire.CALLBACK_LISTS


def _without_success_logging(litellm: ModuleType) -> AbstractContextManager[object]:
    """Skip litellm's per-call logging work when nobody listens to it.

    After each completion litellm builds a "standard logging payload" (which prices the call a
    second time and walks the model map) and schedules async and threaded success handlers:
    ~40% of its CPU per call (bench/results/llm_speed.md). With no callback registered that
    work reaches no one, so the call runs as litellm's own nested sub-calls do (its
    ``internal_sub_call`` context). The response, its usage and its ``response_cost`` are built
    before that point and do not change. A user who registers litellm callbacks (e.g.
    ``litellm.success_callback = ["langfuse"]`` in conftest.py) gets the full logging path.
    """
    if _internal_sub_call is None or any(getattr(litellm, name, None) for name in _CALLBACK_LISTS):
        return nullcontext()
    return _internal_sub_call()


def _find_internal_sub_call() -> Callable[[], AbstractContextManager[object]] | None:
    try:
        from litellm._internal_context import internal_sub_call
    except ImportError:  # an older or newer litellm: keep the full path
        return None
    return internal_sub_call


_internal_sub_call: Callable[[], AbstractContextManager[object]] | None = None


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
