"""The retail database: ``db.json`` parsed into the plain dict that mirrors upstream's dump.

Upstream validates the file into pydantic models and hashes ``model_dump()``. The file already
holds every field with its dumped type (prices, amounts and balances are written as floats),
except the seven optional order fields, which the dump shows as ``null``. Adding those is all
it takes for :func:`pytest_tau2.environment.db.db_hash` to equal upstream's hash.
"""

from __future__ import annotations

from pathlib import Path
from typing import NotRequired, TypedDict, cast

from pytest_tau2.data.parsing import load_json_file
from pytest_tau2.environment.jsontypes import JSONObject


class Address(TypedDict):
    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


class Name(TypedDict):
    first_name: str
    last_name: str


class PaymentMethod(TypedDict):
    """A credit card, PayPal account or gift card (only a gift card has a ``balance``)."""

    source: str
    id: str
    balance: NotRequired[float]
    brand: NotRequired[str]
    last_four: NotRequired[str]


class User(TypedDict):
    user_id: str
    name: Name
    address: Address
    email: str
    payment_methods: dict[str, PaymentMethod]
    orders: list[str]


class Variant(TypedDict):
    """One item of a product: its options, availability and price."""

    item_id: str
    options: dict[str, str]
    available: bool
    price: float


class Product(TypedDict):
    name: str
    product_id: str
    variants: dict[str, Variant]


class OrderItem(TypedDict):
    name: str
    product_id: str
    item_id: str
    price: float
    options: dict[str, str]


class Fulfillment(TypedDict):
    tracking_id: list[str]
    item_ids: list[str]


class Payment(TypedDict):
    """A payment-history entry of an order."""

    transaction_type: str
    amount: float
    payment_method_id: str


class Order(TypedDict):
    order_id: str
    user_id: str
    address: Address
    items: list[OrderItem]
    fulfillments: list[Fulfillment]
    status: str
    payment_history: list[Payment]
    cancel_reason: str | None
    exchange_items: list[str] | None
    exchange_new_items: list[str] | None
    exchange_payment_method_id: str | None
    exchange_price_difference: float | None
    return_items: list[str] | None
    return_payment_method_id: str | None


class RetailDB(TypedDict):
    """The retail DB, as :func:`read_db` returns it (the types the pinned ``db.json`` holds)."""

    products: dict[str, Product]
    users: dict[str, User]
    orders: dict[str, Order]


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


def read_db(path: str | Path) -> RetailDB:
    """Parse the retail ``db.json`` at ``path`` (no caching: the core caches)."""
    db = cast("dict[str, dict[str, JSONObject]]", load_json_file(path))
    for order in db.get("orders", {}).values():
        complete_order(order)
    return cast(RetailDB, db)  # the file's records, orders completed: upstream's dump


def complete_order(order: JSONObject) -> JSONObject:
    """Add the optional order fields as ``None`` where absent (in place); returns ``order``."""
    for key in OPTIONAL_ORDER_KEYS:
        order.setdefault(key, None)
    return order
