"""litellm as a transport: every call no other transport takes, any provider litellm supports.

litellm is imported lazily, on the first call that needs it (:func:`import_litellm`): importing
it costs seconds and, without ``LITELLM_LOCAL_MODEL_COST_MAP``, fetches the price list from the
internet, which neither plugin start-up nor offline test runs can afford.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from types import ModuleType
from typing import Any

from pytest_tau2.llm import compat_litellm
from pytest_tau2.llm.completion import Completion, from_litellm, from_wire, token_counts
from pytest_tau2.llm.config import ModelConfig, RetryPolicy
from pytest_tau2.llm.pricing import cost_of_response, cost_of_wire_reply
from pytest_tau2.llm.secrets import SecretDict
from pytest_tau2.llm.transport import Call, Send

__all__ = ["LitellmTransport", "import_litellm", "imported_litellm"]

_litellm_module: ModuleType | None = None
_litellm_lock = threading.Lock()


def import_litellm() -> ModuleType:
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
                _internal_sub_call = compat_litellm.find_internal_sub_call()
                _litellm_module = litellm
    return _litellm_module


def imported_litellm() -> ModuleType | None:
    """litellm if :func:`import_litellm` has imported it, else None (never imports it)."""
    return _litellm_module


class LitellmTransport:
    """Calls ``litellm.acompletion``: the fallback that takes every call it is asked about."""

    name = "litellm"
    priority = 1000
    replays = False

    def route(self, call: Call) -> Send:
        litellm = import_litellm()
        config = call.config
        kwargs = _call_kwargs(config, call.messages, call.tools, call.policy, call.response_format)

        async def send() -> Completion:
            try:
                response = await _call_once(litellm, kwargs)
            except Exception as exc:
                body = compat_litellm.reply_not_converted(exc)
                if body is None:
                    raise
                # read as the wire path reads it, so both transports agree on what a model said;
                # unpriced when its usage is not a count (from_wire: MalformedReplyError when the
                # body is no completion at all)
                usable = not _usage_unusable(body.get("usage"))

                def price() -> float | None:
                    return cost_of_wire_reply(config, body, import_litellm) if usable else None

                return from_wire(body, config.model, price)
            return from_litellm(response, config.model, lambda: cost_of_response(litellm, config, response))

        return send

    async def aclose(self) -> None:
        """Close litellm's cached clients of the running loop (litellm never closes them itself)."""
        if _litellm_module is None:
            return
        close = getattr(_litellm_module, "close_litellm_async_clients", None)
        if close is not None:
            await close()


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
    # The client owns retrying; litellm's and the OpenAI SDK's own retries would
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


async def _call_once(litellm: ModuleType, kwargs: dict[str, Any]) -> Any:
    timeout = kwargs.get("timeout")
    with _without_success_logging(litellm):
        if not isinstance(timeout, (int, float)):
            return await litellm.acompletion(**kwargs)
        # Backstop for providers that ignore litellm's timeout: a hung socket must
        # not stall a whole test session.
        return await asyncio.wait_for(litellm.acompletion(**kwargs), timeout=timeout * 1.5 + 1.0)


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
    if _internal_sub_call is None or compat_litellm.callbacks_registered(litellm):
        return nullcontext()
    return _internal_sub_call()


_internal_sub_call: Callable[[], AbstractContextManager[object]] | None = None


def _usage_unusable(usage: object) -> bool:
    if usage is None:
        return False
    if not isinstance(usage, dict):
        return True
    return bool(token_counts(usage)[1]) or any(
        isinstance(v, (str, bool)) or (isinstance(v, float) and not v.is_integer())
        for k, v in usage.items()
        if k.endswith("_tokens")
    )
