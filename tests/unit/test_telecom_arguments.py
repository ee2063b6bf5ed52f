"""Telecom tool arguments taken the way upstream takes them.

Upstream checks no argument at call time, and its telecom agent tools build no pydantic model
from one: every value is compared, sliced, multiplied or added as given. Each case below was
run against upstream's code at the pin (``src/tau2/domains/telecom/tools.py``): where it
accepts a value we accept it and write the same DB, where it refuses we refuse with the same
message and the DB is untouched. On the phone, the app tools take names as upstream does,
``set_apn_settings`` converts through a pydantic model where upstream builds one, and a
non-string mode or non-object APN value stays refused (docs/tau2-telecom.md, "Tool arguments").
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from pytest_tau2.domains.tau2_telecom import AGENT_TOOL_CLASSES
from pytest_tau2.domains.tau2_telecom.db import default_apn_settings
from pytest_tau2.environment.db import copy_db, db_hash
from pytest_tau2.environment.env import Environment
from tests.unit.test_telecom_tools import World, err, ok, originals, world

__all__ = ["originals", "world"]  # the fixtures, re-used from the tool tests


def refused(world: World, name: str, **arguments: Any) -> str:
    """The error text of a refused call, after checking it changed nothing."""
    before = db_hash(world.db)
    text = err(world.agent(name, **arguments))
    assert db_hash(world.db) == before and world.agent_env.actions == []
    return text


def db_after(originals: tuple[dict[str, Any], dict[str, Any]], name: str, **arguments: Any) -> str:
    """The carrier DB's hash after one successful call on a fresh copy."""
    db = copy_db(originals[0])
    env = Environment("agent", {"db": db}, [cls({"db": db}) for cls in AGENT_TOOL_CLASSES])
    ok(env.call(name, arguments))
    return db_hash(db)


# --- accepted as given ---------------------------------------------------------------------


@pytest.mark.parametrize("reason", [5, None, ["moving"], {"why": "travel"}])
def test_suspend_line_takes_a_reason_of_any_type(world: World, reason: Any) -> None:
    ok(world.agent("suspend_line", customer_id="C1001", line_id="L1001", reason=reason))
    line = world.line("L1001")
    assert line["status"] == "Suspended" and line["suspension_start_date"] == dt.date(2025, 2, 25)
    assert world.agent_env.actions[-1]["arguments"]["reason"] == reason  # recorded as given


def test_suspend_line_with_a_number_reason_writes_what_a_text_reason_writes(originals: Any) -> None:
    assert db_after(originals, "suspend_line", customer_id="C1001", line_id="L1001", reason=5) == db_after(
        originals, "suspend_line", customer_id="C1001", line_id="L1001", reason="travelling"
    )


@pytest.mark.parametrize("summary", [None, 42, {"issue": "no data"}, ["a", "b"]])
def test_transfer_takes_a_summary_of_any_type(world: World, summary: Any) -> None:
    result = world.agent("transfer_to_human_agents", summary=summary)
    assert ok(result) == "Transfer successful" and result.ends_conversation == "transfer"


