"""Retail tools on a small hand-made DB: every refusal text, every effect, the upstream quirks."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.domains.tau2_retail import ACTION_NAME_TO_TOOL, TOOL_CLASSES, read_db
from pytest_tau2.domains.tau2_retail.base import RetailTool
from pytest_tau2.domains.tau2_retail.db import OPTIONAL_ORDER_KEYS, complete_order
from pytest_tau2.environment import Environment, Tool, copy_db, db_hash, resolve_tool
from pytest_tau2.environment.tools import TOOL_REGISTRY

UPSTREAM_ORDER = [
    "calculate",
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "find_user_id_by_name_zip",
    "find_user_id_by_email",
    "get_order_details",
    "get_product_details",
    "get_item_details",
    "get_user_details",
    "list_all_product_types",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
    "transfer_to_human_agents",
]
WRITE_TOOLS = {
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
}

TSHIRT, MUG = "1000000001", "1000000002"
RED, BLUE, GREEN, BLACK, PINK = "2000000001", "2000000002", "2000000003", "2000000004", "2000000005"
SMALL, LARGE, HUGE, MINI = "3000000001", "3000000002", "3000000003", "3000000004"
ANA = "ana_lee_1234"
CARD, GIFT, PAYPAL, POOR_GIFT = "credit_card_1111111", "gift_card_2222222", "paypal_3333333", "gift_card_4444444"
BO_CARD = "credit_card_5555555"
ADDRESS = {
    "address1": "1 New Road",
    "address2": "Unit 2",
    "city": "Springfield",
    "state": "IL",
    "country": "USA",
    "zip": "62701",
}


# --------------------------------------------------------------------------- fixtures


def _variant(item_id: str, options: dict[str, str], price: float, available: bool = True) -> dict[str, Any]:
    return {"item_id": item_id, "options": options, "available": available, "price": price}


def _products() -> dict[str, Any]:
    shirts = [
        _variant(RED, {"color": "red", "size": "S"}, 10.0),
        _variant(BLUE, {"color": "blue", "size": "M"}, 12.5),
        _variant(GREEN, {"color": "green", "size": "L"}, 9.99, available=False),
        _variant(BLACK, {"color": "black", "size": "XL"}, 10.1),
        _variant(PINK, {"color": "pink", "size": "S"}, 10.0),
    ]
    mugs = [
        _variant(SMALL, {"capacity": "small"}, 20.0),
        _variant(LARGE, {"capacity": "large"}, 20.2),
        _variant(HUGE, {"capacity": "huge"}, 99.0),
        _variant(MINI, {"capacity": "mini"}, 15.55),
    ]
    return {
        TSHIRT: {"name": "T-Shirt", "product_id": TSHIRT, "variants": {v["item_id"]: v for v in shirts}},
        MUG: {"name": "Mug", "product_id": MUG, "variants": {v["item_id"]: v for v in mugs}},
    }


def _user(user_id: str, first: str, last: str, zip_code: str, methods: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "user_id": user_id,
        "name": {"first_name": first, "last_name": last},
        "address": {**ADDRESS, "address1": "5 Old Street", "zip": zip_code},
        "email": f"{first}.{last}@example.com",
        "payment_methods": {m["id"]: m for m in methods},
        "orders": [],
    }


def _users() -> dict[str, Any]:
    ana_methods = [
        {"source": "credit_card", "id": CARD, "brand": "visa", "last_four": "1111"},
        {"source": "gift_card", "id": GIFT, "balance": 30.0},
        {"source": "paypal", "id": PAYPAL},
        {"source": "gift_card", "id": POOR_GIFT, "balance": 1.0},
    ]
    bo_methods = [{"source": "credit_card", "id": BO_CARD, "brand": "amex", "last_four": "5555"}]
    return {
        ANA: _user(ANA, "Ana", "Lee", "80751", ana_methods),
        "ana_lee_9999": _user("ana_lee_9999", "Ana", "Lee", "80752", []),
        "bo_kim_5678": _user("bo_kim_5678", "Bo", "Kim", "10001", bo_methods),
    }


def _item(product_id: str, item_id: str) -> dict[str, Any]:
    variant = _products()[product_id]["variants"][item_id]
    name = "T-Shirt" if product_id == TSHIRT else "Mug"
    return {
        "name": name,
        "product_id": product_id,
        "item_id": item_id,
        "price": variant["price"],
        "options": dict(variant["options"]),
    }


def _order(order_id: str, status: str, items: list[dict[str, Any]], method: str) -> dict[str, Any]:
    amount = round(sum(item["price"] for item in items), 2)
    return complete_order(
        {
            "order_id": order_id,
            "user_id": ANA,
            "address": dict(ADDRESS, address1="5 Old Street"),
            "items": items,
            "status": status,
            "fulfillments": [],
            "payment_history": [{"transaction_type": "payment", "amount": amount, "payment_method_id": method}],
        }
    )


def small_db() -> dict[str, Any]:
    """Two products, three users, six orders of Ana's covering every status."""
    orders = [
        _order("#W0000001", "pending", [_item(TSHIRT, RED), _item(TSHIRT, RED), _item(MUG, SMALL)], CARD),
        _order("#W0000002", "pending", [_item(TSHIRT, BLUE)], GIFT),
        _order("#W0000003", "delivered", [_item(TSHIRT, RED), _item(MUG, SMALL), _item(TSHIRT, RED)], PAYPAL),
        _order("#W0000004", "processed", [_item(TSHIRT, RED)], CARD),
        _order("#W0000005", "pending (item modified)", [_item(TSHIRT, BLUE)], CARD),
        _order("#W0000006", "delivered", [_item(MUG, SMALL)], POOR_GIFT),
    ]
    db = {"products": _products(), "users": _users(), "orders": {o["order_id"]: o for o in orders}}
    db["users"][ANA]["orders"] = list(db["orders"])
    return db


