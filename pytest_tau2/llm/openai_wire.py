"""The OpenAI chat-completions wire format, spoken directly: a lean path for OpenAI-compatible models.

litellm spends ~5 ms of CPU on every completion (request building in the OpenAI SDK, its
logging object, response objects, pricing) and ~160 MB and seconds to import. For a model that
litellm itself would send to an OpenAI-compatible endpoint as plain JSON, this module sends the
same JSON (encoded with orjson) with aiohttp and reads the reply as JSON: a fraction of the CPU, and no litellm import
unless the reply must be priced (:mod:`pytest_tau2.llm.pricing` prices with litellm).

:func:`route` decides, per call, whether a request is one whose wire form is known to equal
litellm's; anything else (another provider, a reasoning-model family whose parameters litellm
rewrites, an argument litellm would transform or drop, an unusual message shape, a user who
configured litellm globally) returns ``None`` and goes through litellm as before.
tests/unit/test_openai_wire_parity.py checks request bodies, headers, replies, usage and cost
against the litellm path over the calls pytest-tau2 makes (docs/speed.md).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import sys
import urllib.request
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson

from pytest_tau2.llm import compat_litellm
from pytest_tau2.llm.faults import MalformedReplyError
from pytest_tau2.llm.pricing import price_file_entry

__all__ = ["WireError", "WireRoute", "aclose", "post", "request_body", "route"]

BODY_ARGS = frozenset(
    {
        "temperature",
        "top_p",
        "seed",
        "max_tokens",
        "stop",
        "presence_penalty",
        "frequency_penalty",
        "parallel_tool_calls",
    }
)
"""Model arguments litellm passes to an OpenAI-compatible endpoint unchanged (checked by the parity test)."""

CALL_ARGS = frozenset({"api_base", "base_url", "api_key", "timeout", "extra_headers"})
"""Arguments that shape the HTTP call, not the body."""

# Model families litellm sends through their own request transformations (reasoning models
# rename max_tokens and drop temperature; audio, search and realtime models take other bodies).
_REWRITTEN_FAMILIES = re.compile(
    r"^(o\d|gpt-5|codex|computer-use|chatgpt)|audio|search|realtime|transcribe|tts|image|deep-research",
    re.IGNORECASE,
)
_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})
_ROLES = frozenset({"system", "user", "assistant", "tool"})
# Global litellm settings that change where or how litellm calls (set by a conftest, say).
_LITELLM_GLOBALS = ("api_base", "api_key", "openai_key", "organization", "headers", "model_alias_map")
# The OpenAI SDK adds organisation/project headers from these; the wire path does not.
_SDK_ENVIRONMENT = ("OPENAI_ORG_ID", "OPENAI_ORGANIZATION", "OPENAI_PROJECT_ID")
DEFAULT_BASE = "https://api.openai.com/v1"


@dataclass(frozen=True)
class WireRoute:
    """Where and how one call goes: URL, headers, and the model name the endpoint is given."""

    url: str
    headers: tuple[tuple[str, str], ...]
    wire_model: str
    body_args: tuple[tuple[str, Any], ...]

    def __repr__(self) -> str:  # headers hold the API key
        return f"WireRoute(url={self.url!r}, wire_model={self.wire_model!r})"


def route(model: str, args: Mapping[str, object], messages: Sequence[Mapping[str, object]]) -> WireRoute | None:
    """The wire route of a call, or None when it must go through litellm."""
    wire_model = _wire_model(model)
    if wire_model is None or _REWRITTEN_FAMILIES.search(wire_model.rsplit("/", 1)[-1]):
        return None
    if any(name not in BODY_ARGS and name not in CALL_ARGS for name in args):
        return None
    if _litellm_configured() or any(os.environ.get(name) for name in _SDK_ENVIRONMENT):
        return None
    if not all(_plain_message(message) for message in messages):
        return None
    extra = args.get("extra_headers") or {}
    if not isinstance(extra, Mapping):
        return None
    base = args.get("api_base") or args.get("base_url")
    base = base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or DEFAULT_BASE
    key = args.get("api_key") or os.environ.get("OPENAI_API_KEY")
    if not isinstance(base, str) or (key is not None and not isinstance(key, str)):
        return None
    if "@" in urlsplit(base).netloc:
        return None  # user:password in the URL: how it mixes with the key is the HTTP client's business
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    headers.update({str(name): str(value) for name, value in extra.items()})
    body_args = tuple((name, args[name]) for name in args if name in BODY_ARGS)
    return WireRoute(base.rstrip("/") + "/chat/completions", tuple(headers.items()), wire_model, body_args)


def _wire_model(model: str) -> str | None:
    """The name sent in the body: ``openai/<name>`` gives ``<name>``; a bare name of an OpenAI chat model."""
    if model.startswith("openai/"):
        return model[len("openai/") :] or None
    if "/" in model:
        return None
    entry = price_file_entry(model)
    if entry is not None and entry.get("litellm_provider") == "openai" and entry.get("mode") == "chat":
        return model
    return None


def _litellm_configured() -> bool:
    litellm = sys.modules.get("litellm")
    return litellm is not None and (
        any(getattr(litellm, name, None) for name in _LITELLM_GLOBALS) or compat_litellm.callbacks_registered(litellm)
    )


def _plain_message(message: object) -> bool:
    if not isinstance(message, dict) or message.get("role") not in _ROLES or not _MESSAGE_KEYS.issuperset(message):
        return False
    content = message.get("content")
    return content is None or isinstance(content, str)


def request_body(
    wire: WireRoute,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    response_format: dict[str, Any] | None,
) -> dict[str, Any]:
    """The JSON body litellm would send: message keys holding None are left out, as litellm does."""
    body: dict[str, Any] = {
        "model": wire.wire_model,
        "messages": [{key: value for key, value in message.items() if value is not None} for message in messages],
    }
    body.update(wire.body_args)
    if response_format is not None:
        body["response_format"] = response_format
    if tools:
        body["tools"] = tools
        body["tool_choice"] = "auto"
    return body


# ---------------------------------------------------------------------------
# Errors, named as litellm names them (messages and tests key on the names)
# ---------------------------------------------------------------------------


class WireError(Exception):
    """An HTTP error reply; ``status_code`` and ``response.headers`` as on litellm's errors."""

    def __init__(self, message: str, status_code: int | None = None, headers: Mapping[str, str] | None = None):
        super().__init__(message)
        self.status_code = status_code
        self.response = _Headers(dict(headers or {}))


