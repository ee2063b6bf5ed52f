"""How a model call reaches an answer: the :class:`Transport` protocol and the table of transports.

A transport is one way to answer a call: replay it from a cassette
(:mod:`~pytest_tau2.llm.transport_cassette`), post it as OpenAI JSON
(:mod:`~pytest_tau2.llm.transport_wire`), or hand it to litellm
(:mod:`~pytest_tau2.llm.transport_litellm`). :func:`~pytest_tau2.llm.client.acomplete` asks
the registered transports in ``priority`` order (lowest first) and the first whose
:meth:`Transport.route` returns a sender makes the call; the client owns what every call shares
(retries, failure streaks, usage, the cassette's recording, redacted errors), so a transport only
says whether it takes a call and how one attempt is made.

A new transport is one module that defines a class with these members, and one
:func:`register_transport` call (from that module, a conftest or a plugin); the client registers
the built-ins the same way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pytest_tau2.extension.registry import Registry, load_entry_points

if TYPE_CHECKING:
    from pytest_tau2.llm.cassette import Cassette
    from pytest_tau2.llm.completion import Completion
    from pytest_tau2.llm.config import ModelConfig, RetryPolicy

__all__ = ["Call", "Send", "Transport", "register_transport", "transports", "unregister_transport"]

Send = Callable[[], Awaitable["Completion"]]
"""One attempt at a call; awaited again for each retry of a live transport."""


@dataclass
class Call:
    """One model call as :func:`~pytest_tau2.llm.client.acomplete` received it."""

    config: ModelConfig
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    response_format: dict[str, Any] | None
    policy: RetryPolicy
    side: str
    cassette: Cassette | None
    on_success: list[Callable[[Completion], None]] = field(default_factory=list)
    """Called with the completion once a live transport answered: a transport that passes a
    call on may still want its reply (the cassette records it)."""


class Transport(Protocol):
    """One way to answer a model call."""

    name: str
    """The key in the table (``cassette``, ``wire``, ``litellm``)."""
    priority: int
    """Asked in ascending order; the built-ins use 0 (cassette), 100 (wire) and 1000 (litellm,
    which takes every call it is asked about, so a transport meant to be reached ranks below it)."""
    replays: bool
    """Whether the answers are recordings: returned as they are, never retried, counted in no
    failure streak and not recorded again."""

    def route(self, call: Call) -> Send | None:
        """How this transport makes ``call``, or None when it does not take it.

        May raise for a call that must not be made at all (a cassette miss in a replay-only
        mode, an unknown ``--tau2-llm-transport``): the error reaches the caller unretried.
        """
        ...

    async def aclose(self) -> None:
        """Close what the transport keeps open for the running event loop (HTTP clients)."""
        ...


_TRANSPORTS: Registry[str, Transport] = Registry("LLM transport", describe=lambda t: f"{type(t).__qualname__}")
"""Every transport by name (extension/registry.py)."""
_ORDER: tuple[Transport, ...] = ()


def register_transport(transport: Transport, *, replace: bool = False) -> Transport:
    """Add ``transport`` to the table; an existing name is refused unless ``replace``."""
    _TRANSPORTS.register(transport.name, transport, replace=replace)
    _reorder()
    return transport


def unregister_transport(name: str) -> None:
    """Remove a registered transport (tests and plugins that add one temporarily)."""
    _TRANSPORTS.unregister(name)
    _reorder()


def transports() -> tuple[Transport, ...]:
    """The registered transports in the order a call asks them (a package's, from the
    ``pytest_tau2`` entry points, included)."""
    load_entry_points()
    return _ORDER


def _reorder() -> None:
    global _ORDER
    # Sorted once per registration, not per call: acomplete walks this tuple on every call.
    _ORDER = tuple(sorted(_TRANSPORTS.registered(), key=lambda t: t.priority))