def make_env(db: dict[str, Any] | None = None) -> Environment:
    state = {"db": small_db() if db is None else db}
    return Environment("agent", state, [cls(state) for cls in TOOL_CLASSES])


def ok(env: Environment, name: str, **arguments: Any) -> Any:
    """Call a tool that must succeed; JSON results come back parsed."""
    result = env.call(name, arguments)
    assert not result.error, result.content
    try:
        return json.loads(result.content)
    except json.JSONDecodeError:
        return result.content


def refused(env: Environment, name: str, **arguments: Any) -> str:
    """Call a tool that must refuse, check the DB did not change; the message without 'Error: '."""
    before = db_hash(env.db)
    result = env.call(name, arguments)
    assert result.error, result.content
    assert result.content.startswith("Error: ")
    assert db_hash(env.db) == before
    return result.content.removeprefix("Error: ")


@pytest.fixture
def env() -> Environment:
    return make_env()


def order(env: Environment, order_id: str) -> dict[str, Any]:
    return env.db["orders"][order_id]


def method(env: Environment, method_id: str, user_id: str = ANA) -> dict[str, Any]:
    return env.db["users"][user_id]["payment_methods"][method_id]


# --------------------------------------------------------------------------- tool classes


def test_tool_classes_follow_upstream_order_and_naming() -> None:
    assert [cls.name for cls in TOOL_CLASSES] == UPSTREAM_ORDER
    for cls in TOOL_CLASSES:
        camel = "".join(part.capitalize() for part in cls.name.split("_")) + "Tool"
        assert cls.__name__ == camel
        assert cls.namespace == "tau2_retail"
        assert issubclass(cls, RetailTool)
        assert resolve_tool("tau2_retail", cls.__name__) is cls
    assert ("tau2_retail", "RetailTool") not in TOOL_REGISTRY
    assert ACTION_NAME_TO_TOOL == {cls.name: cls for cls in TOOL_CLASSES}


