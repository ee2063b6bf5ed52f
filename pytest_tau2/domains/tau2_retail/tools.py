"""The 16 tau2 retail tools, working on the plain-dict retail DB (see ``db.py``).

Behaviour follows upstream tau2 exactly: the order of the checks, the refusal texts, which
numbers are rounded and which are not, and two quirks the gold data depends on
(``modify_pending_order_items`` gives every modified item the price and options of the *last*
new variant, and records a 0 refund when the price does not change).

Our one addition: ids are looked up tolerantly (casing, spaces, hyphens, underscores, ``#``;
emails ignore case and spaces) through :mod:`pytest_tau2.environment.ids`, while everything
written back to the DB keeps the stored spelling, so the DB hash never depends on how an id
was spelled. Zip codes compare exactly, names case-insensitively, as upstream.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pytest_tau2.domains.tau2_common.tools import CalculateMixin, TransferMixin
from pytest_tau2.environment.ids import email_key, find_key, lookup, same_id
from pytest_tau2.environment.tools import Tool
from pytest_tau2.errors import ToolError

Record = dict[str, Any]

NAMESPACE = "tau2_retail"
CANCEL_REASONS = frozenset({"no longer needed", "ordered by mistake"})


# --------------------------------------------------------------------------- schemas


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _string_list(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def _arguments(**properties: dict[str, Any]) -> dict[str, Any]:
    """An object schema where every listed property is required and nothing else is allowed."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


ORDER_ID = _string("Order id, a '#W' followed by 7 digits, e.g. '#W0000000'. Keep the leading '#'.")
USER_ID = _string("User id, e.g. 'sara_doe_496'.")
PAYMENT_METHOD_ID = _string(
    "Id of one of the order owner's payment methods, e.g. 'credit_card_0000000' or "
    "'gift_card_0000000' (listed in the user's details)."
)
ITEM_IDS = _string_list(
    "Item ids (10 digits each) of items in the order. An id may appear several times, up to "
    "the number of times the order contains it."
)
NEW_ITEM_IDS = _string_list(
    "Replacement item ids, one per entry of item_ids and in the same order; each must be an "
    "available variant of the same product as the item it replaces."
)
ADDRESS = {
    "address1": _string("First address line, e.g. '123 Main St'."),
    "address2": _string("Second address line, e.g. 'Apt 1'; an empty string when there is none."),
    "city": _string("City, e.g. 'San Francisco'."),
    "state": _string("State, e.g. 'CA'."),
    "country": _string("Country, e.g. 'USA'."),
    "zip": _string("Zip code, e.g. '12345'."),
}


# --------------------------------------------------------------------------- helpers


def _payment(transaction_type: str, amount: float, payment_method_id: str) -> Record:
    """A payment-history entry; the amount is a float, as upstream's model makes it."""
    return {
        "transaction_type": transaction_type,
        "amount": float(amount),
        "payment_method_id": payment_method_id,
    }


def _address(address1: str, address2: str, city: str, state: str, country: str, zip: str) -> Record:
    return {
        "address1": address1,
        "address2": address2,
        "city": city,
        "country": country,
        "state": state,
        "zip": zip,
    }


def _is_gift_card(method: Record) -> bool:
    return method.get("source") == "gift_card"


def _add_to_gift_card(method: Record, amount: float) -> None:
    """Credit (or, with a negative amount, debit) a gift card; other methods are untouched."""
    if _is_gift_card(method):
        method["balance"] = round(method["balance"] + amount, 2)


def _order_item(order: Record, item_id: str) -> Record | None:
    """The first item of ``order`` whose (current) item id is ``item_id``."""
    return next((item for item in order["items"] if same_id(item["item_id"], item_id)), None)


def _excess_item(order: Record, item_ids: Sequence[str]) -> str | None:
    """The first id asked for more often than the order holds it, or None."""
    held = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        asked = sum(1 for other in item_ids if same_id(other, item_id))
        if asked > sum(1 for stored in held if same_id(stored, item_id)):
            return item_id
    return None


