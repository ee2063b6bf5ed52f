"""The run budget (``--tau2-budget USD``): no conversation starts once the money spent plus the
expected cost of the conversations in flight would pass it (docs/campaigns.md).

One :class:`RunBudget` per process that runs conversations, asked by whoever starts one: the
``--tau2-concurrency`` prefetcher (run/prefetch.py) and the item that runs its own conversation
(plugin/item.py). Under xdist each worker keeps ``budget / workers`` (plugin/budgeting.py): a
split needs no round trip to the controller before each start, and no worker can spend another's
share; the price is that a worker whose share is spent stops while another may still have some.

Why the bound holds: a conversation is admitted only when spent + the expected cost of every
admitted one still in flight + its own expected cost stays within the budget, so the budget is
passed only by what the conversations in flight cost beyond their expectation. A start that
would pass it while others are in flight waits for one of them to end (they may cost less than
expected); one that would pass it with nothing in flight reaches the budget: nothing starts again. The expected cost
of a conversation is the mean spend of those finished in this process, before any has finished
the cost estimate's (run/estimate.py), else zero (the first ``--tau2-concurrency`` conversations
then start on the word of none; still bounded by their own cost).

No pytest here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from pytest_tau2.settings import Settings

__all__ = ["BUDGET_REASON", "BudgetReached", "RunBudget", "unpriced_problem"]

BUDGET_REASON = "run budget"
"""How the skip reason of a scenario the budget left unstarted begins (the summary counts them)."""


class BudgetReached(Exception):
    """The run budget leaves no room for this conversation: its item is skipped, naming the budget."""


class RunBudget:
    """Spend and reservations of one process's share of the run budget; thread-safe."""

    def __init__(self, limit_usd: float, expected: Callable[[str], float | None] | None = None) -> None:
        self.limit = limit_usd
        self._prior = expected or (lambda name: None)
        self._lock = threading.Lock()
        self._reserved: dict[str, float] = {}
        self._finished: list[float] = []
        self.spent = 0.0
        """USD spent by the conversations of this process (cassette replays are not spent)."""
        self.reached = False
        """Set at the first refusal: from then on nothing starts (the run winds down)."""
        self.refused = 0
        self._refused_need = 0.0  # the expected cost of the conversation first refused

    def admit(self, name: str) -> bool | None:
        """Reserve ``name``'s expected cost and say yes (True); or not yet (None): with what is in
        flight it would pass the budget, but those may cost less than expected, so ask again when
        one ends; or no (False): even with nothing in flight it would pass it, and from then on
        every later one is refused too."""
        with self._lock:
            if not self.reached:
                need = self._expected(name)
                in_flight = sum(self._reserved.values())
                if self.spent + in_flight + need <= self.limit:
                    self._reserved[name] = need
                    return True
                if self._reserved:
                    return None
                self.reached, self._refused_need = True, need
            self.refused += 1
            return False

    def settle(self, name: str, spent: float) -> None:
        """``name``'s conversation ended (or was cancelled) having spent ``spent`` USD (once: a
        name not admitted, or settled already, changes nothing)."""
        with self._lock:
            if self._reserved.pop(name, None) is None:
                return
            self.spent += spent
            if spent > 0:  # a run cancelled before it began, or replayed, says nothing of the next one's cost
                self._finished.append(spent)

    def reason(self) -> str:
        """The skip reason of a scenario left unstarted."""
        with self._lock:
            flight = sum(self._reserved.values())
            return (
                f"{BUDGET_REASON} ${self.limit:g} reached: ${self.spent:.4f} spent + ${flight:.4f} expected of the "
                f"{len(self._reserved)} conversations in flight + ${self._refused_need:.4f} expected of the next "
                "would pass it; not started (--tau2-budget; --tau2-resume DIR with a new --tau2-budget continues)"
            )

    def _expected(self, name: str) -> float:
        if self._finished:
            return sum(self._finished) / len(self._finished)
        prior = self._prior(name)
        return prior if prior is not None else 0.0


def unpriced_problem(settings: Settings) -> str | None:
    """One line naming the first model that ``--tau2-budget`` or ``--tau2-max-cost`` cannot price
    (no ``--tau2-price`` for it and nothing in litellm's price list), else None."""
    option = "--tau2-budget" if settings.budget is not None else "--tau2-max-cost" if settings.max_cost else None
    if option is None:
        return None
    from pytest_tau2.llm.pricing import is_priced, maybe_priced
    from pytest_tau2.run.participants import uses_llm

    try:
        roles = settings.roles  # each model at its --tau2-price price (every entry given counts)
    except ValueError as exc:
        return str(exc)
    if not uses_llm(settings):
        return None
    for side in ("agent", "user", "judge"):
        role = roles.first(side)
        if role is None or role.price is not None:
            continue
        config = role.config
        if maybe_priced([config.model]):
            from pytest_tau2.llm.transport_litellm import import_litellm

            if is_priced(import_litellm(), config):
                continue
        return (
            f"{option}: model {config.model!r} (--tau2-{side}-model) has no price in litellm's price list; "
            f"give one with --tau2-price {config.model}=IN/OUT (USD per million prompt/completion tokens)"
        )
    return None
