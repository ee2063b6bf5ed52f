"""Retail tool arguments taken the way upstream takes them.

Upstream checks no argument at call time. Retail builds only one record from arguments (the
address, strings only); every other argument is compared, counted or stored as given. Each
case below was run against upstream's code at the pin: where it accepts a value we accept it
and write the same DB, where it refuses we refuse and the DB is untouched.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from pytest_tau2.domains.tau2_retail import TOOL_CLASSES
from pytest_tau2.environment import Environment, db_hash
from tests.unit.test_retail_tools import (
    ADDRESS,
    ANA,
    BLUE,
    CARD,
    GIFT,
    PAYPAL,
    RED,
    make_env,
    ok,
    order,
    refused,
)


@pytest.fixture
def env() -> Environment:
    return make_env()


def db_after(name: str, **arguments: Any) -> str:
    """The DB hash after one successful call on a fresh DB."""
    env = make_env()
    ok(env, name, **arguments)
    return db_hash(env.db)


def test_every_tool_takes_arguments_as_upstream_and_its_schema_names_its_parameters() -> None:
    for cls in TOOL_CLASSES:
        assert cls.check_argument_types is False, cls.name
        names = list(inspect.signature(cls.run).parameters)[1:]
        assert list(cls.parameters["properties"]) == names == cls.parameters["required"], cls.name
        assert cls.parameters["additionalProperties"] is False


def test_unknown_and_missing_argument_names_are_refused_like_a_python_call(env: Environment) -> None:
    message = refused(env, "cancel_pending_order", order_id="#W0000001")
    assert message == "cancel_pending_order() missing 1 required argument: 'reason'"
    message = refused(env, "cancel_pending_order", order_id="#W0000001", reason="no longer needed", extra=1)
    assert message == "cancel_pending_order() got an unexpected keyword argument 'extra'"
    message = refused(env, "list_all_product_types", anything=True)
    assert message == "list_all_product_types() got an unexpected keyword argument 'anything'"
    message = refused(env, "modify_user_address", user_id=ANA, address1="1 Road")
    assert message == (
        "modify_user_address() missing 5 required arguments: 'address2', 'city', 'state', 'country', 'zip'"
    )
    assert env.actions == [] and env.tool_errors == 4


@pytest.mark.parametrize(
    ("reason", "message"), [(1, "Invalid reason"), (["no longer needed"], "unhashable type: 'list'")]
)
def test_cancel_reason_that_is_not_a_string_is_refused(env: Environment, reason: Any, message: str) -> None:
    assert refused(env, "cancel_pending_order", order_id="#W0000001", reason=reason) == message


@pytest.mark.parametrize("tool", ["modify_user_address", "modify_pending_order_address"])
@pytest.mark.parametrize("field", ["zip", "address2"])
def test_address_field_that_is_not_a_string_is_refused(env: Environment, tool: str, field: str) -> None:
    target = {"user_id": ANA} if tool == "modify_user_address" else {"order_id": "#W0000001"}
    message = refused(env, tool, **target, **{**ADDRESS, field: 62701})
    assert message.startswith(f"1 validation error for UserAddress\n{field}\n  Input should be a valid string")


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("get_order_details", {"order_id": 1}, "Order not found"),
        ("get_user_details", {"user_id": None}, "User not found"),
        ("get_product_details", {"product_id": 1000000001}, "Product not found"),
        ("get_item_details", {"item_id": int(RED)}, "Item not found"),
        ("find_user_id_by_name_zip", {"first_name": "Ana", "last_name": "Lee", "zip": 80751}, "User not found"),
        ("modify_pending_order_payment", {"order_id": "#W0000001", "payment_method_id": 1}, "Payment method not found"),
    ],
)
def test_ids_that_are_not_strings_find_nothing(
    env: Environment, name: str, arguments: dict[str, Any], message: str
) -> None:
    assert refused(env, name, **arguments) == message


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        (
            "exchange_delivered_order_items",
            {"order_id": "#W0000003", "item_ids": [int(RED)], "new_item_ids": [BLUE], "payment_method_id": PAYPAL},
            f"Number of {int(RED)} not found.",
        ),
        (
            "modify_pending_order_items",
            {"order_id": "#W0000001", "item_ids": [int(RED)], "new_item_ids": [BLUE], "payment_method_id": CARD},
            f"{int(RED)} not found",
        ),
        (
            "return_delivered_order_items",
            {"order_id": "#W0000003", "item_ids": [1], "payment_method_id": PAYPAL},
            "Some item not found",
        ),
        (
            "return_delivered_order_items",
            {"order_id": "#W0000003", "item_ids": [None], "payment_method_id": PAYPAL},
            "Some item not found",
        ),
        (  # a string counts as its characters, none of which is an item id
            "modify_pending_order_items",
            {"order_id": "#W0000001", "item_ids": RED, "new_item_ids": [BLUE], "payment_method_id": CARD},
            "2 not found",
        ),
        (
            "return_delivered_order_items",
            {"order_id": "#W0000003", "item_ids": {RED: 1}, "payment_method_id": PAYPAL},
            "'dict' object has no attribute 'count'",
        ),
        (
            "return_delivered_order_items",
            {"order_id": "#W0000003", "item_ids": None, "payment_method_id": PAYPAL},
            "'NoneType' object is not iterable",
        ),
    ],
)
def test_item_ids_upstream_refuses(env: Environment, name: str, arguments: dict[str, Any], message: str) -> None:
    assert refused(env, name, **arguments) == message


@pytest.mark.parametrize("empty", ["", {}])
def test_empty_string_or_object_counts_as_no_item(empty: Any) -> None:
    env = make_env()
    ok(env, "return_delivered_order_items", order_id="#W0000003", item_ids=empty, payment_method_id=PAYPAL)
    assert order(env, "#W0000003")["return_items"] == [] and order(env, "#W0000003")["status"] == "return requested"
    same = {"order_id": "#W0000003", "item_ids": [], "payment_method_id": PAYPAL}
    assert db_hash(env.db) == db_after("return_delivered_order_items", **same)


def test_new_item_ids_as_an_object_count_as_its_keys() -> None:
    env = make_env()
    arguments = {"order_id": "#W0000003", "item_ids": [RED], "payment_method_id": GIFT}
    ok(env, "exchange_delivered_order_items", **arguments, new_item_ids={BLUE: "any"})
    assert order(env, "#W0000003")["exchange_new_items"] == [BLUE]
    assert db_hash(env.db) == db_after("exchange_delivered_order_items", **arguments, new_item_ids=[BLUE])


def test_transfer_summary_of_any_type(env: Environment) -> None:
    result = env.call("transfer_to_human_agents", {"summary": 42})
    assert (result.content, result.error, result.ends_conversation) == ("Transfer successful", False, "transfer")


def test_calculate_expression_that_is_not_a_string_is_refused(env: Environment) -> None:
    assert refused(env, "calculate", expression=2) == "'int' object is not iterable"