def _stored_item_ids(order: Record, item_ids: Sequence[str]) -> list[str]:
    """The order's own spelling of each item id (ids the order lacks are kept as given)."""
    items = (_order_item(order, item_id) for item_id in item_ids)
    return [given if item is None else item["item_id"] for given, item in zip(item_ids, items, strict=True)]


# --------------------------------------------------------------------------- base


class RetailTool(Tool):
    """Base of the retail tools: the shared lookups, each raising upstream's message."""

    abstract = True
    namespace = NAMESPACE

    def _table(self, name: str) -> dict[str, Record]:
        """One of the DB's top-level tables: ``products``, ``users`` or ``orders``."""
        table: dict[str, Record] = self.db[name]
        return table

    def _order(self, order_id: str) -> Record:
        order = lookup(self._table("orders"), order_id)
        if order is None:
            raise ToolError("Order not found")
        return order

    def _user(self, user_id: str) -> Record:
        user = lookup(self._table("users"), user_id)
        if user is None:
            raise ToolError("User not found")
        return user

    def _product(self, product_id: str) -> Record:
        product = lookup(self._table("products"), product_id)
        if product is None:
            raise ToolError("Product not found")
        return product

    def _variant(self, product_id: str, item_id: str) -> tuple[str, Record]:
        """(stored item id, variant) of ``item_id`` among the variants of ``product_id``."""
        variants = self._product(product_id)["variants"]
        key = find_key(variants, item_id)
        if key is None:
            raise ToolError("Variant not found")
        return key, variants[key]

    def _payment_method(self, user_id: str, payment_method_id: str) -> tuple[str, Record]:
        """(stored id, method) among the payment methods of user ``user_id``."""
        methods = self._user(user_id)["payment_methods"]
        key = find_key(methods, payment_method_id)
        if key is None:
            raise ToolError("Payment method not found")
        return key, methods[key]

    def _pending_order(self, order_id: str) -> Record:
        """An order whose status contains "pending" (address and payment changes)."""
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ToolError("Non-pending order cannot be modified")
        return order


# --------------------------------------------------------------------------- tools


class CalculateTool(CalculateMixin, RetailTool):
    """Upstream's calculator (shared with airline)."""


class CancelPendingOrderTool(RetailTool):
    """Cancel a pending order and refund every payment-history entry (gift cards at once)."""

    name = "cancel_pending_order"
    action_name = name
    mutates_state = True
    description = (
        "Cancel an order whose status is 'pending'. Every payment of the order is refunded: "
        "immediately for a gift card, within 5-7 business days otherwise. Explain the details "
        "and get the user's explicit confirmation (yes) first. Returns the updated order."
    )
    parameters = _arguments(
        order_id=ORDER_ID,
        reason=_string("Why the user cancels: exactly 'no longer needed' or 'ordered by mistake'."),
    )

    def run(self, order_id: str, reason: str) -> Record:
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be cancelled")
        if reason not in CANCEL_REASONS:
            raise ToolError("Invalid reason")
        refunds = []
        for entry in order["payment_history"]:
            refunds.append(_payment("refund", entry["amount"], entry["payment_method_id"]))
            _, method = self._payment_method(order["user_id"], entry["payment_method_id"])
            _add_to_gift_card(method, entry["amount"])
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        return order


