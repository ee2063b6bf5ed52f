"""Two Pizza Palace scenarios for the example agent.

With no model configured, the simulated user is pytest-tau2's *scripted* user: it opens with
the scenario's goal (``user_task.goal``) word for word, then confirms and thanks. So the goal
is written as the caller's first sentence, with everything the agent needs to know.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pytest_tau2 import Persona, Task, register_eval_scenario
from pytest_tau2.domains.restaurant import RestaurantBaseScenario


@register_eval_scenario
class PhoneOrder(RestaurantBaseScenario):
    """The caller orders a pizza, a topping and a drink in one sentence."""

    name = "restaurant__phone_order"
    description = "Order a pepperoni pizza with extra cheese and a lemonade"
    reference_answer = {
        "items": [
            {"name": "Pepperoni Pizza", "unit_price": "9.99", "quantity": "1"},
            {"name": "Extra Cheese", "unit_price": "1.50", "quantity": "1"},
            {"name": "Lemonade", "unit_price": "2.49", "quantity": "1"},
        ],
        "customer_name": "Charlie",
        "customer_phone": "314-527-8960",
        "total_price": "13.98",
    }

    @property
    def user_persona(self) -> Persona:
        return Persona(role="human user", name="Charlie", background="Your phone number is 314-527-8960.")

    @property
    def user_task(self) -> Task:
        return Task(
            goal="Hi! I'd like one pepperoni pizza with extra cheese and a lemonade, please. "
            "My name is Charlie and my phone number is 314-527-8960."
        )


@register_eval_scenario
class DrinksQuestion(RestaurantBaseScenario):
    """The caller only asks about drinks: placing any order would be a mismatch."""

    name = "restaurant__drinks_question"
    description = "Ask which drinks there are, order nothing"
    reference_answer: ClassVar[Any] = []  # nothing may be ordered
    disallow_extra_items = True

    @property
    def user_task(self) -> Task:
        return Task(goal="Which drinks do you have? I am not ordering today.")
