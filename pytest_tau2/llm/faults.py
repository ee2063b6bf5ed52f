"""How a failed model call is classified: rejected credentials, malformed replies, refusals, a model that stays down.

The LLM client (:mod:`pytest_tau2.llm.client`) retries transport failures; what it does once
the retries are spent depends on these: rejected credentials and a refused connection stop
the run at once, :data:`GIVE_UP_AFTER` calls in a row that failed after every retry stop it
too (docs/faults.md).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_tau2.llm.config import ModelConfig, RetryPolicy

__all__ = [
    "GIVE_UP_AFTER",
    "STREAKS",
    "FailureStreaks",
    "MalformedReplyError",
    "is_credentials_error",
    "is_malformed",
    "is_refused",
    "reset_failure_streaks",
    "retry_delay",
]


def is_credentials_error(exc: BaseException) -> bool:
    """Missing or rejected credentials: retrying, or running the next scenario, cannot help.

    litellm reports a missing key as a 500 ("Missing credentials"), so the status alone is not
    enough.
    """
    status = getattr(exc, "status_code", None)
    text = str(exc).lower()
    return status in (401, 403) or "missing credentials" in text or "api_key client option must be set" in text


# Messages of litellm errors raised for a 200 reply whose body is not a chat completion.
MALFORMED_MARKERS = ("Invalid response object", "Expecting value", "is not a list", "JSONDecodeError")

GIVE_UP_AFTER = 3
"""Calls in a row to one model endpoint that fail after every retry before the run stops.

A model that answers 500 (or times out) on every attempt would otherwise cost each remaining
scenario its full retry budget (~4.5 s with the defaults); three in a row say it is down.
"""


class MalformedReplyError(Exception):
    """A reply the provider sent with HTTP 200 that is not a usable chat completion (retried)."""


def is_malformed(exc: BaseException) -> bool:
    return isinstance(exc, MalformedReplyError) or any(marker in str(exc) for marker in MALFORMED_MARKERS)


def is_refused(exc: BaseException) -> bool:
    """Whether the call failed because nothing listens at the endpoint (connection refused)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ConnectionRefusedError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


class FailureStreaks:
    """Per model endpoint: how many calls in a row failed after every retry (a success resets it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str], int] = {}

    @staticmethod
    def _key(config: ModelConfig) -> tuple[str, str]:
        return config.model, str(config.args.get("api_base") or config.args.get("base_url") or "")

    def failed(self, config: ModelConfig) -> int:
        with self._lock:
            key = self._key(config)
            self._counts[key] = self._counts.get(key, 0) + 1
            return self._counts[key]

    def succeeded(self, config: ModelConfig) -> None:
        with self._lock:
            self._counts.pop(self._key(config), None)

    def clear(self) -> None:
        with self._lock:
            self._counts.clear()


STREAKS = FailureStreaks()


def reset_failure_streaks() -> None:
    """Forget the failure streaks of this process (between independent runs in one process)."""
    STREAKS.clear()


def retry_delay(policy: RetryPolicy, attempt: int, exc: BaseException) -> float:
    """Seconds before retry ``attempt``: the policy's backoff, or the server's Retry-After within the cap."""
    delay = policy.delay(attempt)
    # Honour a server's Retry-After (429/503) as long as it stays within the cap.
    retry_after = _retry_after_seconds(exc)
    if retry_after is not None:
        delay = max(delay, min(retry_after, policy.max_backoff_s))
    return delay


def _retry_after_seconds(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