class ExchangeDeliveredOrderItemsTool(RetailTool):
    """Request an exchange of delivered items for other variants of the same products."""

    name = "exchange_delivered_order_items"
    action_name = name
    mutates_state = True
    description = (
        "Exchange items of a delivered order for other available variants of the same "
        "products. This can be done only once per delivered order (return or exchange), so "
        "collect every item first. The price difference is paid with, or refunded to, the "
        "given payment method. Explain the details and get the user's explicit confirmation "
        "(yes) first. Returns the updated order."
    )
    parameters = _arguments(
        order_id=ORDER_ID,
        item_ids=ITEM_IDS,
        new_item_ids=NEW_ITEM_IDS,
        payment_method_id=PAYMENT_METHOD_ID,
    )

    def run(self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str) -> Record:
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be exchanged")
        excess = _excess_item(order, item_ids)
        if excess is not None:
            raise ToolError(f"Number of {excess} not found.")
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match.")
        difference: float = 0
        new_keys = []
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            item = _order_item(order, item_id)
            if item is None:
                raise ToolError(f"Item {item_id} not found")
            key, variant = self._variant(item["product_id"], new_item_id)
            if not variant["available"]:
                raise ToolError(f"New item {new_item_id} not found or available")
            new_keys.append(key)
            difference += variant["price"] - item["price"]
        difference = round(difference, 2)
        method_id, method = self._payment_method(order["user_id"], payment_method_id)
        if _is_gift_card(method) and method["balance"] < difference:
            raise ToolError("Insufficient gift card balance to pay for the price difference")
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(_stored_item_ids(order, item_ids))
        order["exchange_new_items"] = sorted(new_keys)
        order["exchange_payment_method_id"] = method_id
        order["exchange_price_difference"] = difference
        return order


class FindUserIdByNameZipTool(RetailTool):
    """The first user with this first and last name (any case) and exactly this zip."""

    name = "find_user_id_by_name_zip"
    description = (
        "Find a user's id from their first name, last name and zip code. Prefer "
        "find_user_id_by_email; use this when the user cannot give an email or it is not found."
    )
    parameters = _arguments(
        first_name=_string("The user's first name, e.g. 'John'."),
        last_name=_string("The user's last name, e.g. 'Doe'."),
        zip=_string("The user's zip code, e.g. '12345'."),
    )

    def run(self, first_name: str, last_name: str, zip: str) -> str:
        first, last = first_name.lower(), last_name.lower()
        for user_id, user in self._table("users").items():
            name = user["name"]
            if (
                name["first_name"].lower() == first
                and name["last_name"].lower() == last
                and user["address"]["zip"] == zip
            ):
                return user_id
        raise ToolError("User not found")


class FindUserIdByEmailTool(RetailTool):
    """The first user whose email matches, ignoring case and spaces."""

    name = "find_user_id_by_email"
    description = "Find a user's id from their email address."
    parameters = _arguments(email=_string("The user's email, e.g. 'something@example.com'."))

    def run(self, email: str) -> str:
        wanted = email_key(email)
        for user_id, user in self._table("users").items():
            if email_key(user["email"]) == wanted:
                return user_id
        raise ToolError("User not found")


class GetOrderDetailsTool(RetailTool):
    """The order record, including its null exchange/return fields."""

    name = "get_order_details"
    description = "Get the status, items, address, fulfillments and payments of an order."
    parameters = _arguments(order_id=ORDER_ID)

    def run(self, order_id: str) -> Record:
        return self._order(order_id)


class GetProductDetailsTool(RetailTool):
    """The product record with all its variants (unavailable ones included)."""

    name = "get_product_details"
    description = (
        "Get a product and all its variants (item ids, options, availability, price). Takes a "
        "product id, which is not the same as an item id."
    )
    parameters = _arguments(product_id=_string("Product id (10 digits), e.g. '6086499569'."))

    def run(self, product_id: str) -> Record:
        return self._product(product_id)


class GetItemDetailsTool(RetailTool):
    """The variant record of an item id, whichever product holds it."""

    name = "get_item_details"
    description = (
        "Get one item (a product variant): its options, availability and price. Takes an item "
        "id, which is not the same as a product id."
    )
    parameters = _arguments(item_id=_string("Item id (10 digits), e.g. '1008292230'."))

    def run(self, item_id: str) -> Record:
        for product in self._table("products").values():
            variants: dict[str, Record] = product["variants"]
            variant = lookup(variants, item_id)
            if variant is not None:
                return variant
        raise ToolError("Item not found")


class GetUserDetailsTool(RetailTool):
    """The user record: name, address, email, payment methods and order ids."""

    name = "get_user_details"
    description = "Get a user's details: name, address, email, payment methods and order ids."
    parameters = _arguments(user_id=USER_ID)

    def run(self, user_id: str) -> Record:
        return self._user(user_id)


