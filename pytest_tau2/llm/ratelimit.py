"""Provider rate limits: per model endpoint, a cap on calls in flight that adapts to refusals, and
optional request and token buckets (docs/campaigns.md, "Provider rate limits").

An **endpoint** is where a call goes: the provider and its ``api_base`` (or the provider's
default address). Every call to it, agent, user simulator and judge alike, across all the
conversations of ``--tau2-concurrency`` in this process, shares one :class:`Endpoint`:

- a **cap on calls in flight** (``--tau2-max-connections``), lowered while the provider refuses
  (HTTP 429, or 503 with ``Retry-After``) and raised again as calls get through: additive
  increase, multiplicative decrease (AIMD, as TCP does). One decrease per burst of refusals: a
  refusal of a call sent before the last decrease says nothing new;
- a **pace**: at a burst of refusals, the rate the provider admitted over the last second becomes
  the spacing of the next sends (requests arriving together are what a provider's bucket
  refuses), and it rises again with every call that gets through, until the next refusal;
- each refused call waits what the refusal asked (``retry-after-ms``, else ``Retry-After`` in
  seconds or as a date) with up to 10% jitter, else a short back-off with jitter. The endpoint
  as a whole is not paused: many providers round ``Retry-After`` up to whole seconds, and an
  endpoint idle for a whole second at each refusal ran the rate-limited sweep at 2.5x its ideal
  instead of 1.1x (bench/results/rate_limits.md);
- **buckets** of requests per minute and tokens per minute (``--tau2-rpm``, ``--tau2-tpm``).

Calls waiting for a slot go oldest conversation first (:func:`_began`). The numbers are in
bench/results/rate_limits.md.

The waits are computed under a thread lock and slept on the caller's event loop, so one
endpoint serves the prefetcher's loop and the loops of items run one at a time alike. The buckets
are hand-written rather than ``aiolimiter``'s: its limiter belongs to one event loop and charges
a fixed amount up front, while a token limit is only known after the reply (the prompt is
estimated, the real count charged afterwards).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_tau2.errors import InfrastructureError
from pytest_tau2.llm.pricing import price_file_entry
from pytest_tau2.llm.secrets import mask_url

if TYPE_CHECKING:
    from pytest_tau2.llm.config import ModelConfig, RetryPolicy

__all__ = ["DECREASE", "Endpoint", "endpoint", "endpoint_name", "reset_endpoints", "stop_all"]

DECREASE = 0.7
"""The cap is multiplied by this at a burst of refusals (TCP CUBIC's factor: a halving leaves a
provider whose limit sits just under the cap at ~75% of its rate on average)."""
INCREASE = 0.5
"""The cap rises by this for each call that gets through while the cap binds (about half again
per round of calls, so a cap cut by a burst of refusals is back within a few rounds)."""
ADMIT_WINDOW_S = 1.0
"""The provider's rate is measured over the calls it admitted in this last stretch of time."""
PROBE = 1.0
"""The pace rises by this many requests a second for each call that gets through (it grows by
about e each second: a pace set low at the start reaches the provider's rate in a few seconds)."""
DEFAULT_OPENAI_BASE = "https://api.openai.com/v1"


def endpoint_name(config: ModelConfig) -> str:
    """Where a call to ``config`` goes: ``<provider> <api_base>``, the default address when none
    is given (credentials in the URL masked)."""
    model = config.model
    provider, slash, _ = model.partition("/")
    if not slash:
        entry = price_file_entry(model)
        provider = str((entry or {}).get("litellm_provider") or "default")
    base = config.args.get("api_base") or config.args.get("base_url")
    if not base and provider == "openai":
        import os

        base = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or DEFAULT_OPENAI_BASE
    return f"{provider} {mask_url(str(base).rstrip('/'))}" if base else provider


@dataclass
class _Bucket:
    """A token bucket of ``rate`` per second holding at most ``capacity``; a reservation may run
    it into debt, which later reservations wait out (so a charge known only afterwards counts)."""

    rate: float
    capacity: float
    level: float
    stamp: float

    def _refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def reserve(self, amount: float, now: float) -> float:
        """Take ``amount``; the seconds to wait before using it."""
        self._refill(now)
        self.level -= amount
        return 0.0 if self.level >= 0 else -self.level / self.rate

    def charge(self, amount: float, now: float) -> None:
        """Take (or give back, when negative) ``amount`` without waiting."""
        self._refill(now)
        self.level = min(self.capacity, self.level - amount)


