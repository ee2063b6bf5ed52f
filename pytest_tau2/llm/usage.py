"""Token and cost accounting per conversation side (agent, user simulator, judge)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_tau2.llm.completion import Completion

__all__ = ["STANDARD_SIDES", "SideUsage", "UsageMeter"]

#: Sides always present in :meth:`UsageMeter.to_dict`, so metrics files share one shape.
STANDARD_SIDES: tuple[str, ...] = ("agent", "user", "judge")


@dataclass
class SideUsage:
    """Totals for one side.

    ``cost`` is ``None`` as soon as one call of this side was unpriced: a
    partial sum would understate the spend while looking exact.
    ``replayed_calls`` of the ``calls`` were served from a cassette: their tokens
    and cost are the recorded ones, not new spend.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0
    replayed_calls: int = 0
    unknown_usage: dict[str, int] = field(default_factory=dict)
    """By usage field (``prompt_tokens``...): how many calls reported no usable count for it (not
    summed: the totals leave those calls out)."""

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def add(
        self,
        calls: int,
        prompt: int,
        completion: int,
        cost: float | None,
        replayed: int = 0,
        unknown: Mapping[str, int] | None = None,
    ) -> None:
        """Add one or more calls' worth of usage (``replayed`` of them from a cassette; ``unknown``:
        calls without a usable count, by field)."""
        self.calls += calls
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.cost = None if self.cost is None or cost is None else self.cost + cost
        self.replayed_calls += replayed
        for name, n in (unknown or {}).items():
            self.unknown_usage[name] = self.unknown_usage.get(name, 0) + n

    def copy(self) -> SideUsage:
        return SideUsage(
            self.calls,
            self.prompt_tokens,
            self.completion_tokens,
            self.cost,
            self.replayed_calls,
            dict(self.unknown_usage),
        )

    def to_dict(self) -> dict[str, int | float | dict[str, int] | None]:
        """``{calls, prompt_tokens, completion_tokens, total_tokens, cost_usd}``.

        ``replayed_calls`` is added when some calls were replayed from a cassette, so a free
        rerun is never mistaken for spend; ``unknown_usage`` when some calls reported a count
        that is not one, so a sum that leaves them out is never mistaken for the whole.
        """
        out: dict[str, int | float | dict[str, int] | None] = {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": self.cost,
        }
        if self.replayed_calls:
            out["replayed_calls"] = self.replayed_calls
        if self.unknown_usage:
            out["unknown_usage"] = dict(sorted(self.unknown_usage.items()))
        return out


class UsageMeter:
    """Accumulates LLM usage per side; safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sides: dict[str, SideUsage] = {}
        self._spent = 0.0  # live calls only: what the run budget counts (a replayed call costs nothing now)

    def record(self, side: str, completion: Completion) -> None:
        """Count one completed call for ``side``."""
        with self._lock:
            if not completion.replayed and completion.cost is not None:
                self._spent += completion.cost
            self._side(side).add(
                1,
                completion.prompt_tokens,
                completion.completion_tokens,
                completion.cost,
                1 if completion.replayed else 0,
                dict.fromkeys(completion.unknown_usage, 1),
            )

    def any_calls(self) -> bool:
        """Whether a call has completed (cheap: the prefetcher's warm-up asks on every loop pass)."""
        return bool(self._sides)

    def side(self, side: str) -> SideUsage:
        """A copy of the totals of ``side`` (zeros if it made no call)."""
        with self._lock:
            return self._sides.get(side, SideUsage()).copy()

    def spent(self) -> float:
        """USD of the calls made live (replays from a cassette left out; unpriced calls count 0:
        ``--tau2-budget`` refuses unpriced models up front)."""
        with self._lock:
            return self._spent

    def sides(self) -> dict[str, SideUsage]:
        """A copy of every side's totals (those that made calls)."""
        return self._snapshot()

    def merge(self, other: UsageMeter) -> UsageMeter:
        """Add ``other``'s totals into this meter; returns ``self``."""
        for name, usage in other._snapshot().items():
            with self._lock:
                self._side(name).add(
                    usage.calls,
                    usage.prompt_tokens,
                    usage.completion_tokens,
                    usage.cost,
                    usage.replayed_calls,
                    usage.unknown_usage,
                )
        return self

    def to_dict(self) -> dict[str, dict[str, int | float | dict[str, int] | None]]:
        """``{side: {calls, prompt_tokens, completion_tokens, total_tokens, cost_usd}}``.

        The standard sides are always present; other sides appear once used.
        """
        snapshot = self._snapshot()
        names = list(STANDARD_SIDES) + [n for n in snapshot if n not in STANDARD_SIDES]
        return {name: snapshot.get(name, SideUsage()).to_dict() for name in names}

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, Any]]) -> UsageMeter:
        """Rebuild a meter from :meth:`to_dict` output (e.g. sent by an xdist worker)."""
        meter = cls()
        for name, values in data.items():
            meter._side(name).add(
                int(values.get("calls", 0)),
                int(values.get("prompt_tokens", 0)),
                int(values.get("completion_tokens", 0)),
                values.get("cost_usd"),
                int(values.get("replayed_calls", 0)),
                {str(k): int(v) for k, v in (values.get("unknown_usage") or {}).items()},
            )
        return meter

    def _side(self, side: str) -> SideUsage:
        return self._sides.setdefault(side, SideUsage())

    def _snapshot(self) -> dict[str, SideUsage]:
        with self._lock:
            return {name: u.copy() for name, u in self._sides.items()}

    def __repr__(self) -> str:
        return f"UsageMeter({self.to_dict()!r})"
