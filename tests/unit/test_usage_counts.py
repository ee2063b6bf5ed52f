"""Usage counts that are not token counts: left out of the sums, named, and carried through the meter."""

from __future__ import annotations

import math

import pytest

from pytest_tau2.llm.completion import Completion, token_counts
from pytest_tau2.llm.usage import UsageMeter


@pytest.mark.parametrize(
    ("usage", "counts", "unknown"),
    [
        ({"prompt_tokens": 5, "completion_tokens": 2}, {"prompt_tokens": 5, "completion_tokens": 2}, set()),
        ({}, {"prompt_tokens": 0, "completion_tokens": 0}, set()),
        ({"prompt_tokens": None, "completion_tokens": 3.0}, {"prompt_tokens": 0, "completion_tokens": 3}, set()),
        (
            {"prompt_tokens": -1, "completion_tokens": 2},
            {"prompt_tokens": 0, "completion_tokens": 2},
            {"prompt_tokens"},
        ),
        (
            {"prompt_tokens": "12", "completion_tokens": True},
            {"prompt_tokens": 0, "completion_tokens": 0},
            {"prompt_tokens", "completion_tokens"},
        ),
        (
            {"prompt_tokens": 1.5, "completion_tokens": math.nan},
            {"prompt_tokens": 0, "completion_tokens": 0},
            {"prompt_tokens", "completion_tokens"},
        ),
    ],
)
def test_token_counts(usage: dict[str, object], counts: dict[str, int], unknown: set[str]) -> None:
    got_counts, got_unknown = token_counts(usage)
    assert got_counts == counts
    assert set(got_unknown) == unknown  # named, with the value as sent
    assert all(got_unknown[name] is usage[name] for name in unknown)


def test_the_meter_names_unknown_counts_and_keeps_them_through_a_round_trip() -> None:
    meter = UsageMeter()
    good = Completion("hi", [], 10, 2, None, "m", {})
    odd = Completion("hi", [], 0, 3, None, "m", {}, unknown_usage={"prompt_tokens": -4})
    meter.record("agent", good)
    meter.record("agent", odd)
    meter.record("user", good)
    data = meter.to_dict()
    assert data["agent"]["unknown_usage"] == {"prompt_tokens": 1}
    assert data["agent"]["prompt_tokens"] == 10 and data["agent"]["completion_tokens"] == 5
    assert "unknown_usage" not in data["user"]
    assert UsageMeter.from_dict(data).to_dict() == data
    assert UsageMeter().merge(meter).merge(meter).to_dict()["agent"]["unknown_usage"] == {"prompt_tokens": 2}
