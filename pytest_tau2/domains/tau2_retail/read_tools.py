"""The retail tools that never change the DB: lookups, the calculator and the transfer.

Upstream types them READ (the lookups) or GENERIC (``calculate``,
``transfer_to_human_agents``); a gold replay re-executes none of them.
"""

from __future__ import annotations

import json

from pytest_tau2.domains.tau2_common.tools import CalculateMixin, TransferMixin
from pytest_tau2.domains.tau2_retail.base import ORDER_ID, USER_ID, RetailTool, arguments, stored_key, string
from pytest_tau2.domains.tau2_retail.db import Order, Product, User, Variant
from pytest_tau2.environment.db import peek_items, peek_values
from pytest_tau2.environment.ids import email_key
from pytest_tau2.errors import ToolError


class CalculateTool(CalculateMixin, RetailTool):
    """Upstream's calculator (shared with airline)."""


class FindUserIdByNameZipTool(RetailTool):
    """The first user with this first and last name (any case) and exactly this zip."""

    name = "find_user_id_by_name_zip"
    description = (
        "Find a user's id from their first name, last name and zip code. Prefer "
        "find_user_id_by_email; use this when the user cannot give an email or it is not found."
    )
    parameters = arguments(
        first_name=string("The user's first name, e.g. 'John'."),
        last_name=string("The user's last name, e.g. 'Doe'."),
        zip=string("The user's zip code, e.g. '12345'."),
    )

    def run(self, first_name: str, last_name: str, zip: str) -> str:
        first, last = first_name.lower(), last_name.lower()
        for user_id, user in peek_items(self.db["users"]):
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
    parameters = arguments(email=string("The user's email, e.g. 'something@example.com'."))

    def run(self, email: str) -> str:
        wanted = email_key(email)
        for user_id, user in peek_items(self.db["users"]):
            if email_key(user["email"]) == wanted:
                return user_id
        raise ToolError("User not found")


class GetOrderDetailsTool(RetailTool):
    """The order record, including its null exchange/return fields."""

    name = "get_order_details"
    description = "Get the status, items, address, fulfillments and payments of an order."
    parameters = arguments(order_id=ORDER_ID)

    def run(self, order_id: str) -> Order:
        return self._order(order_id, writable=False)


class GetProductDetailsTool(RetailTool):
    """The product record with all its variants (unavailable ones included)."""

    name = "get_product_details"
    description = (
        "Get a product and all its variants (item ids, options, availability, price). Takes a "
        "product id, which is not the same as an item id."
    )
    parameters = arguments(product_id=string("Product id (10 digits), e.g. '6086499569'."))

    def run(self, product_id: str) -> Product:
        return self._product(product_id, writable=False)


class GetItemDetailsTool(RetailTool):
    """The variant record of an item id, whichever product holds it."""

    name = "get_item_details"
    description = (
        "Get one item (a product variant): its options, availability and price. Takes an item "
        "id, which is not the same as a product id."
    )
    parameters = arguments(item_id=string("Item id (10 digits), e.g. '1008292230'."))

    def run(self, item_id: str) -> Variant:
        for product in peek_values(self.db["products"]):
            variants = product["variants"]
            key = stored_key(variants, item_id)
            if key is not None:
                return variants[key]
        raise ToolError("Item not found")


class GetUserDetailsTool(RetailTool):
    """The user record: name, address, email, payment methods and order ids."""

    name = "get_user_details"
    description = "Get a user's details: name, address, email, payment methods and order ids."
    parameters = arguments(user_id=USER_ID)

    def run(self, user_id: str) -> User:
        return self._user(user_id, writable=False)


class ListAllProductTypesTool(RetailTool):
    """A JSON string mapping every product name to its product id, keys sorted."""

    name = "list_all_product_types"
    description = (
        "List every product type of the store (50) as a JSON object mapping product name to "
        "product id. Each product has several variants (items) with their own item ids."
    )
    parameters = arguments()

    def run(self) -> str:
        names = {product["name"]: product["product_id"] for product in self.db["products"].values()}
        return json.dumps(names, sort_keys=True)


class TransferToHumanAgentsTool(TransferMixin, RetailTool):
    """Hand over to a human agent; no DB effect, ends the conversation."""
