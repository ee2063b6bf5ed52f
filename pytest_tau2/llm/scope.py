"""The running trial's model services, for code that calls models from inside a tool.

A tool that embeds a query or asks a model to rerank (banking_knowledge's dense retrieval)
runs synchronously, off the event loop (``Tool.slow``), with no participant at hand. The
trial sets a :class:`ModelScope` for the duration of its run (a context variable, so
concurrent scenarios of one process each see their own; the conversation loop runs tools in
a copy of the caller's context): the cassette the agent's calls go to, the retry policy, the
usage meter, the settings and the event loop; :func:`run_sync` awaits a model call on that
loop from the tool's thread.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pytest_tau2.llm.cassette import Cassette
    from pytest_tau2.llm.config import RetryPolicy
    from pytest_tau2.llm.usage import UsageMeter

__all__ = ["SCOPE", "ModelScope", "current", "run_sync"]

T = TypeVar("T")


@dataclass
class ModelScope:
    cassette: Cassette | None
    retry: RetryPolicy | None
    usage: UsageMeter | None
    settings: object
    """The run's settings (``pytest_tau2.settings.Settings``; typed loosely: llm/ does not import it)."""
    loop: asyncio.AbstractEventLoop | None = None


SCOPE: contextvars.ContextVar[ModelScope | None] = contextvars.ContextVar("pytest_tau2_model_scope", default=None)


def current() -> ModelScope | None:
    return SCOPE.get()


def run_sync(coro: Coroutine[object, object, T]) -> T:
    """Await ``coro`` from a tool's thread: on the trial's loop when one runs elsewhere, else on a loop of its own."""
    scope = SCOPE.get()
    loop = scope.loop if scope is not None else None
    if loop is not None and loop.is_running():
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not loop:
            return asyncio.run_coroutine_threadsafe(coro, loop).result()
        coro.close()
        raise RuntimeError("a model call from a tool must run off the event loop (set Tool.slow = True)")
    return asyncio.run(_then_close(coro))


async def _then_close(coro: Coroutine[object, object, T]) -> T:
    """``coro``, then the HTTP clients it opened on this short-lived loop closed (no leaked sockets)."""
    from pytest_tau2.llm.client import aclose

    try:
        return await coro
    finally:
        await aclose()