class ListAllProductTypesTool(RetailTool):
    """A JSON string mapping every product name to its product id, keys sorted."""

    name = "list_all_product_types"
    description = (
        "List every product type of the store (50) as a JSON object mapping product name to "
        "product id. Each product has several variants (items) with their own item ids."
    )
    parameters = _arguments()

    def run(self) -> str:
        names = {product["name"]: product["product_id"] for product in self._table("products").values()}
        return json.dumps(names, sort_keys=True)


class ModifyPendingOrderAddressTool(RetailTool):
    """Replace the shipping address of an order whose status contains "pending"."""

    name = "modify_pending_order_address"
    action_name = name
    mutates_state = True
    description = (
        "Change the shipping address of a pending order. Explain the details and get the "
        "user's explicit confirmation (yes) first. Returns the updated order."
    )
    parameters = _arguments(order_id=ORDER_ID, **ADDRESS)

    def run(self, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> Record:
        order = self._pending_order(order_id)
        order["address"] = _address(address1, address2, city, state, country, zip)
        return order


class ModifyPendingOrderItemsTool(RetailTool):
    """Swap items of a pending order for other variants; pays or refunds the difference.

    Upstream quirks kept: the difference is not rounded, an unchanged total records a 0
    refund, and every modified item takes the price and options of the last new variant.
    """

    name = "modify_pending_order_items"
    action_name = name
    mutates_state = True
    description = (
        "Change items of a pending order to other available variants of the same products. "
        "This can be done only once per order, so collect every item first. The price "
        "difference is paid with, or refunded to, the given payment method. Explain the "
        "details and get the user's explicit confirmation (yes) first. Returns the updated order."
    )
    parameters = _arguments(
        order_id=ORDER_ID,
        item_ids=ITEM_IDS,
        new_item_ids=NEW_ITEM_IDS,
        payment_method_id=PAYMENT_METHOD_ID,
    )

    def run(self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str) -> Record:
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be modified")
        excess = _excess_item(order, item_ids)
        if excess is not None:
            raise ToolError(f"{excess} not found")
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match")
        difference: float = 0
        new_keys = []
        variant: Record = {}
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            if same_id(item_id, new_item_id):
                raise ToolError("The new item id should be different from the old item id")
            item = _order_item(order, item_id)
            if item is None:
                raise ToolError(f"Item {item_id} not found")
            key, variant = self._variant(item["product_id"], new_item_id)
            if not variant["available"]:
                raise ToolError(f"New item {new_item_id} not found or available")
            new_keys.append(key)
            difference += variant["price"] - item["price"]
        method_id, method = self._payment_method(order["user_id"], payment_method_id)
        if _is_gift_card(method) and method["balance"] < difference:
            raise ToolError("Insufficient gift card balance to pay for the new item")
        kind = "payment" if difference > 0 else "refund"
        order["payment_history"].append(_payment(kind, abs(difference), method_id))
        _add_to_gift_card(method, -difference)
        self._swap_items(order, item_ids, new_keys, variant)
        order["status"] = "pending (item modified)"
        return order

    @staticmethod
    def _swap_items(order: Record, item_ids: Sequence[str], new_keys: Sequence[str], last: Record) -> None:
        """Give each old item its new id, and the last variant's price and options (quirk)."""
        for item_id, new_key in zip(item_ids, new_keys, strict=True):
            item = _order_item(order, item_id)
            if item is None:
                raise ToolError(f"Item {item_id} not found")
            item["item_id"] = new_key
            item["price"] = last["price"]
            item["options"] = dict(last["options"])


class ModifyPendingOrderPaymentTool(RetailTool):
    """Move the single payment of a pending order to another of the user's methods."""

    name = "modify_pending_order_payment"
    action_name = name
    mutates_state = True
    description = (
        "Pay a pending order with a different payment method of the same user: the new method "
        "is charged the order amount and the original one refunded. Explain the details and "
        "get the user's explicit confirmation (yes) first. Returns the updated order."
    )
    parameters = _arguments(order_id=ORDER_ID, payment_method_id=PAYMENT_METHOD_ID)

    def run(self, order_id: str, payment_method_id: str) -> Record:
        order = self._pending_order(order_id)
        method_id, method = self._payment_method(order["user_id"], payment_method_id)
        history = order["payment_history"]
        if len(history) != 1 or history[0]["transaction_type"] != "payment":
            raise ToolError("There should be exactly one payment for a pending order")
        old_id = history[0]["payment_method_id"]
        if old_id == method_id:
            raise ToolError("The new payment method should be different from the current one")
        amount = history[0]["amount"]
        if _is_gift_card(method) and method["balance"] < amount:
            raise ToolError("Insufficient gift card balance to pay for the order")
        history.extend([_payment("payment", amount, method_id), _payment("refund", amount, old_id)])
        _add_to_gift_card(method, -amount)
        _, old_method = self._payment_method(order["user_id"], old_id)
        _add_to_gift_card(old_method, amount)
        return order


class ModifyUserAddressTool(RetailTool):
    """Replace a user's default address."""

    name = "modify_user_address"
    action_name = name
    mutates_state = True
    description = (
        "Change a user's default address. Explain the details and get the user's explicit "
        "confirmation (yes) first. Returns the updated user."
    )
    parameters = _arguments(user_id=USER_ID, **ADDRESS)

    def run(self, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> Record:
        user = self._user(user_id)
        user["address"] = _address(address1, address2, city, state, country, zip)
        return user


class ReturnDeliveredOrderItemsTool(RetailTool):
    """Request a return of delivered items, refunded to the original method or a gift card."""

    name = "return_delivered_order_items"
    action_name = name
    mutates_state = True
    description = (
        "Request the return of items of a delivered order; the order becomes 'return "
        "requested' and the user gets an email on how to send the items back. The refund goes "
        "to the original payment method or to one of the user's gift cards. This can be done "
        "only once per delivered order (return or exchange). Explain the details and get the "
        "user's explicit confirmation (yes) first. Returns the updated order."
    )
    parameters = _arguments(order_id=ORDER_ID, item_ids=ITEM_IDS, payment_method_id=PAYMENT_METHOD_ID)

    def run(self, order_id: str, item_ids: list[str], payment_method_id: str) -> Record:
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be returned")
        method_id, method = self._payment_method(order["user_id"], payment_method_id)
        if not _is_gift_card(method) and method_id != order["payment_history"][0]["payment_method_id"]:
            raise ToolError("Payment method should be the original payment method")
        if _excess_item(order, item_ids) is not None:
            raise ToolError("Some item not found")
        order["status"] = "return requested"
        order["return_items"] = sorted(_stored_item_ids(order, item_ids))
        order["return_payment_method_id"] = method_id
        return order


class TransferToHumanAgentsTool(TransferMixin, RetailTool):
    """Hand over to a human agent; no DB effect, ends the conversation."""


TOOL_CLASSES: tuple[type[Tool], ...] = (
    CalculateTool,
    CancelPendingOrderTool,
    ExchangeDeliveredOrderItemsTool,
    FindUserIdByNameZipTool,
    FindUserIdByEmailTool,
    GetOrderDetailsTool,
    GetProductDetailsTool,
    GetItemDetailsTool,
    GetUserDetailsTool,
    ListAllProductTypesTool,
    ModifyPendingOrderAddressTool,
    ModifyPendingOrderItemsTool,
    ModifyPendingOrderPaymentTool,
    ModifyUserAddressTool,
    ReturnDeliveredOrderItemsTool,
    TransferToHumanAgentsTool,
)
"""The agent tools in upstream definition order (the core appends EndConversationTool)."""

ACTION_NAME_TO_TOOL: dict[str, type[Tool]] = {cls.name: cls for cls in TOOL_CLASSES}
"""Upstream tool name -> class, for every tool (gold actions also name read tools)."""
