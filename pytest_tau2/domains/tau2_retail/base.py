"""What every retail tool shares: the namespace, the argument schemas, the base class with
upstream's lookups.

Behaviour follows upstream tau2 exactly: the order of the checks, the refusal texts, which
numbers are rounded and which are not, and two quirks the gold data depends on
(``modify_pending_order_items`` gives every modified item the price and options of the *last*
new variant, and records a 0 refund when the price does not change).

Our one addition: ids are looked up tolerantly (casing, spaces, hyphens, underscores, ``#``;
emails ignore case and spaces) through :mod:`pytest_tau2.environment.ids`, while everything
written back to the DB keeps the stored spelling, so the DB hash never depends on how an id
was spelled. Zip codes compare exactly, names case-insensitively, as upstream.

Arguments are taken as upstream takes them (:class:`~pytest_tau2.domains.tau2_common.tools.Tau2Tool`):
the only record retail builds from arguments is the address (:class:`UserAddress`, strings
only); every other argument is compared or stored as given, so a non-string id finds nothing
and an empty string or object where a list of item ids belongs counts as an empty list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from pytest_tau2.domains.tau2_common.tools import Tau2Tool
from pytest_tau2.domains.tau2_retail.db import Order, PaymentMethod, Product, RetailDB, User, Variant
from pytest_tau2.environment.db import peek
from pytest_tau2.environment.ids import find_key, same_id
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.errors import ToolError

_R = TypeVar("_R")

NAMESPACE = "tau2_retail"


# --------------------------------------------------------------------------- schemas


def string(description: str) -> JSONObject:
    return {"type": "string", "description": description}


def string_list(description: str) -> JSONObject:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def arguments(**properties: JSONValue) -> JSONObject:
    """An object schema where every listed property is required and nothing else is allowed."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


ORDER_ID = string("Order id, a '#W' followed by 7 digits, e.g. '#W0000000'. Keep the leading '#'.")
USER_ID = string("User id, e.g. 'sara_doe_496'.")
PAYMENT_METHOD_ID = string(
    "Id of one of the order owner's payment methods, e.g. 'credit_card_0000000' or "
    "'gift_card_0000000' (listed in the user's details)."
)
ITEM_IDS = string_list(
    "Item ids (10 digits each) of items in the order. An id may appear several times, up to "
    "the number of times the order contains it."
)
NEW_ITEM_IDS = string_list(
    "Replacement item ids, one per entry of item_ids and in the same order; each must be an "
    "available variant of the same product as the item it replaces."
)
ADDRESS: dict[str, JSONValue] = {
    "address1": string("First address line, e.g. '123 Main St'."),
    "address2": string("Second address line, e.g. 'Apt 1'; an empty string when there is none."),
    "city": string("City, e.g. 'San Francisco'."),
    "state": string("State, e.g. 'CA'."),
    "country": string("Country, e.g. 'USA'."),
    "zip": string("Zip code, e.g. '12345'."),
}


class UserAddress(BaseModel):
    """The address record upstream builds from the address arguments (every field a string)."""

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


def stored_key(mapping: Mapping[str, object], wanted: JSONValue) -> str | None:
    """The key of ``mapping`` that ``wanted`` names (spelling forgiven); a non-string names none."""
    return find_key(mapping, wanted) if isinstance(wanted, str) else None


def same_item_id(a: JSONValue, b: JSONValue) -> bool:
    """Whether two item ids name the same item: equal values, or strings spelling the same id."""
    return bool(a == b) or (isinstance(a, str) and isinstance(b, str) and same_id(a, b))


# --------------------------------------------------------------------------- base


class RetailTool(Tau2Tool):
    """Base of the retail tools: the shared lookups, each raising upstream's message."""

    abstract = True
    namespace = NAMESPACE

    if TYPE_CHECKING:  # the state's DB is read_db's (a fresh_db copy of it); no runtime cost

        @property
        def db(self) -> RetailDB: ...

    def _find(self, records: dict[str, _R], wanted: JSONValue, missing: str, *, writable: bool = True) -> _R:
        """The record of ``records`` (a DB table) that ``wanted`` names, else refused with ``missing``.

        ``writable=False`` is for a tool that only reads the record: it gets the stored record
        itself, maybe shared with the pristine DB (:func:`~pytest_tau2.environment.db.peek`),
        so it must not change it.
        """
        key = stored_key(records, wanted)
        if key is None:
            raise ToolError(missing)
        return records[key] if writable else peek(records, key)

    def _order(self, order_id: JSONValue, *, writable: bool = True) -> Order:
        return self._find(self.db["orders"], order_id, "Order not found", writable=writable)

    def _user(self, user_id: JSONValue, *, writable: bool = True) -> User:
        return self._find(self.db["users"], user_id, "User not found", writable=writable)

    def _product(self, product_id: JSONValue, *, writable: bool = True) -> Product:
        return self._find(self.db["products"], product_id, "Product not found", writable=writable)

    def _variant(self, product_id: str, item_id: JSONValue) -> tuple[str, Variant]:
        """(stored item id, variant) of ``item_id`` among the variants of ``product_id``."""
        variants = self._product(product_id)["variants"]
        key = stored_key(variants, item_id)
        if key is None:
            raise ToolError("Variant not found")
        return key, variants[key]

    def _payment_method(self, user_id: str, payment_method_id: JSONValue) -> tuple[str, PaymentMethod]:
        """(stored id, method) among the payment methods of user ``user_id``."""
        methods = self._user(user_id)["payment_methods"]
        key = stored_key(methods, payment_method_id)
        if key is None:
            raise ToolError("Payment method not found")
        return key, methods[key]

    def _pending_order(self, order_id: JSONValue) -> Order:
        """An order whose status contains "pending" (address and payment changes)."""
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ToolError("Non-pending order cannot be modified")
        return order