def test_write_read_and_generic_flags() -> None:
    for cls in TOOL_CLASSES:
        if cls.name in WRITE_TOOLS:
            assert (cls.action_name, cls.mutates_state, cls.ends_conversation) == (cls.name, True, None)
        elif cls.name == "transfer_to_human_agents":
            assert (cls.action_name, cls.mutates_state, cls.ends_conversation) == (cls.name, False, "transfer")
        else:
            assert (cls.action_name, cls.mutates_state, cls.ends_conversation) == (None, False, None)


@pytest.mark.parametrize("cls", TOOL_CLASSES, ids=lambda cls: cls.name)
def test_schemas_are_strict_and_described(cls: type[Tool]) -> None:
    schema = cls.parameters
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == list(schema["properties"])
    for prop in schema["properties"].values():
        assert prop["type"] in ("string", "array") and prop["description"]
    assert cls.description
    assert cls.openai_schema()["function"]["name"] == cls.name


# --------------------------------------------------------------------------- read_db


def test_read_db_adds_missing_optional_order_keys_only(tmp_path: Path) -> None:
    raw = {"products": {}, "users": {}, "orders": {"#W1": {"order_id": "#W1", "cancel_reason": "ordered by mistake"}}}
    path = tmp_path / "db.json"
    path.write_text(json.dumps(raw))
    db = read_db(path)
    assert db["orders"]["#W1"]["cancel_reason"] == "ordered by mistake"
    assert all(key in db["orders"]["#W1"] for key in OPTIONAL_ORDER_KEYS)
    assert db["orders"]["#W1"]["return_items"] is None


# --------------------------------------------------------------------------- calculate


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("10/3", "3.33"),
        ("2**3", "8.0"),
        ("2 + 2", "4.0"),
        ("(1.5 + 2) * 2", "7.0"),
        ("0.125", "0.12"),
        ("100 - 0.005", "100.0"),
        ("1.005 * 1", "1.0"),
        ("-7/2", "-3.5"),
    ],
)
def test_calculate(env: Environment, expression: str, expected: str) -> None:
    assert env.call("calculate", {"expression": expression}).content == expected
    assert env.actions == []


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("1/0", "division by zero"),
        ("2 + a", "Invalid characters in expression"),
        ("__import__('os')", "Invalid characters in expression"),
        ("2,3", "Invalid characters in expression"),
    ],
)
def test_calculate_refusals(env: Environment, expression: str, message: str) -> None:
    assert refused(env, "calculate", expression=expression) == message


# --------------------------------------------------------------------------- cancel_pending_order


def test_cancel_refusals_in_order(env: Environment) -> None:
    assert refused(env, "cancel_pending_order", order_id="#W9999999", reason="x") == "Order not found"
    # status is checked before the reason
    assert refused(env, "cancel_pending_order", order_id="#W0000004", reason="x") == (
        "Non-pending order cannot be cancelled"
    )
    assert refused(env, "cancel_pending_order", order_id="#W0000005", reason="no longer needed") == (
        "Non-pending order cannot be cancelled"
    )
    assert refused(env, "cancel_pending_order", order_id="#W0000001", reason="changed my mind") == "Invalid reason"
    assert refused(env, "cancel_pending_order", order_id="#W0000001", reason="No longer needed") == "Invalid reason"
    assert env.actions == []


def test_cancel_credit_card(env: Environment) -> None:
    result = ok(env, "cancel_pending_order", order_id="#W0000001", reason="ordered by mistake")
    assert result["status"] == "cancelled"
    assert result["cancel_reason"] == "ordered by mistake"
    assert result["payment_history"][1] == {"transaction_type": "refund", "amount": 40.0, "payment_method_id": CARD}
    assert order(env, "#W0000001") == result
    assert env.actions == [
        {"name": "cancel_pending_order", "arguments": {"order_id": "#W0000001", "reason": "ordered by mistake"}}
    ]


def test_cancel_refunds_gift_card_at_once(env: Environment) -> None:
    ok(env, "cancel_pending_order", order_id="#W0000002", reason="no longer needed")
    assert method(env, GIFT)["balance"] == 42.5


