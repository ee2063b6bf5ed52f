"""run/budget.py: admission against spent + in flight + the next one's expected cost, waiting while
others are in flight, settling once; and --tau2-price's parsing (llm/prices.py)."""

from __future__ import annotations

import pytest

from pytest_tau2.llm.prices import UserPrice, parse_prices
from pytest_tau2.run.budget import BUDGET_REASON, RunBudget


def test_a_start_waits_while_others_are_in_flight_and_is_refused_once_nothing_is() -> None:
    budget = RunBudget(1.0, expected=lambda name: 0.4)
    assert budget.admit("a") is True and budget.admit("b") is True  # 0.8 reserved
    assert budget.admit("c") is None  # 0.8 + 0.4 > 1: wait for a run to end
    budget.settle("a", 0.1)  # cheaper than expected: room again
    assert budget.admit("c") is True  # spent 0.1 + b 0.4 + c's expected (mean of finished: 0.1)
    budget.settle("b", 0.5)
    budget.settle("c", 0.35)  # spent 0.95
    assert budget.admit("d") is False and budget.reached
    assert budget.admit("e") is False  # reached: nothing starts again, even a cheap one
    assert budget.refused == 2
    assert budget.reason().startswith(f"{BUDGET_REASON} $1 reached: $0.9500 spent + $0.0000 expected")


def test_settling_counts_a_run_once_and_only_an_admitted_one() -> None:
    budget = RunBudget(1.0)
    budget.settle("never-admitted", 5.0)
    assert budget.spent == 0.0
    assert budget.admit("a") is True  # no prior, nothing finished: expected 0
    budget.settle("a", 0.25)
    budget.settle("a", 0.25)  # a cancelled run's callback after its own: counted once
    assert budget.spent == 0.25


def test_a_run_that_spent_nothing_does_not_lower_the_expected_cost() -> None:
    budget = RunBudget(1.0, expected=lambda name: 0.6)
    assert budget.admit("a") is True
    budget.settle("a", 0.0)  # cancelled before it began, or replayed from a cassette
    assert budget.admit("b") is True and budget.admit("c") is None  # still 0.6 each


def test_prices_parse_comma_separated_and_name_the_bad_entry() -> None:
    prices = parse_prices("openai/my-model=0.15/0.60, openai/judge=1/4")
    assert prices == {"openai/my-model": UserPrice(0.15, 0.6), "openai/judge": UserPrice(1.0, 4.0)}
    assert prices["openai/judge"].cost(1_000_000, 500_000) == 3.0
    with pytest.raises(ValueError, match=r"--tau2-price: 'openai/x=cheap' is not MODEL=IN/OUT"):
        parse_prices("openai/x=cheap")
    with pytest.raises(ValueError, match="negative"):
        parse_prices("openai/x=-1/2")
