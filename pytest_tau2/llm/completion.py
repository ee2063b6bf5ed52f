"""What one chat completion returned, normalised the same way whichever path made the call.

:func:`from_litellm` reads a litellm response object, :func:`from_wire` the JSON body of an
OpenAI-compatible reply (:mod:`pytest_tau2.llm.openai_wire`); a reply that is not a usable
completion raises :class:`~pytest_tau2.llm.faults.MalformedReplyError` (retried) on both.

A ``usage`` count that is not a token count (negative, a string, a boolean, a fraction) never
costs the reply: the completion is kept, the count is left out of the sums and named in
``unknown_usage`` (the client warns once per model and field; ``token_usage`` records it), and
the call is unpriced, since its price would be made from that count.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_tau2.llm.faults import MalformedReplyError

__all__ = [
    "USAGE_COUNTS",
    "Completion",
    "ToolCallRequest",
    "from_litellm",
    "from_wire",
    "reply_text",
    "token_counts",
]

USAGE_COUNTS = ("prompt_tokens", "completion_tokens")
"""The ``usage`` counts a completion is accounted by."""


@dataclass
class ToolCallRequest:
    """One tool call as the model sent it.

    ``arguments`` is the raw JSON string, unparsed: the caller turns invalid
    JSON into an error result shown to the model. ``id`` is ``""`` when the model sent none
    (the conversation gives the call an id of its own).
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
    unknown_usage: dict[str, Any] = field(default_factory=dict)
    """``usage`` counts the provider sent that are not token counts, by field, as sent; each is 0
    in ``prompt_tokens`` / ``completion_tokens``."""
    note: str | None = None
    """Set when ``text`` is not what the model sent verbatim (:func:`reply_text` says why)."""


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escaped_surrogates(text: str) -> tuple[str, str | None]:
    """``text`` with each lone UTF-16 surrogate written as its escape (``\\ud800``): such a
    character cannot be encoded as UTF-8, so no file, report or later request could carry it."""
    if not _SURROGATE.search(text):
        return text, None
    count = len(_SURROGATE.findall(text))
    escaped = _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
    return escaped, f"{count} lone UTF-16 surrogate(s) in the model's text, kept as escapes (\\udXXX)"


def reply_text(content: object) -> tuple[str | None, str | None]:
    """The text of a reply's ``content`` and a note when it is not the string the model sent.

    A string passes (lone surrogates escaped); a list of OpenAI text parts
    (``{"type": "text", "text": ...}``) is joined; anything else (a number, a list of strings,
    an object) is rendered as JSON text, and the note says so. Both transports read content
    through here, so a hostile reply reads the same whichever path made the call.
    """
    if content is None:
        return None, None
    if isinstance(content, str):
        return _escaped_surrogates(content)
    if (
        isinstance(content, list)
        and content
        and all(
            isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
            for part in content
        )
    ):
        return _escaped_surrogates("".join(part["text"] for part in content))
    try:
        rendered = json.dumps(content, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        rendered = repr(content)
    text, surrogates = _escaped_surrogates(rendered)
    note = f"the model's content was {type(content).__name__}, not a string: rendered as JSON text"
    return text, note if surrogates is None else f"{note}; {surrogates}"


def _no_completion(choices: object) -> MalformedReplyError:
    return MalformedReplyError(
        f"the provider answered without a completion (choices: {choices!r}); "
        "a content filter or a broken proxy can do this"
    )


def from_litellm(response: object, default_model: str, price: Callable[[], float | None]) -> Completion:
    """A litellm ``ModelResponse`` as a :class:`Completion`; ``price`` is asked once it is valid."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise _no_completion(choices)
    message = getattr(choices[0], "message", None)
    if message is None:
        raise MalformedReplyError("the provider's first choice has no message")
    usage = getattr(response, "usage", None)
    calls = getattr(message, "tool_calls", None) or []
    text, note = reply_text(getattr(message, "content", None))
    counts, unknown = token_counts({name: getattr(usage, name, None) for name in USAGE_COUNTS})
    return Completion(
        text=text,
        tool_calls=[
            ToolCallRequest(
                id=_litellm_call_id(call.id),
                name=str(call.function.name),
                arguments=call.function.arguments if call.function.arguments is not None else "",
            )
            for call in calls
        ],
        prompt_tokens=counts["prompt_tokens"],
        completion_tokens=counts["completion_tokens"],
        cost=None if unknown else price(),
        model=str(getattr(response, "model", None) or default_model),
        raw=_dump(response),
        note=note,
        unknown_usage=unknown,
    )


_UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def _litellm_call_id(value: object) -> str:
    """The id the provider sent, as litellm hands it on: litellm makes up a random uuid4 for a call
    that came without one, which would make the conversation differ on every run (and miss its
    cassette); such an id is read as none (the conversation gives the call its own)."""
    text = _call_id(value)
    return "" if _UUID4.match(text) else text


def _call_id(value: object) -> str:
    """A tool call's id as sent; ``""`` for none (``null``, missing, empty), never ``"None"``."""
    return "" if value is None else str(value)


def token_counts(usage: Mapping[str, Any]) -> tuple[dict[str, int], dict[str, Any]]:
    """The :data:`USAGE_COUNTS` of a ``usage`` block, and those that are not token counts.

    A missing or ``null`` count is 0 (the provider did not report it, as litellm reads it); a
    non-negative integer (or an integral float) is taken; anything else (negative, a string, a
    boolean, a fraction, NaN) is 0 in the counts and kept, as sent, in the second mapping.
    """
    counts: dict[str, int] = {}
    unknown: dict[str, Any] = {}
    for name in USAGE_COUNTS:
        value = usage.get(name)
        count = _count(value)
        if count is None:
            unknown[name] = value
        counts[name] = count or 0
    return counts, unknown


def _count(value: object) -> int | None:
    if value is None:
        return 0
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and value >= 0:
        return int(value)
    return None


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
    if usage is not None and not isinstance(usage, dict):
        counts, unknown = {name: 0 for name in USAGE_COUNTS}, {"usage": usage}
    else:
        counts, unknown = token_counts(usage or {})
    try:
        calls = [
            ToolCallRequest(
                id=_call_id(call.get("id")),
                name=str(call["function"]["name"]),
                arguments=call["function"].get("arguments") or "",
            )
            for call in message.get("tool_calls") or []
        ]
    except (AttributeError, KeyError, TypeError):
        raise MalformedReplyError(
            f"the provider's tool calls are not well formed: {message.get('tool_calls')!r}"
        ) from None
    text, note = reply_text(message.get("content"))
    return Completion(
        text=text,
        tool_calls=calls,
        prompt_tokens=counts["prompt_tokens"],
        completion_tokens=counts["completion_tokens"],
        cost=None if unknown else price(),
        model=str(body.get("model") or default_model),
        raw=body,
        note=note,
        unknown_usage=unknown,
    )
