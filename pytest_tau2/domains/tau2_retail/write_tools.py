"""The retail tools that change the DB (upstream's WRITE tools; a gold replay re-executes them).

Cancelling, exchanging and returning orders, changing a pending order's items, address or
payment, and changing a user's address.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import cast

from pytest_tau2.domains.tau2_common.tools import no_attribute, upstream_model
from pytest_tau2.domains.tau2_retail.base import (
    ADDRESS,
    ITEM_IDS,
    NEW_ITEM_IDS,
    ORDER_ID,
    PAYMENT_METHOD_ID,
    USER_ID,
    RetailTool,
    UserAddress,
    arguments,
    same_item_id,
    string,
)
from pytest_tau2.domains.tau2_retail.db import Address, Order, OrderItem, Payment, PaymentMethod, User, Variant
from pytest_tau2.environment.jsontypes import JSONValue
from pytest_tau2.errors import ToolError

CANCEL_REASONS = frozenset({"no longer needed", "ordered by mistake"})


# --------------------------------------------------------------------------- helpers


def _payment(transaction_type: str, amount: float, payment_method_id: str) -> Payment:
    """A payment-history entry; the amount is a float, as upstream's model makes it."""
    return {
        "transaction_type": transaction_type,
        "amount": float(amount),
        "payment_method_id": payment_method_id,
    }


def _address(
    address1: JSONValue, address2: JSONValue, city: JSONValue, state: JSONValue, country: JSONValue, zip: JSONValue
) -> Address:
    """The address record, built like upstream builds it: a non-string field refuses the call."""
    fields = {"address1": address1, "address2": address2, "city": city, "country": country, "state": state, "zip": zip}
    return cast(Address, upstream_model(UserAddress, fields))  # UserAddress's dump: six strings


def _is_gift_card(method: PaymentMethod) -> bool:
    return method.get("source") == "gift_card"


def _add_to_gift_card(method: PaymentMethod, amount: float) -> None:
    """Credit (or, with a negative amount, debit) a gift card; other methods are untouched."""
    if _is_gift_card(method):
        method["balance"] = round(method["balance"] + amount, 2)


def _order_item(order: Order, item_id: JSONValue) -> OrderItem | None:
    """The first item of ``order`` whose (current) item id is ``item_id``."""
    return next((item for item in order["items"] if same_item_id(item["item_id"], item_id)), None)


def _excess_items(order: Order, item_ids: object) -> list[JSONValue]:
    """The ids asked for more often than the order holds them, in the order asked (first one first).

    ``item_ids`` is taken as upstream takes it: a string counts as its characters, and
    any other non-empty non-list refuses the call the way upstream's ``count`` call does.
    """
    if item_ids and not isinstance(item_ids, list | str):
        raise no_attribute(item_ids, "count")
    held = [item["item_id"] for item in order["items"]]
    asked_for = cast("Iterable[JSONValue]", item_ids)  # a falsy number or null raises TypeError: refused
    excess = []
    for item_id in asked_for:
        asked = sum(1 for other in asked_for if same_item_id(other, item_id))
        if asked > sum(1 for stored in held if same_item_id(stored, item_id)):
            excess.append(item_id)
    return excess


def _stored_item_ids(order: Order, item_ids: Sequence[str]) -> list[str]:
    """The order's own spelling of each item id (ids the order lacks are kept as given)."""
    items = (_order_item(order, item_id) for item_id in item_ids)
    return [given if item is None else item["item_id"] for given, item in zip(item_ids, items, strict=True)]


# --------------------------------------------------------------------------- tools


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
    parameters = arguments(
        order_id=ORDER_ID,
        reason=string("Why the user cancels: exactly 'no longer needed' or 'ordered by mistake'."),
    )

    def run(self, order_id: str, reason: str) -> Order:
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
    parameters = arguments(
        order_id=ORDER_ID,
        item_ids=ITEM_IDS,
        new_item_ids=NEW_ITEM_IDS,
        payment_method_id=PAYMENT_METHOD_ID,
    )

    def run(self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str) -> Order:
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be exchanged")
        excess = _excess_items(order, item_ids)
        if excess:
            raise ToolError(f"Number of {excess[0]} not found.")
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


class ModifyPendingOrderAddressTool(RetailTool):
    """Replace the shipping address of an order whose status contains "pending"."""

    name = "modify_pending_order_address"
    action_name = name
    mutates_state = True
    description = (
        "Change the shipping address of a pending order. Explain the details and get the "
        "user's explicit confirmation (yes) first. Returns the updated order."
    )
    parameters = arguments(order_id=ORDER_ID, **ADDRESS)

    def run(self, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> Order:
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
    parameters = arguments(
        order_id=ORDER_ID,
        item_ids=ITEM_IDS,
        new_item_ids=NEW_ITEM_IDS,
        payment_method_id=PAYMENT_METHOD_ID,
    )

    def run(self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str) -> Order:
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be modified")
        excess = _excess_items(order, item_ids)
        if excess:
            raise ToolError(f"{excess[0]} not found")
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match")
        difference: float = 0
        new_keys = []
        variant = cast(Variant, {})  # the last new variant; the loop runs at least once when it is read
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            if same_item_id(item_id, new_item_id):
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
    def _swap_items(order: Order, item_ids: Sequence[str], new_keys: Sequence[str], last: Variant) -> None:
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
    parameters = arguments(order_id=ORDER_ID, payment_method_id=PAYMENT_METHOD_ID)

    def run(self, order_id: str, payment_method_id: str) -> Order:
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
    parameters = arguments(user_id=USER_ID, **ADDRESS)

    def run(self, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str) -> User:
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
    parameters = arguments(order_id=ORDER_ID, item_ids=ITEM_IDS, payment_method_id=PAYMENT_METHOD_ID)

    def run(self, order_id: str, item_ids: list[str], payment_method_id: str) -> Order:
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be returned")
        method_id, method = self._payment_method(order["user_id"], payment_method_id)
        if not _is_gift_card(method) and method_id != order["payment_history"][0]["payment_method_id"]:
            raise ToolError("Payment method should be the original payment method")
        if _excess_items(order, item_ids):
            raise ToolError("Some item not found")
        order["status"] = "return requested"
        order["return_items"] = sorted(_stored_item_ids(order, item_ids))
        order["return_payment_method_id"] = method_id
        return order
