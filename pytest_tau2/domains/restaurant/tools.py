"""Pizza Palace tools: read the menu, place an order."""

from __future__ import annotations

import math
from typing import TypedDict, cast

from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.environment.tools import Tool
from pytest_tau2.errors import ToolError

_NUMBER: JSONObject = {"type": ["number", "string"]}


class MenuItem(TypedDict):
    name: str
    category: str
    price: float


class OrderedItem(TypedDict):
    """One entry of ``place_order``'s ``items`` (its JSON Schema guarantees the keys)."""

    name: str
    unit_price: float | str
    quantity: int | str


class RestaurantTool(Tool):
    abstract = True
    namespace = "restaurant"

    @property
    def db(self) -> dict[str, list[JSONObject]]:
        """``{"orders": [...]}`` (and optionally a ``"menu"``): what orders.json holds."""
        return cast("dict[str, list[JSONObject]]", self.state["db"])

    def menu(self) -> list[MenuItem]:
        """The menu from the tool's configuration (``{"menu": ...}``), else from the DB."""
        return cast("list[MenuItem]", self.config.get("menu") or self.db.get("menu", []))


class GetMenuTool(RestaurantTool):
    """Returns the menu given in the tool's configuration (``{"menu": ...}``)."""

    description = "Get the Pizza Palace menu: every item with its name, category and unit price."

    def run(self, **arguments: object) -> list[MenuItem]:
        return self.menu()


class PlaceOrderTool(RestaurantTool):
    """Validates items against the menu, checks the total, and stores the order."""

    description = (
        "Place the customer's order once they have confirmed it. Items must be on the menu; "
        "total_price must equal the sum of unit_price x quantity."
    )
    parameters = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "minItems": 1,
                "description": "Ordered items.",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "Menu item name."},
                        "unit_price": {**_NUMBER, "description": "Price of one unit."},
                        "quantity": {"type": ["integer", "string"], "description": "How many."},
                    },
                    "required": ["name", "unit_price", "quantity"],
                    "additionalProperties": False,
                },
            },
            "customer_name": {"type": "string", "description": "The customer's name."},
            "customer_phone": {"type": "string", "description": "The customer's phone number."},
            "total_price": {**_NUMBER, "description": "Order total."},
        },
        "required": ["items", "customer_name", "customer_phone", "total_price"],
        "additionalProperties": False,
    }
    action_name = "place_order"
    mutates_state = True

    def run(self, **arguments: JSONValue) -> JSONObject:
        menu = {item["name"].casefold(): item for item in self.menu()}
        total = 0.0
        for item in cast("list[OrderedItem]", arguments["items"]):  # checked against the schema
            entry = menu.get(str(item["name"]).casefold())
            if entry is None:
                raise ToolError(f"'{item['name']}' is not on the menu")
            price = _number(item["unit_price"], "unit_price")
            if not math.isclose(price, entry["price"], abs_tol=0.005):
                raise ToolError(f"unit_price of '{entry['name']}' is {entry['price']:.2f}, not {price:.2f}")
            quantity = int(_number(item["quantity"], "quantity"))
            if quantity < 1:
                raise ToolError("quantity must be at least 1")
            total += entry["price"] * quantity
        given = _number(arguments["total_price"], "total_price")
        if not math.isclose(given, total, abs_tol=0.005):
            raise ToolError(f"total_price {given:.2f} does not match the items, which add up to {total:.2f}")
        orders = self.db.setdefault("orders", [])
        order = {"order_id": f"PP{len(orders) + 1:04d}", **arguments, "status": "placed"}
        orders.append(order)
        return {"order_id": order["order_id"], "status": "placed", "total_price": round(total, 2)}


def _number(value: JSONValue, field: str) -> float:
    try:
        return float(str(value).strip().lstrip("$"))
    except ValueError:
        raise ToolError(f"{field} must be a number, got {value!r}") from None