def test_refuel_true_counts_as_one_gigabyte_shown_as_true(world: World) -> None:
    text = ok(world.agent("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=True))
    assert json.loads(text) == {
        "message": "Successfully added True GB of data for line L1002 for $2.00",
        "new_data_refueling_gb": "1.0",
        "charge": "2.0",
    }
    line, bill = world.line("L1002"), world.bill("B1003")
    assert line["data_refueling_gb"] == 1.0 and isinstance(line["data_refueling_gb"], float)
    assert bill["total_due"] == 2.0 and isinstance(bill["total_due"], float)
    assert bill["line_items"][-1] == {
        "description": "Data refueling: True GB at $2.0/GB",
        "amount": 2.0,
        "date": dt.date(2025, 2, 25),
        "item_type": "Charge",
    }


@pytest.mark.parametrize(("limit", "expected"), [(None, ["B1003", "B1002", "B1001"]), (True, ["B1003"]), (False, [])])
def test_bills_limit_is_used_as_a_slice_bound(world: World, limit: Any, expected: list[str]) -> None:
    bills = json.loads(ok(world.agent("get_bills_for_customer", customer_id="C1001", limit=limit)))
    assert [bill["bill_id"] for bill in bills] == expected


@pytest.mark.parametrize("dob", [19850615, None, ["1985-06-15"]])
def test_name_search_with_a_non_text_dob_finds_no_one(world: World, dob: Any) -> None:
    assert ok(world.agent("get_customer_by_name", full_name="John Smith", dob=dob)) == "[]"


# --- refused as upstream refuses ---------------------------------------------------------


@pytest.mark.parametrize(
    ("gb_amount", "message"),
    [
        (False, "Refuel amount must be positive"),
        (None, "'<=' not supported between instances of 'NoneType' and 'int'"),
        ("2", "'<=' not supported between instances of 'str' and 'int'"),
        ([2], "'<=' not supported between instances of 'list' and 'int'"),
    ],
)
def test_refuel_amounts_upstream_refuses(world: World, gb_amount: Any, message: str) -> None:
    text = refused(world, "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=gb_amount)
    assert text == f"Error: {message}"


@pytest.mark.parametrize("limit", [1.0, "2", [1]])
def test_bills_limit_that_is_no_slice_bound_is_refused(world: World, limit: Any) -> None:
    assert refused(world, "get_bills_for_customer", customer_id="C1001", limit=limit) == (
        "Error: slice indices must be integers or None or have an __index__ method"
    )


def test_name_search_with_a_non_text_name_is_refused(world: World) -> None:
    assert refused(world, "get_customer_by_name", full_name=5, dob="1985-06-15") == (
        "Error: 'int' object has no attribute 'lower'"
    )


def test_phone_search_with_a_number_is_refused(world: World) -> None:
    # the digits would match 555-123-2002, but upstream compares the number to stored strings
    assert refused(world, "get_customer_by_phone", phone_number=5551232002) == (
        "Error: Customer with phone number 5551232002 not found"
    )


@pytest.mark.parametrize(("value", "kind"), [(1001, "int"), (["L1001"], "list"), (None, "NoneType")])
def test_details_by_a_non_text_id_is_refused(world: World, value: Any, kind: str) -> None:
    assert refused(world, "get_details_by_id", id=value) == f"Error: '{kind}' object has no attribute 'startswith'"


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("get_customer_by_id", {"customer_id": 1001}, "Customer with ID 1001 not found"),
        ("enable_roaming", {"customer_id": ["C1001"], "line_id": "L1001"}, "Customer with ID ['C1001'] not found"),
        ("resume_line", {"customer_id": "C1001", "line_id": ["L1001"]}, "Line ['L1001'] not found for customer C1001"),
        ("send_payment_request", {"customer_id": "C1001", "bill_id": 1002}, "Bill 1002 not found for customer C1001"),
    ],
)
def test_non_text_ids_find_nothing(world: World, name: str, arguments: dict[str, Any], message: str) -> None:
    assert refused(world, name, **arguments) == f"Error: {message}"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"customer_id": "C1001", "line_id": "L1001"}, "suspend_line() missing 1 required argument: 'reason'"),
        (
            {"customer_id": "C1001", "line_id": "L1001", "reason": "x", "notify": True},
            "suspend_line() got an unexpected keyword argument 'notify'",
        ),
    ],
)
def test_argument_names_are_still_checked(world: World, arguments: dict[str, Any], message: str) -> None:
    assert refused(world, "suspend_line", **arguments) == f"Error: {message}"


# --- the phone's app tools (upstream looks the app name up in a dict as given) --------------


