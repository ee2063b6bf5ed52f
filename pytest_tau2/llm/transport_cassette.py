"""The cassette as a transport: a recorded call is answered from the file, before any live transport.

A call the cassette does not hold goes on to the live transports (or raises
:class:`~pytest_tau2.llm.cassette.CassetteMissError` in a replay-only mode); its reply is then
added to the cassette through :attr:`~pytest_tau2.llm.transport.Call.on_success`. Nothing here
imports litellm: a replayed call never pays its import.
"""

from __future__ import annotations

import functools

from pytest_tau2.llm.completion import Completion
from pytest_tau2.llm.transport import Call, Send

__all__ = ["CassetteTransport"]


class CassetteTransport:
    """Replays the calls of the :class:`~pytest_tau2.llm.cassette.Cassette` passed to the call."""

    name = "cassette"
    priority = 0
    replays = True

    def route(self, call: Call) -> Send | None:
        cassette = call.cassette
        if cassette is None:
            return None
        lookup = cassette.lookup(call.side, call.config, call.messages, call.tools, call.response_format)
        replayed = lookup.completion
        if replayed is None:
            call.on_success.append(functools.partial(cassette.record, lookup))
            return None

        async def replay() -> Completion:
            return replayed

        return replay

    async def aclose(self) -> None:
        """Nothing to close: a cassette is read when opened and written when saved."""
