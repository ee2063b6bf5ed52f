"""How numbers read in the report (also registered as template filters)."""

from __future__ import annotations

DASH = "\u2013"
"""What an absent value reads as."""


def percent(value: float | None, digits: int = 1) -> str:
    return DASH if value is None else f"{100.0 * value:.{digits}f}%"


def count(value: float | None) -> str:
    """1234 -> 1.2k, 2_500_000 -> 2.5M."""
    if value is None:
        return DASH
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.1f}{suffix}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def seconds(value: float | None) -> str:
    if value is None:
        return DASH
    if value < 1:
        return f"{value * 1000:.0f} ms"
    if value < 120:
        return f"{value:.1f} s"
    if value < 7200:
        return f"{value / 60:.1f} min"
    return f"{value / 3600:.1f} h"


def usd(value: float | None) -> str:
    if value is None:
        return "unpriced"
    if value == 0:
        return "$0"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def number(value: float | None, digits: int = 3) -> str:
    return DASH if value is None else f"{value:.{digits}f}"
