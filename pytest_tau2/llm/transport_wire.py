"""The OpenAI wire path as a transport: calls whose wire form is known to equal litellm's, sent directly.

:func:`pytest_tau2.llm.openai_wire.route` decides whether a call qualifies; with
``--tau2-llm-transport litellm`` (``$TAU2_LLM_TRANSPORT``) none does. The reply is priced by
litellm's rules (:mod:`pytest_tau2.llm.pricing`), which imports litellm only when some price
might apply.
"""

from __future__ import annotations

from pytest_tau2.llm import openai_wire
from pytest_tau2.llm.completion import Completion, from_wire
from pytest_tau2.llm.config import transport_of
from pytest_tau2.llm.pricing import cost_of_wire_reply
from pytest_tau2.llm.transport import Call, Send
from pytest_tau2.llm.transport_litellm import import_litellm

__all__ = ["WireTransport"]


class WireTransport:
    """Posts OpenAI chat-completion JSON over aiohttp (:mod:`pytest_tau2.llm.openai_wire`)."""

    name = "wire"
    priority = 100
    replays = False

    def route(self, call: Call) -> Send | None:
        if transport_of(call.policy) != "auto":
            return None
        config = call.config
        wire = openai_wire.route(config.model, config.args, call.messages)
        if wire is None:
            return None
        timeout = config.args.get("timeout", call.policy.timeout_s)

        async def send() -> Completion:
            body = openai_wire.request_body(wire, call.messages, call.tools, call.response_format)
            reply = await openai_wire.post(wire, body, timeout)
            return from_wire(reply, config.model, lambda: cost_of_wire_reply(config, reply, import_litellm))

        return send

    async def aclose(self) -> None:
        """Close the wire path's HTTP client of the running loop."""
        await openai_wire.aclose()
