"""The retail database: ``db.json`` parsed into the plain dict that mirrors upstream's dump.

Upstream validates the file into pydantic models and hashes ``model_dump()``. The file already
holds every field with its dumped type (prices, amounts and balances are written as floats),
except the seven optional order fields, which the dump shows as ``null``. Adding those is all
it takes for :func:`pytest_tau2.environment.db.db_hash` to equal upstream's hash.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OPTIONAL_ORDER_KEYS: tuple[str, ...] = (
    "cancel_reason",
    "exchange_items",
    "exchange_new_items",
    "exchange_payment_method_id",
    "exchange_price_difference",
    "return_items",
    "return_payment_method_id",
)
"""Order fields that default to ``None`` upstream and are absent from ``db.json``."""


def read_db(path: str | Path) -> dict[str, Any]:
    """Parse the retail ``db.json`` at ``path`` (no caching: the core caches)."""
    with open(path, encoding="utf-8") as handle:
        db: dict[str, Any] = json.load(handle)
    for order in db.get("orders", {}).values():
        complete_order(order)
    return db


def complete_order(order: dict[str, Any]) -> dict[str, Any]:
    """Add the optional order fields as ``None`` where absent (in place); returns ``order``."""
    for key in OPTIONAL_ORDER_KEYS:
        order.setdefault(key, None)
    return order
