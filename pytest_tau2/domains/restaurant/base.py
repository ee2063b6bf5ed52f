"""``RestaurantBaseScenario``: the defaults every Pizza Palace scenario inherits."""

from __future__ import annotations

from typing import ClassVar

from pytest_tau2.domains.restaurant.tools import MenuItem
from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.model import Actions, Persona, Resources, SuccessSignal, Task

PIZZA_PALACE_MENU: list[MenuItem] = [
    {"name": "Margherita Pizza", "category": "pizza", "price": 8.99},
    {"name": "Pepperoni Pizza", "category": "pizza", "price": 9.99},
    {"name": "Veggie Pizza", "category": "pizza", "price": 10.49},
    {"name": "BBQ Chicken Pizza", "category": "pizza", "price": 11.99},
    {"name": "Extra Cheese", "category": "topping", "price": 1.50},
    {"name": "Mushrooms", "category": "topping", "price": 1.00},
    {"name": "Garlic Bread", "category": "side", "price": 4.50},
    {"name": "Caesar Salad", "category": "side", "price": 6.25},
    {"name": "Cola", "category": "drink", "price": 1.99},
    {"name": "Lemonade", "category": "drink", "price": 2.49},
]


class RestaurantBaseScenario(Scenario):
    """Pizza Palace phone orders. Scored on the placed order (ACTION_MATCH) and a clean exit."""

    success_signals: ClassVar[tuple[SuccessSignal, ...]] = (SuccessSignal.ACTION_MATCH, SuccessSignal.CLEAN_EXIT)
    max_duration = 300.0
    max_turns = 20

    def setup_shared_state(self, state: dict[str, object], side: str) -> None:
        if side == "agent":
            state["db_path"] = "restaurant/orders.json"

    @property
    def agent_persona(self) -> Persona:
        return Persona(
            role="order-taking assistant at Pizza Palace",
            name="Pat",
            background="You answer the phone at Pizza Palace, a family pizza restaurant.",
            personality="Friendly, brief and precise.",
        )

    @property
    def agent_task(self) -> Task:
        return Task(goal="Take the caller's order accurately and place it.")

    @property
    def agent_actions(self) -> Actions:
        return Actions(
            instructions=[
                "Greet the caller and ask what they would like to order.",
                "Summarize the order and confirm it is correct.",
                "Ask for the caller's name and phone number.",
                "Place the order with the `PlaceOrderTool` tool and confirm it succeeded.",
                "Say goodbye and call the `EndConversationTool` tool.",
            ],
            guidelines=["Do not make up any items that are not on the menu."],
        )

    @property
    def agent_resources(self) -> Resources:
        return Resources(
            tools={
                "GetMenuTool": {"menu": PIZZA_PALACE_MENU},
                "PlaceOrderTool": {"menu": PIZZA_PALACE_MENU},
                "EndConversationTool": {},
            },
            information=["You can use the `GetMenuTool` tool to retrieve the restaurant menu."],
        )

    def gold_actions(self) -> list[JSONObject] | None:
        """The order(s) the reference answer describes, placed through PlaceOrderTool."""
        reference = self.reference_answer
        if reference is None:
            return None
        orders = [reference] if isinstance(reference, dict) else list(reference)
        return [{"name": "PlaceOrderTool", "arguments": dict(order), "requestor": "assistant"} for order in orders]