def test_cancel_after_payment_change_refunds_three_entries(env: Environment) -> None:
    ok(env, "modify_pending_order_payment", order_id="#W0000002", payment_method_id=PAYPAL)
    assert order(env, "#W0000002")["status"] == "pending"
    assert method(env, GIFT)["balance"] == 42.5
    ok(env, "cancel_pending_order", order_id="#W0000002", reason="no longer needed")
    history = order(env, "#W0000002")["payment_history"]
    assert [(p["transaction_type"], p["payment_method_id"]) for p in history] == [
        ("payment", GIFT),
        ("payment", PAYPAL),
        ("refund", GIFT),
        ("refund", GIFT),
        ("refund", PAYPAL),
        ("refund", GIFT),
    ]
    # every entry, refunds included, is refunded again; the gift card gets two of them
    assert method(env, GIFT)["balance"] == 67.5


# --------------------------------------------------------------------------- exchange_delivered_order_items


def _exchange(env: Environment, old: list[str], new: list[str], pay: str = PAYPAL, order_id: str = "#W0000003") -> Any:
    return env.call(
        "exchange_delivered_order_items",
        {"order_id": order_id, "item_ids": old, "new_item_ids": new, "payment_method_id": pay},
    )


def test_exchange_refusals(env: Environment) -> None:
    cases = [
        ("#W9999999", [RED], [BLUE], PAYPAL, "Order not found"),
        ("#W0000001", [RED], [BLUE], CARD, "Non-delivered order cannot be exchanged"),
        ("#W0000003", [RED, RED, RED], [BLUE, BLUE, BLUE], PAYPAL, f"Number of {RED} not found."),
        ("#W0000003", [BLUE], [], PAYPAL, f"Number of {BLUE} not found."),  # before the length check
        ("#W0000003", [RED], [BLUE, BLUE], PAYPAL, "The number of items to be exchanged should match."),
        ("#W0000003", [RED], [SMALL], PAYPAL, "Variant not found"),
        ("#W0000003", [RED], [GREEN], PAYPAL, f"New item {GREEN} not found or available"),
        ("#W0000003", [RED], [BLUE], BO_CARD, "Payment method not found"),
        ("#W0000003", [SMALL], [HUGE], POOR_GIFT, "Insufficient gift card balance to pay for the price difference"),
    ]
    for order_id, old, new, pay, message in cases:
        result = _exchange(env, old, new, pay, order_id)
        assert result.content == f"Error: {message}", (order_id, old, new)
    assert env.actions == [] and env.tool_errors == len(cases)


def test_exchange_sorts_lists_independently_and_rounds(env: Environment) -> None:
    result = json.loads(_exchange(env, [SMALL, RED], [LARGE, BLACK]).content)
    assert result["status"] == "exchange requested"
    assert result["exchange_items"] == [RED, SMALL]
    assert result["exchange_new_items"] == [BLACK, LARGE]
    unrounded = (20.2 - 20.0) + (10.1 - 10.0)
    assert unrounded != 0.3 and result["exchange_price_difference"] == 0.3
    assert result["exchange_payment_method_id"] == PAYPAL
    assert len(result["payment_history"]) == 1  # nothing is charged yet
    assert result["items"][0]["item_id"] == RED  # items unchanged


def test_exchange_accepts_same_item_and_duplicates(env: Environment) -> None:
    result = json.loads(_exchange(env, [RED, RED], [RED, PINK]).content)
    assert result["exchange_items"] == [RED, RED]
    assert result["exchange_new_items"] == [RED, PINK]
    assert result["exchange_price_difference"] == 0.0


def test_exchange_gift_card_not_debited_and_empty_lists_keep_int_zero(env: Environment) -> None:
    ok(
        env,
        "exchange_delivered_order_items",
        order_id="#W0000003",
        item_ids=[RED],
        new_item_ids=[BLUE],
        payment_method_id=GIFT,
    )
    assert method(env, GIFT)["balance"] == 30.0
    assert order(env, "#W0000003")["exchange_price_difference"] == 2.5
    env = make_env()
    ok(
        env,
        "exchange_delivered_order_items",
        order_id="#W0000006",
        item_ids=[],
        new_item_ids=[],
        payment_method_id=POOR_GIFT,
    )
    difference = order(env, "#W0000006")["exchange_price_difference"]
    assert difference == 0 and type(difference) is int