def user_refused(world: World, name: str, **arguments: Any) -> str:
    """The error text of a refused phone tool call, after checking it changed nothing."""
    before = db_hash(world.user_db)
    text = err(world.user(name, **arguments))
    assert db_hash(world.user_db) == before and world.user_env.actions == []
    return text


@pytest.mark.parametrize(("app_name", "shown"), [(5, "5"), (None, "None"), (True, "True")])
@pytest.mark.parametrize("name", ["check_app_status", "check_app_permissions"])
def test_app_name_of_another_type_finds_no_app(world: World, name: str, app_name: Any, shown: str) -> None:
    assert ok(world.user(name, app_name=app_name)) == f"App '{shown}' not found on this phone."


def test_grant_to_an_app_name_of_another_type_finds_no_app(world: World) -> None:
    before = db_hash(world.user_db)
    text = ok(world.user("grant_app_permission", app_name=True, permission="sms"))
    assert text.startswith("Error. App 'True' not found. Cannot grant permission.\nStatus Bar: ")
    assert db_hash(world.user_db) == before


@pytest.mark.parametrize(("app_name", "kind"), [(["messaging"], "list"), ({"name": "messaging"}, "dict")])
@pytest.mark.parametrize("name", ["check_app_status", "check_app_permissions"])
def test_app_name_list_or_object_is_refused(world: World, name: str, app_name: Any, kind: str) -> None:
    assert user_refused(world, name, app_name=app_name) == f"Error: unhashable type: '{kind}'"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"app_name": "messaging", "permission": 5}, "'int' object has no attribute 'lower'"),
        ({"app_name": 7, "permission": None}, "'NoneType' object has no attribute 'lower'"),
        ({"app_name": ["x"], "permission": 5}, "unhashable type: 'list'"),  # the name is looked up first
    ],
)
def test_grant_refusals(world: World, arguments: dict[str, Any], message: str) -> None:
    assert user_refused(world, "grant_app_permission", **arguments) == f"Error: {message}"


# --- set_apn_settings: upstream builds its APN model from the object (pydantic, lax mode) -----


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ({"reset_at_reboot": "true"}, {"reset_at_reboot": True}),
        ({"mms_port": "8080"}, {"mms_port": 8080}),
        ({"mms_port": 8080.0}, {"mms_port": 8080}),
        ({"apn_name": "broken", "mmsc_url": None}, {"apn_name": "broken", "mmsc_url": None}),
    ],
)
def test_apn_settings_are_converted_as_upstream_converts_them(
    world: World, given: dict[str, Any], stored: dict[str, Any]
) -> None:
    ok(world.user("set_apn_settings", apn_settings=given))
    assert world.device["active_apn_settings"] == {**default_apn_settings(), **stored}
    assert list(world.device["active_apn_settings"]) == list(default_apn_settings())  # field order kept


@pytest.mark.parametrize(
    ("given", "field", "problem"),
    [
        ({"apn_name": 5}, "apn_name", "Input should be 'internet' or 'broken'"),
        ({"mmsc_url": 5}, "mmsc_url", "Input should be a valid string"),
        ({"mms_port": 80.5}, "mms_port", "Input should be a valid integer, got a number with a fractional part"),
        ({"apn_name": "internet", "x": 1}, "x", "Extra inputs are not permitted"),
    ],
)
def test_apn_settings_upstream_refuses(world: World, given: dict[str, Any], field: str, problem: str) -> None:
    text = user_refused(world, "set_apn_settings", apn_settings=given)
    assert text.startswith(f"Error: 1 validation error for APNSettings\n{field}\n  {problem}")


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("set_network_mode_preference", {"mode": 5}),  # upstream writes 5 into the phone DB, then fails
        ("set_apn_settings", {"apn_settings": "internet"}),  # upstream stores the string, then fails
    ],
)
def test_phone_settings_keep_the_schema_check(world: World, name: str, arguments: dict[str, Any]) -> None:
    assert user_refused(world, name, **arguments).startswith(f"Error: invalid arguments for '{name}': ")
