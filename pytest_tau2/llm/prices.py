"""Prices the user gives (``--tau2-price MODEL=IN/OUT``, USD per million tokens): for a model
litellm's price list does not know (a local server, a fine-tune, a new release), or to price a
run at a negotiated rate. A model given a price is priced by it on every path (wire, litellm,
cassette replay), in place of litellm's figure, so the budget, ``--tau2-max-cost`` and the
summary all read the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["UserPrice", "parse_prices"]


@dataclass(frozen=True)
class UserPrice:
    """USD per million prompt (``input``) and completion (``output``) tokens."""

    input: float
    output: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


def parse_prices(text: str | None) -> dict[str, UserPrice]:
    """``MODEL=IN/OUT[,MODEL=IN/OUT...]`` by model; a ValueError naming the entry that is wrong."""
    prices: dict[str, UserPrice] = {}
    for entry in (text or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        model, sep, rates = entry.rpartition("=")
        numbers = rates.split("/")
        try:
            if not sep or not model.strip() or len(numbers) != 2:
                raise ValueError(entry)
            price = UserPrice(float(numbers[0]), float(numbers[1]))
        except ValueError:
            raise ValueError(
                f"--tau2-price: {entry!r} is not MODEL=IN/OUT (USD per million prompt and completion tokens, "
                "e.g. openai/my-model=0.15/0.60)"
            ) from None
        if min(price.input, price.output) < 0 or price.input != price.input or price.output != price.output:
            raise ValueError(f"--tau2-price: {entry!r} has a negative or not-a-number price")
        prices[model.strip()] = price
    return prices