def test_exchange_to_cheaper_item_passes_a_poor_gift_card(env: Environment) -> None:
    result = json.loads(_exchange(env, [SMALL], [MINI], POOR_GIFT, "#W0000006").content)
    assert 15.55 - 20.0 != -4.45 and result["exchange_price_difference"] == -4.45
    assert method(env, POOR_GIFT)["balance"] == 1.0


# --------------------------------------------------------------------------- find_user_id_*


def test_find_user_id_by_name_zip(env: Environment) -> None:
    assert ok(env, "find_user_id_by_name_zip", first_name="ANA", last_name="lee", zip="80751") == ANA
    assert ok(env, "find_user_id_by_name_zip", first_name="Ana", last_name="Lee", zip="80752") == "ana_lee_9999"
    for zip_code in ("8075", "80751 ", "80 751"):
        assert refused(env, "find_user_id_by_name_zip", first_name="Ana", last_name="Lee", zip=zip_code) == (
            "User not found"
        )
    assert refused(env, "find_user_id_by_name_zip", first_name="Anna", last_name="Lee", zip="80751") == (
        "User not found"
    )
    assert env.actions == []


def test_find_user_id_by_email(env: Environment) -> None:
    assert ok(env, "find_user_id_by_email", email="Bo.Kim@example.com") == "bo_kim_5678"
    assert ok(env, "find_user_id_by_email", email="bo.kim@EXAMPLE.com") == "bo_kim_5678"
    assert refused(env, "find_user_id_by_email", email="bo.kim@example.org") == "User not found"


# --------------------------------------------------------------------------- get_* and list


def test_get_order_details_shows_null_optional_fields(env: Environment) -> None:
    result = ok(env, "get_order_details", order_id="#W0000003")
    assert [key for key in OPTIONAL_ORDER_KEYS if result[key] is not None] == []
    assert refused(env, "get_order_details", order_id="#W0000000") == "Order not found"
    assert env.actions == []


def test_get_product_and_item_details(env: Environment) -> None:
    product = ok(env, "get_product_details", product_id=TSHIRT)
    assert GREEN in product["variants"] and product["variants"][GREEN]["available"] is False
    assert refused(env, "get_product_details", product_id=RED) == "Product not found"
    assert ok(env, "get_item_details", item_id=LARGE) == _variant(LARGE, {"capacity": "large"}, 20.2)
    assert ok(env, "get_item_details", item_id=GREEN)["available"] is False
    assert refused(env, "get_item_details", item_id=MUG) == "Item not found"
    assert refused(env, "get_item_details", item_id="2000000009") == "Item not found"


def test_get_user_details(env: Environment) -> None:
    assert ok(env, "get_user_details", user_id=ANA)["payment_methods"][GIFT]["balance"] == 30.0
    assert refused(env, "get_user_details", user_id="ana_lee_0000") == "User not found"


def test_list_all_product_types_is_a_sorted_json_string(env: Environment) -> None:
    result = env.call("list_all_product_types", {})
    assert result.content == '{"Mug": "1000000002", "T-Shirt": "1000000001"}'


# --------------------------------------------------------------------------- modify_pending_order_address


def test_modify_order_address(env: Environment) -> None:
    for order_id in ("#W0000001", "#W0000005"):  # "pending (item modified)" passes
        result = ok(env, "modify_pending_order_address", order_id=order_id, **ADDRESS)
        assert result["address"] == ADDRESS
        assert list(order(env, order_id)["address"]) == ["address1", "address2", "city", "country", "state", "zip"]
    assert refused(env, "modify_pending_order_address", order_id="#W0000003", **ADDRESS) == (
        "Non-pending order cannot be modified"
    )
    assert refused(env, "modify_pending_order_address", order_id="#W1234", **ADDRESS) == "Order not found"
    assert [a["name"] for a in env.actions] == ["modify_pending_order_address"] * 2