class Endpoint:
    """The shared limits of one model endpoint in this process (thread-safe, any event loop)."""

    def __init__(self, name: str, policy: RetryPolicy) -> None:
        self.name = name
        self._lock = threading.Lock()
        self.ceiling = float(policy.max_connections) if policy.max_connections else math.inf
        self.limit = self.ceiling
        """The cap on calls in flight now: the ceiling until the provider refuses."""
        self.in_flight = 0
        self._waiters: list[tuple[float, int, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        """A heap: the calls of the conversation that began first go first (below)."""
        self._tickets = itertools.count()
        self._last_decrease = -math.inf
        self.refused_since: float | None = None
        """When the provider began refusing every call (None: the last call got through)."""
        self.stopped: str | None = None
        """Why calls to this endpoint are no longer made (the provider refused for too long)."""
        self.refusals = 0
        self.decreases = 0
        self.pace: _Bucket | None = None
        """Sends spaced at the rate the provider admitted when it last refused (None: not yet)."""
        self._admitted: deque[float] = deque()
        now = time.monotonic()
        self._requests = _Bucket(policy.rpm / 60, max(1.0, policy.rpm / 60), 1.0, now) if policy.rpm else None
        # A minute's tokens as the capacity: a call larger than a second's worth still goes.
        self._tokens = _Bucket(policy.tpm / 60, policy.tpm, policy.tpm / 60, now) if policy.tpm else None

    # -- a slot --------------------------------------------------------------------------------

    @property
    def counts_tokens(self) -> bool:
        """Whether calls charge a tokens-per-minute bucket (``--tau2-tpm``)."""
        return self._tokens is not None

    async def acquire(self, tokens: float) -> float:
        """Wait for a slot, the pace and the buckets; the monotonic time the call starts."""
        self._check()
        await self._slot()
        try:
            with self._lock:
                wait = self._reserve(tokens, time.monotonic())
            if wait > 0:
                await asyncio.sleep(wait)
            self._check()
        except BaseException:
            self.release()
            raise
        return time.monotonic()

    def _reserve(self, tokens: float, now: float) -> float:
        wait = 0.0
        if self.pace is not None:
            wait = self.pace.reserve(1, now)
        if self._requests is not None:
            wait = max(wait, self._requests.reserve(1, now))
        if self._tokens is not None:
            wait = max(wait, self._tokens.reserve(tokens, now))
        return wait

    async def _slot(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if not self._waiters and self._room():
                self.in_flight += 1
                return
            future: asyncio.Future[None] = loop.create_future()
            waiter = (_began(), next(self._tickets), loop, future)
            heapq.heappush(self._waiters, waiter)
        try:
            await future
        except BaseException:
            with self._lock:
                queued = waiter in self._waiters
                if queued:
                    self._waiters.remove(waiter)
                    heapq.heapify(self._waiters)
            if not queued and future.done() and not future.cancelled():
                self.release()  # granted, then cancelled before it ran: hand the slot on
            raise

    def release(self) -> None:
        """A call ended (any way): its slot goes to the next waiter the cap allows."""
        with self._lock:
            self.in_flight -= 1
            self._grant()

    def _room(self) -> bool:
        # under the lock
        return math.isinf(self.limit) or self.in_flight < max(1, int(self.limit))

    def _grant(self) -> None:
        # under the lock
        while self._waiters and (self._room() or self.stopped):
            _, _, loop, future = heapq.heappop(self._waiters)
            self.in_flight += 1
            try:
                loop.call_soon_threadsafe(self._deliver, future)
            except RuntimeError:  # that loop is closed: its call is gone
                self.in_flight -= 1

    def _deliver(self, future: asyncio.Future[None]) -> None:
        if future.done():  # cancelled while the grant travelled: the slot is not taken
            self.release()
        else:
            future.set_result(None)

    def _check(self) -> None:
        if self.stopped is not None:
            raise InfrastructureError(self.stopped, fatal=True)

    # -- what the call ran into ------------------------------------------------------------------

    def succeeded(self, started: float, tokens_estimated: float, tokens_used: float) -> None:
        with self._lock:
            self.refused_since = None
            now = time.monotonic()
            self._admitted.append(now)
            while self._admitted and self._admitted[0] < now - ADMIT_WINDOW_S:
                self._admitted.popleft()
            if self.pace is not None:  # probe upwards: ~1 request a second more each second
                self.pace.rate += PROBE
            if self._tokens is not None:
                self._tokens.charge(tokens_used - tokens_estimated, now)
            # Additive increase, ~1 per round of calls at the cap, and only while the cap binds
            # (a cap that nothing presses against would grow without meaning).
            if self.limit < self.ceiling and (self._waiters or self.in_flight >= int(self.limit)):
                self.limit = min(self.ceiling, self.limit + INCREASE)
                self._grant()

    def refused(self, started: float, retry_after: float | None = None) -> float:
        """The provider refused a call sent at ``started``: lower the cap and set the pace (once per
        burst); the seconds since the provider began refusing every call.

        Before any call got through there is no admitted rate to pace at; a ``retry_after`` under
        a second then sets it: a provider's bucket, empty, says when its next request is free,
        one request's time at its rate (OpenAI's ``retry-after-ms``)."""
        with self._lock:
            now = time.monotonic()
            self.refusals += 1
            if self.refused_since is None:
                self.refused_since = now
            if started >= self._last_decrease:
                base = self.limit if math.isfinite(self.limit) else float(self.in_flight + 1)
                self.limit = max(1.0, base * DECREASE)
                self._last_decrease = now
                self.decreases += 1
                while self._admitted and self._admitted[0] < now - ADMIT_WINDOW_S:
                    self._admitted.popleft()
                if self._admitted:
                    span = max(now - self._admitted[0], 1e-3)
                    rate = max(len(self._admitted) / max(span, ADMIT_WINDOW_S / 4), 0.1)
                    self.pace = _Bucket(rate, 1.0, 0.0, now)
                elif self.pace is None and retry_after is not None and 0 < retry_after < 1:
                    self.pace = _Bucket(1.0 / retry_after, 1.0, 0.0, now)
            return now - self.refused_since

    def stop(self, message: str) -> None:
        """No more calls to this endpoint: every waiting and later call raises ``message``."""
        with self._lock:
            if self.stopped is None:
                self.stopped = message
            self._grant()


_BEGAN: weakref.WeakKeyDictionary[asyncio.Task[object], float] = weakref.WeakKeyDictionary()
_BEGAN_LOCK = threading.Lock()


def _began() -> float:
    """When the calling conversation (its asyncio task) made its first model call.

    Waiting calls go oldest conversation first, not first come first served: a sweep against a
    rate limit is bound by the rate, and then by its longest conversations, which the prefetcher
    starts first (run/prefetch.py); served in turn with 63 others, a 19-call conversation would
    take 19 rounds of the whole queue and end the sweep alone.
    """
    task = asyncio.current_task()
    now = time.monotonic()
    if task is None:
        return now
    with _BEGAN_LOCK:
        return _BEGAN.setdefault(task, now)


_ENDPOINTS: dict[str, Endpoint] = {}
_ENDPOINTS_LOCK = threading.Lock()
_STOPPED_ALL: str | None = None


def endpoint(config: ModelConfig, policy: RetryPolicy) -> Endpoint:
    """The shared limits of ``config``'s endpoint (made on its first call, with that call's policy)."""
    name = endpoint_name(config)
    with _ENDPOINTS_LOCK:
        found = _ENDPOINTS.get(name)
        if found is None:
            found = _ENDPOINTS[name] = Endpoint(name, policy)
            if _STOPPED_ALL is not None:
                found.stop(_STOPPED_ALL)
        return found


def stop_all(message: str) -> None:
    """No more model calls from this process (any thread): every endpoint, and any made later,
    raises ``message`` at its next call (an xdist worker whose controller is gone)."""
    global _STOPPED_ALL
    with _ENDPOINTS_LOCK:
        _STOPPED_ALL = message
        endpoints = list(_ENDPOINTS.values())
    for found in endpoints:
        found.stop(message)


def reset_endpoints() -> None:
    """Forget every endpoint's state (between independent runs in one process)."""
    global _STOPPED_ALL
    with _ENDPOINTS_LOCK:
        _ENDPOINTS.clear()
        _STOPPED_ALL = None
