"""What one chat completion returned, normalised the same way whichever path made the call.

:func:`from_litellm` reads a litellm response object, :func:`from_wire` the JSON body of an
OpenAI-compatible reply (:mod:`pytest_tau2.llm.openai_wire`); a reply that is not a usable
completion raises :class:`~pytest_tau2.llm.faults.MalformedReplyError` (retried) on both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_tau2.llm.faults import MalformedReplyError

__all__ = ["Completion", "ToolCallRequest", "from_litellm", "from_wire"]


@dataclass
class ToolCallRequest:
    """One tool call as the model sent it.

    ``arguments`` is the raw JSON string, unparsed: the caller turns invalid
    JSON into an error result shown to the model.
    """

    id: str
    name: str
    arguments: str


@dataclass
class Completion:
    """The normalised result of one chat completion.

    ``cost`` is ``None`` when litellm has no price for the model (never a
    misleading 0.0); ``model`` is the name the provider reported.  ``replayed``
    marks a completion served from a cassette: its tokens and cost are those of
    the recorded call, not new spend.
    """

    text: str | None
    tool_calls: list[ToolCallRequest]
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    model: str
    raw: dict[str, Any]
    replayed: bool = False


def _no_completion(choices: Any) -> MalformedReplyError:
    return MalformedReplyError(
        f"the provider answered without a completion (choices: {choices!r}); "
        "a content filter or a broken proxy can do this"
    )


def from_litellm(response: Any, default_model: str, price: Callable[[], float | None]) -> Completion:
    """A litellm ``ModelResponse`` as a :class:`Completion`; ``price`` is asked once it is valid."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise _no_completion(choices)
    message = getattr(choices[0], "message", None)
    if message is None:
        raise MalformedReplyError("the provider's first choice has no message")
    usage = getattr(response, "usage", None)
    calls = getattr(message, "tool_calls", None) or []
    return Completion(
        text=getattr(message, "content", None),
        tool_calls=[
            ToolCallRequest(
                id=str(call.id),
                name=str(call.function.name),
                arguments=call.function.arguments if call.function.arguments is not None else "",
            )
            for call in calls
        ],
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cost=price(),
        model=str(getattr(response, "model", None) or default_model),
        raw=_dump(response),
    )


def _dump(response: Any) -> dict[str, Any]:
    dump = getattr(response, "model_dump", None)
    return dict(dump()) if callable(dump) else dict(getattr(response, "__dict__", {}))


def from_wire(body: dict[str, Any], default_model: str, price: Callable[[], float | None]) -> Completion:
    """An OpenAI chat-completion reply body as a :class:`Completion`, read as litellm reads it."""
    choices = body.get("choices")
    if not choices or not isinstance(choices, list):
        raise _no_completion(choices)
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise MalformedReplyError("the provider's first choice has no message")
    usage = body.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    try:
        calls = [
            ToolCallRequest(
                id=str(call.get("id")),
                name=str(call["function"]["name"]),
                arguments=call["function"].get("arguments") or "",
            )
            for call in message.get("tool_calls") or []
        ]
    except (AttributeError, KeyError, TypeError):
        raise MalformedReplyError(
            f"the provider's tool calls are not well formed: {message.get('tool_calls')!r}"
        ) from None
    return Completion(
        text=message.get("content"),
        tool_calls=calls,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cost=price(),
        model=str(body.get("model") or default_model),
        raw=body,
    )
