"""How a failed model call is classified: rejected credentials, malformed replies, refusals, a model that stays down.

The LLM client (:mod:`pytest_tau2.llm.client`) retries transport failures; what it does once
the retries are spent depends on these: rejected credentials and a refused connection stop
the run at once, :data:`GIVE_UP_AFTER` calls in a row that failed after every retry stop it
too (docs/faults.md).
"""

from __future__ import annotations

import datetime
import email.utils
import math
import random
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_tau2.llm.config import ModelConfig, RetryPolicy

__all__ = [
    "GIVE_UP_AFTER",
    "RETRY_AFTER_CAP_S",
    "STREAKS",
    "FailureStreaks",
    "MalformedReplyError",
    "is_credentials_error",
    "is_malformed",
    "is_rate_limited",
    "is_refused",
    "reset_failure_streaks",
    "retry_after_seconds",
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
    from pytest_tau2.llm.ratelimit import reset_endpoints

    reset_endpoints()


def retry_delay(policy: RetryPolicy, attempt: int, exc: BaseException) -> float:
    """Seconds before retry ``attempt``: the policy's backoff with jitter, or the server's
    Retry-After within the cap.

    Jitter ("equal jitter": between half and all of the backoff) keeps the calls that failed
    together from coming back together.
    """
    delay = policy.delay(attempt) * random.uniform(0.5, 1.0)
    retry_after = retry_after_seconds(exc)
    if retry_after is not None:
        delay = max(delay, min(retry_after, policy.max_backoff_s))
    return delay


def is_rate_limited(exc: BaseException) -> bool:
    """The provider refused the call for now: HTTP 429, or 503 with a ``Retry-After``.

    Such a refusal is the provider's limit, not a fault: it is waited out (llm/ratelimit.py)
    without spending the call's retries, for up to ``--tau2-rate-limit-timeout``.
    """
    status = getattr(exc, "status_code", None)
    return status == 429 or (status == 503 and retry_after_seconds(exc) is not None)


RETRY_AFTER_CAP_S = 300.0
"""The longest a provider's ``Retry-After`` is taken at its word (five minutes): a larger value,
``inf``, or a date hours ahead (some gateways send a quota's reset time) counts as this. The wait
is bounded again by what is left of ``--tau2-rate-limit-timeout`` (llm/client.py)."""


def retry_after_seconds(exc: BaseException) -> float | None:
    """How long the provider asked to wait, from the error's reply headers (both transports keep
    them on ``exc.response.headers``): ``retry-after-ms`` (Azure, OpenAI), else ``Retry-After`` in
    seconds or as an HTTP date; None when neither is there or readable (``nan`` included).

    Always within ``[0, RETRY_AFTER_CAP_S]``: a negative value or a date past is 0, ``inf``, a
    huge number or a far date is the cap."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        value = headers.get("retry-after")
    except (AttributeError, TypeError, ValueError):
        return None
    if millis is not None:
        seconds = _number(millis)
        if seconds is not None:
            return _capped(seconds / 1000.0)
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return _capped(seconds)
    try:
        when = email.utils.parsedate_to_datetime(str(value))
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.UTC)
        return _capped((when - datetime.datetime.now(datetime.UTC)).total_seconds())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _number(value: object) -> float | None:
    """``value`` as a number of seconds; None when it is not one, or is ``nan``."""
    try:
        number = float(str(value).strip())
    except (TypeError, ValueError, OverflowError):
        return None
    return None if math.isnan(number) else number


def _capped(seconds: float) -> float:
    return min(max(0.0, seconds), RETRY_AFTER_CAP_S)