# --------------------------------------------------------------------------- modify_pending_order_items


def _modify(env: Environment, old: list[str], new: list[str], pay: str = CARD, order_id: str = "#W0000001") -> Any:
    return env.call(
        "modify_pending_order_items",
        {"order_id": order_id, "item_ids": old, "new_item_ids": new, "payment_method_id": pay},
    )


def test_modify_items_refusals(env: Environment) -> None:
    cases = [
        ("#W9999999", [RED], [BLUE], CARD, "Order not found"),
        ("#W0000005", [BLUE], [RED], CARD, "Non-pending order cannot be modified"),
        ("#W0000003", [RED], [BLUE], CARD, "Non-pending order cannot be modified"),
        ("#W0000001", [RED, RED, RED], [BLUE, BLUE, BLUE], CARD, f"{RED} not found"),
        ("#W0000001", [BLUE], [], CARD, f"{BLUE} not found"),
        ("#W0000001", [RED], [BLUE, BLUE], CARD, "The number of items to be exchanged should match"),
        ("#W0000001", [RED, SMALL], [BLUE, SMALL], CARD, "The new item id should be different from the old item id"),
        ("#W0000001", [RED], [SMALL], CARD, "Variant not found"),
        ("#W0000001", [RED], [GREEN], CARD, f"New item {GREEN} not found or available"),
        ("#W0000001", [RED], [BLUE], BO_CARD, "Payment method not found"),
        ("#W0000001", [RED], [BLUE], POOR_GIFT, "Insufficient gift card balance to pay for the new item"),
    ]
    for order_id, old, new, pay, message in cases:
        assert _modify(env, old, new, pay, order_id).content == f"Error: {message}", (order_id, old, new)
    assert env.actions == []


def test_modify_items_unrounded_payment_and_status(env: Environment) -> None:
    result = json.loads(_modify(env, [RED], [BLACK]).content)
    difference = 10.1 - 10.0
    assert difference != 0.1
    assert result["payment_history"][-1] == {
        "transaction_type": "payment",
        "amount": difference,
        "payment_method_id": CARD,
    }
    assert result["status"] == "pending (item modified)"
    assert [item["item_id"] for item in result["items"]] == [BLACK, RED, SMALL]  # first matching item only
    assert result["items"][0]["options"] == {"color": "black", "size": "XL"}


def test_modify_items_last_variant_quirk(env: Environment) -> None:
    result = json.loads(_modify(env, [RED, SMALL], [BLUE, LARGE]).content)
    items = result["items"]
    assert [item["item_id"] for item in items] == [BLUE, RED, LARGE]
    # both modified items carry the last new variant's price and options (upstream quirk)
    assert items[0]["price"] == items[2]["price"] == 20.2
    assert items[0]["options"] == items[2]["options"] == {"capacity": "large"}
    assert items[1]["price"] == 10.0
    assert result["payment_history"][-1]["amount"] == (12.5 - 10.0) + (20.2 - 20.0)


def test_modify_items_duplicates_rewrite_successive_items(env: Environment) -> None:
    result = json.loads(_modify(env, [RED, RED], [BLUE, BLACK]).content)
    assert [item["item_id"] for item in result["items"]] == [BLUE, BLACK, SMALL]
    assert result["items"][0]["price"] == result["items"][1]["price"] == 10.1


def test_modify_items_same_price_records_zero_refund(env: Environment) -> None:
    result = json.loads(_modify(env, [RED], [PINK]).content)
    last = result["payment_history"][-1]
    assert last == {"transaction_type": "refund", "amount": 0.0, "payment_method_id": CARD}
    assert type(order(env, "#W0000001")["payment_history"][-1]["amount"]) is float