@dataclass
class _Headers:
    headers: dict[str, str]


class BadRequestError(WireError): ...


class AuthenticationError(WireError): ...


class PermissionDeniedError(WireError): ...


class NotFoundError(WireError): ...


class UnprocessableEntityError(WireError): ...


class RateLimitError(WireError): ...


class InternalServerError(WireError): ...


class BadGatewayError(WireError): ...


class ServiceUnavailableError(WireError): ...


class APIConnectionError(WireError, ConnectionError):
    """Nothing answered (refused, reset, DNS); the original error is the ``__cause__``."""


class Timeout(WireError, TimeoutError):
    """The call outlived its timeout."""


_BY_STATUS: dict[int, type[WireError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    408: Timeout,
    422: UnprocessableEntityError,
    429: RateLimitError,
    502: BadGatewayError,
    503: ServiceUnavailableError,
}


def _status_error(status: int, text: str, headers: Mapping[str, str]) -> WireError:
    kind = _BY_STATUS.get(status, InternalServerError if status >= 500 else WireError)
    detail = text
    try:
        parsed = json.loads(text)
        message = parsed.get("error", {}).get("message") if isinstance(parsed, dict) else None
        if isinstance(parsed.get("error"), str):
            message = parsed["error"]
        if isinstance(message, str):
            detail = message
    except (ValueError, AttributeError):
        pass
    return kind(f"OpenAIException - {detail.strip()[:2000]} (HTTP {status})", status, headers)


# ---------------------------------------------------------------------------
# HTTP
# ---------------------------------------------------------------------------

_sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()


def _session() -> Any:
    import aiohttp

    loop = asyncio.get_running_loop()
    session = _sessions.get(loop)
    if session is None or session.closed:
        # No connection cap: --tau2-concurrency is the cap. Proxies: see _proxy_for.
        connector = aiohttp.TCPConnector(limit=0, limit_per_host=0)
        session = aiohttp.ClientSession(connector=connector)
        _sessions[loop] = session
    return session


def _encode(body: Mapping[str, object]) -> bytes:
    """The request body as JSON bytes: orjson (~8x the stdlib encoder on a 40 KB conversation)."""
    try:
        return orjson.dumps(body)
    except TypeError:  # e.g. an integer beyond 64 bits, or a non-string key: the stdlib takes it
        return json.dumps(body).encode("utf-8")


@functools.lru_cache(maxsize=64)
def _proxy_for(url: str) -> str | None:
    """The proxy for ``url`` from HTTP(S)_PROXY and NO_PROXY, as the OpenAI SDK honours them.

    Looked up once per endpoint: aiohttp's ``trust_env`` reads the environment and ~/.netrc on
    every request, ~6% of a sweep's CPU.
    """
    parts = urlsplit(url)
    if parts.hostname is None or urllib.request.proxy_bypass(parts.hostname):
        return None
    proxy = urllib.request.getproxies().get(parts.scheme)
    return proxy if proxy and proxy.startswith(("http://", "https://")) else None


def preload() -> None:
    """Import the HTTP client now (~0.2 s), not on the event loop during the first call."""
    import aiohttp  # noqa: F401


async def aclose() -> None:
    """Close this event loop's HTTP session (its pooled connections)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    session = _sessions.pop(loop, None)
    if session is not None and not session.closed:
        await session.close()


async def post(wire: WireRoute, body: dict[str, Any], timeout_s: float | None) -> dict[str, Any]:
    """POST one chat completion; the reply body as a dict, or a :class:`WireError` (status, timeout, connection)."""
    import aiohttp

    headers = dict(wire.headers)
    if "Authorization" not in headers:
        # What the OpenAI SDK says when no key is configured (a credentials error: never retried).
        raise AuthenticationError(
            "OpenAIException - The api_key client option must be set either by passing api_key to the client "
            "or by setting the OPENAI_API_KEY environment variable"
        )
    timeout = aiohttp.ClientTimeout(total=timeout_s) if isinstance(timeout_s, (int, float)) else None
    try:
        proxy = _proxy_for(wire.url)
        post = _session().post(wire.url, data=_encode(body), headers=headers, timeout=timeout, proxy=proxy)
        async with post as reply:
            text = await reply.text()
            status = reply.status
            reply_headers = {name.lower(): value for name, value in reply.headers.items()}
    except TimeoutError as exc:
        raise Timeout(f"OpenAIException - Request timed out after {timeout_s} s", 408) from exc
    except aiohttp.ClientError as exc:
        raise APIConnectionError(f"OpenAIException - Connection error: {exc}") from exc
    if status >= 400:
        raise _status_error(status, text, reply_headers)
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise MalformedReplyError(f"the provider's reply is not JSON ({exc}): {text[:200]!r}") from None
    if not isinstance(parsed, dict):
        raise MalformedReplyError(f"the provider's reply is not a JSON object: {text[:200]!r}")
    return parsed
