"""Pizza Palace scenarios, written as a user of pytest-tau2 would."""

from __future__ import annotations

from pytest_tau2 import Actions, Persona, Task, register_eval_scenario
from pytest_tau2.domains.restaurant import RestaurantBaseScenario


@register_eval_scenario
class PizzaPepperoni(RestaurantBaseScenario):
    """Order a pepperoni pizza with extra cheese at Pizza Palace."""

    name = "restaurant__pizza_pepperoni"
    description = "Order a pepperoni pizza with extra cheese at Pizza Palace"
    reference_answer = {
        "items": [
            {"name": "Pepperoni Pizza", "unit_price": "9.99", "quantity": "1"},
            {"name": "Extra Cheese", "unit_price": "1.50", "quantity": "1"},
        ],
        "customer_name": "Charlie",
        "customer_phone": "314-527-8960",
        "total_price": "11.49",
    }

    @property
    def user_persona(self) -> Persona:
        return Persona(
            role="human user",
            name="Charlie",
            background="You are a graphic designer. Your phone number is 314-527-8960.",
            personality="Communicative and positive, with clear needs and prompt decision-making.",
        )

    @property
    def user_task(self) -> Task:
        return Task(
            goal="Order a pepperoni pizza with extra cheese.",
            background="You are hungry after work and just walked into Pizza Palace.",
        )

    @property
    def user_actions(self) -> Actions:
        return Actions(
            instructions=[
                "Ask the agent what pizza options are available.",
                "Order one pepperoni pizza.",
                "Ask if you can add extra cheese, and add it to the order.",
                "Confirm the order and ask for the total price.",
            ],
            guidelines=["Provide your name and phone number when asked."],
        )


@register_eval_scenario
class MargheritaForTwo(RestaurantBaseScenario):
    """Two margheritas and a garlic bread for a family dinner."""

    name = "restaurant__margherita_for_two"
    description = "Order two Margherita pizzas and a garlic bread"
    reference_answer = {
        "items": [
            {"name": "Margherita Pizza", "unit_price": "8.99", "quantity": "2"},
            {"name": "Garlic Bread", "unit_price": "4.50", "quantity": "1"},
        ],
        "customer_name": "Dana",
        "customer_phone": "206-555-0143",
        "total_price": "22.48",
    }

    @property
    def user_persona(self) -> Persona:
        return Persona(
            role="human user",
            name="Dana",
            background="Your phone number is 206-555-0143.",
            personality="Busy parent, to the point.",
        )

    @property
    def user_task(self) -> Task:
        return Task(goal="Order two Margherita pizzas and one garlic bread for dinner.")


@register_eval_scenario
class VeggieNoMushrooms(RestaurantBaseScenario):
    """A veggie pizza and a lemonade; the caller asks about the price first."""

    name = "restaurant__veggie_and_lemonade"
    description = "Ask the price of the veggie pizza, then order it with a lemonade"
    reference_answer = {
        "items": [
            {"name": "Veggie Pizza", "unit_price": "10.49", "quantity": "1"},
            {"name": "Lemonade", "unit_price": "2.49", "quantity": "1"},
        ],
        "customer_name": "Eli",
        "customer_phone": "512-555-0199",
        "total_price": "12.98",
    }

    @property
    def user_persona(self) -> Persona:
        return Persona(
            role="human user",
            name="Eli",
            background="Your phone number is 512-555-0199.",
            personality="Careful with money; asks for prices before deciding.",
        )

    @property
    def user_task(self) -> Task:
        return Task(goal="Find out how much the veggie pizza costs, then order one with a lemonade.")


@register_eval_scenario
class PartyOrder(RestaurantBaseScenario):
    """A larger order with several quantities: order-independent item matching matters."""

    name = "restaurant__party_order"
    description = "Order three BBQ chicken pizzas, two Caesar salads and four colas for a party"
    reference_answer = {
        "items": [
            {"name": "Cola", "unit_price": "1.99", "quantity": "4"},
            {"name": "BBQ Chicken Pizza", "unit_price": "11.99", "quantity": "3"},
            {"name": "Caesar Salad", "unit_price": "6.25", "quantity": "2"},
        ],
        "customer_name": "Farah",
        "customer_phone": "617-555-0110",
        "total_price": "56.43",
    }
    disallow_extra_items = True

    @property
    def user_persona(self) -> Persona:
        return Persona(
            role="human user",
            name="Farah",
            background="Your phone number is 617-555-0110.",
            personality="Organised; reads the order from a list.",
        )

    @property
    def user_task(self) -> Task:
        return Task(goal="Order three BBQ chicken pizzas, two Caesar salads and four colas for a party.")


@register_eval_scenario
class PepperoniWithMushrooms(RestaurantBaseScenario):
    """A topping the caller adds after hearing the options."""

    name = "restaurant__pepperoni_mushrooms"
    description = "Order a pepperoni pizza, then add mushrooms after asking about toppings"
    reference_answer = {
        "items": [
            {"name": "Pepperoni Pizza", "unit_price": "9.99", "quantity": "1"},
            {"name": "Mushrooms", "unit_price": "1.00", "quantity": "1"},
        ],
        "customer_name": "Gus",
        "customer_phone": "303-555-0177",
        "total_price": "10.99",
    }

    @property
    def user_persona(self) -> Persona:
        return Persona(
            role="human user",
            name="Gus",
            background="Your phone number is 303-555-0177.",
            personality="Indecisive; changes their mind once.",
        )

    @property
    def user_task(self) -> Task:
        return Task(goal="Order a pepperoni pizza; ask which toppings exist and add mushrooms.")


@register_eval_scenario
class MenuQuestionOnly(RestaurantBaseScenario):
    """The caller only asks about the menu and orders nothing: no action may be recorded."""

    name = "restaurant__menu_question"
    description = "Ask which drinks are on the menu, then hang up without ordering"
    reference_answer: list[dict[str, str]] = []
    disallow_extra_items = True  # with an empty reference: any placed order is a mismatch

    @property
    def user_task(self) -> Task:
        return Task(goal="Ask which drinks Pizza Palace has. You are not ordering today.")