def test_modify_items_gift_card_balances(env: Environment) -> None:
    # paid by gift card, cheaper item: refund credited, balance rounded
    ok(
        env,
        "modify_pending_order_items",
        order_id="#W0000002",
        item_ids=[BLUE],
        new_item_ids=[BLACK],
        payment_method_id=GIFT,
    )
    assert order(env, "#W0000002")["payment_history"][-1]["transaction_type"] == "refund"
    assert order(env, "#W0000002")["payment_history"][-1]["amount"] == abs(10.1 - 12.5)
    assert method(env, GIFT)["balance"] == round(30.0 - (10.1 - 12.5), 2) == 32.4
    env = make_env()
    ok(
        env,
        "modify_pending_order_items",
        order_id="#W0000001",
        item_ids=[SMALL],
        new_item_ids=[LARGE],
        payment_method_id=GIFT,
    )
    assert method(env, GIFT)["balance"] == 29.8


def test_item_modified_order_blocks_cancel_items_and_payment_but_not_address(env: Environment) -> None:
    ok(
        env,
        "modify_pending_order_items",
        order_id="#W0000001",
        item_ids=[RED],
        new_item_ids=[BLUE],
        payment_method_id=CARD,
    )
    assert refused(env, "cancel_pending_order", order_id="#W0000001", reason="no longer needed") == (
        "Non-pending order cannot be cancelled"
    )
    assert _modify(env, [RED], [BLUE]).content == "Error: Non-pending order cannot be modified"
    assert refused(env, "modify_pending_order_payment", order_id="#W0000001", payment_method_id=PAYPAL) == (
        "There should be exactly one payment for a pending order"
    )
    # the payment method is looked up before the history is checked
    assert refused(env, "modify_pending_order_payment", order_id="#W0000001", payment_method_id=BO_CARD) == (
        "Payment method not found"
    )
    ok(env, "modify_pending_order_address", order_id="#W0000001", **ADDRESS)


# --------------------------------------------------------------------------- modify_pending_order_payment


def test_modify_payment_refusals(env: Environment) -> None:
    def call(order_id: str, pay: str) -> str:
        return refused(env, "modify_pending_order_payment", order_id=order_id, payment_method_id=pay)

    assert call("#W9999999", PAYPAL) == "Order not found"
    assert call("#W0000004", PAYPAL) == "Non-pending order cannot be modified"
    assert call("#W0000001", BO_CARD) == "Payment method not found"
    assert call("#W0000001", CARD) == "The new payment method should be different from the current one"
    assert call("#W0000001", GIFT) == "Insufficient gift card balance to pay for the order"


def test_modify_payment_moves_the_amount(env: Environment) -> None:
    result = ok(env, "modify_pending_order_payment", order_id="#W0000002", payment_method_id=CARD)
    assert result["payment_history"][1:] == [
        {"transaction_type": "payment", "amount": 12.5, "payment_method_id": CARD},
        {"transaction_type": "refund", "amount": 12.5, "payment_method_id": GIFT},
    ]
    assert result["status"] == "pending"
    assert method(env, GIFT)["balance"] == 42.5
    env = make_env()
    ok(env, "modify_pending_order_payment", order_id="#W0000005", payment_method_id=GIFT)
    assert method(env, GIFT)["balance"] == 17.5
    assert order(env, "#W0000005")["status"] == "pending (item modified)"


# --------------------------------------------------------------------------- modify_user_address


def test_modify_user_address(env: Environment) -> None:
    result = ok(env, "modify_user_address", user_id="bo_kim_5678", **ADDRESS)
    assert result["address"] == ADDRESS and result["user_id"] == "bo_kim_5678"
    assert refused(env, "modify_user_address", user_id="bo_kim_0000", **ADDRESS) == "User not found"
    assert env.actions == [{"name": "modify_user_address", "arguments": {"user_id": "bo_kim_5678", **ADDRESS}}]


# --------------------------------------------------------------------------- return_delivered_order_items


def test_return_refusals(env: Environment) -> None:
    def call(order_id: str, items: list[str], pay: str) -> str:
        return refused(env, "return_delivered_order_items", order_id=order_id, item_ids=items, payment_method_id=pay)

    assert call("#W9999999", [RED], PAYPAL) == "Order not found"
    assert call("#W0000001", [RED], CARD) == "Non-delivered order cannot be returned"
    assert call("#W0000003", [BLUE], BO_CARD) == "Payment method not found"  # method before items
    assert call("#W0000003", [BLUE], CARD) == "Payment method should be the original payment method"
    assert call("#W0000003", [RED, RED, RED], PAYPAL) == "Some item not found"
    assert call("#W0000003", [BLUE], PAYPAL) == "Some item not found"


def test_return_effects(env: Environment) -> None:
    result = ok(
        env, "return_delivered_order_items", order_id="#W0000003", item_ids=[SMALL, RED, RED], payment_method_id=PAYPAL
    )
    assert result["status"] == "return requested"
    assert result["return_items"] == [RED, RED, SMALL]
    assert result["return_payment_method_id"] == PAYPAL
    assert len(result["payment_history"]) == 1


def test_return_to_any_gift_card_and_empty_list(env: Environment) -> None:
    ok(env, "return_delivered_order_items", order_id="#W0000003", item_ids=[RED], payment_method_id=GIFT)
    assert method(env, GIFT)["balance"] == 30.0  # no refund booked yet
    ok(env, "return_delivered_order_items", order_id="#W0000006", item_ids=[], payment_method_id=POOR_GIFT)
    assert order(env, "#W0000006")["return_items"] == []


# --------------------------------------------------------------------------- transfer_to_human_agents


def test_transfer(env: Environment) -> None:
    before = db_hash(env.db)
    result = env.call("transfer_to_human_agents", {"summary": "wants a refund to a new card"})
    assert (result.content, result.error, result.ends_conversation) == ("Transfer successful", False, "transfer")
    assert env.actions == [
        {"name": "transfer_to_human_agents", "arguments": {"summary": "wants a refund to a new card"}}
    ]
    assert db_hash(env.db) == before


def test_arguments_may_arrive_as_json_text(env: Environment) -> None:
    result = env.call("get_item_details", json.dumps({"item_id": RED}))
    assert json.loads(result.content)["price"] == 10.0
    assert env.call("get_item_details", "{not json").content.startswith("Error: arguments for 'get_item_details'")


# --------------------------------------------------------------------------- the real DB


DATA_DIR = Path(os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2-data"))
RETAIL_DB = DATA_DIR / "tau2/domains/retail/db.json"


@pytest.fixture(scope="module")
def real_db() -> dict[str, Any]:
    if not RETAIL_DB.is_file():
        pytest.skip(f"no tau2 data at {DATA_DIR}")
    return read_db(RETAIL_DB)


def test_real_db_lists_50_product_types(real_db: dict[str, Any]) -> None:
    env = make_env(copy_db(real_db))
    types = json.loads(env.call("list_all_product_types", {}).content)
    assert len(types) == 50 and list(types) == sorted(types)


def test_real_db_unrounded_item_modify_amount(real_db: dict[str, Any]) -> None:
    """A real order whose item change leaves float noise in the recorded amount."""
    env = make_env(copy_db(real_db))
    noisy = _find_noisy_modification(env.db)
    assert noisy is not None
    order_id, old, new, pay, difference = noisy
    ok(env, "modify_pending_order_items", order_id=order_id, item_ids=[old], new_item_ids=[new], payment_method_id=pay)
    recorded = env.db["orders"][order_id]["payment_history"][-1]["amount"]
    assert recorded == abs(difference) and recorded != round(recorded, 2)


def _find_noisy_modification(db: dict[str, Any]) -> tuple[str, str, str, str, float] | None:
    for order_id, record in db["orders"].items():
        if record["status"] != "pending":
            continue
        pay = record["payment_history"][0]["payment_method_id"]
        if pay.startswith("gift_card"):
            continue
        for item in record["items"]:
            for new_id, variant in db["products"][item["product_id"]]["variants"].items():
                difference = variant["price"] - item["price"]
                if new_id != item["item_id"] and variant["available"] and abs(difference) != round(abs(difference), 2):
                    return order_id, item["item_id"], new_id, pay, difference
    return None
