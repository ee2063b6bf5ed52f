"""Finding records in the carrier DB dict (read-only; shared by tools, functions, sync, predicates).

Ids are matched the tolerant way (:mod:`pytest_tau2.environment.ids`): ``l1002`` and
``L-1002`` find ``L1002``. Phone numbers compare by their digits only, so ``555 123 2002``
and ``(555) 123-2002`` find ``555-123-2002``. Failure messages are upstream's, echoing the
id as the caller spelled it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar, cast

from pytest_tau2.domains.tau2_telecom.records import Bill, Customer, Device, Line, Plan, TelecomDB
from pytest_tau2.environment.ids import find_key, id_key
from pytest_tau2.environment.jsontypes import JSONValue
from pytest_tau2.errors import ToolError

_R = TypeVar("_R", bound=Mapping[str, object])


def _find(records: list[_R], field: str, wanted: JSONValue) -> _R | None:
    """The record whose ``field`` (an id, always a str) ``wanted`` names, exact spelling first."""
    if not isinstance(wanted, str):
        return None
    for record in records:
        if record[field] == wanted:
            return record
    target = id_key(wanted)
    if not target:
        return None
    for record in records:
        if id_key(cast(str, record[field])) == target:
            return record
    return None


def find_customer(db: TelecomDB, customer_id: JSONValue) -> Customer:
    customer = _find(db["customers"], "customer_id", customer_id)
    if customer is None:
        raise ToolError(f"Customer with ID {customer_id} not found")
    return customer


def find_line(db: TelecomDB, line_id: JSONValue) -> Line:
    line = _find(db["lines"], "line_id", line_id)
    if line is None:
        raise ToolError(f"Line with ID {line_id} not found")
    return line


def find_plan(db: TelecomDB, plan_id: JSONValue) -> Plan:
    plan = _find(db["plans"], "plan_id", plan_id)
    if plan is None:
        raise ToolError(f"Plan with ID {plan_id} not found")
    return plan


def find_device(db: TelecomDB, device_id: JSONValue) -> Device:
    device = _find(db["devices"], "device_id", device_id)
    if device is None:
        raise ToolError(f"Device with ID {device_id} not found")
    return device


def find_bill(db: TelecomDB, bill_id: JSONValue) -> Bill:
    bill = _find(db["bills"], "bill_id", bill_id)
    if bill is None:
        raise ToolError(f"Bill with ID {bill_id} not found")
    return bill


def stored_id(ids: list[str], wanted: JSONValue) -> str | None:
    """The spelling in ``ids`` of the id ``wanted`` names, or None."""
    if not isinstance(wanted, str):
        return None
    return find_key(dict.fromkeys(ids), wanted)


def target_line(db: TelecomDB, customer_id: JSONValue, line_id: JSONValue) -> Line:
    """The line ``line_id`` of customer ``customer_id`` (it must be one of the customer's lines)."""
    customer = find_customer(db, customer_id)
    stored = stored_id(customer["line_ids"], line_id)
    if stored is None:
        raise ToolError(f"Line {line_id} not found for customer {customer_id}")
    return find_line(db, stored)


def phone_digits(phone_number: object) -> str:
    return "".join(ch for ch in str(phone_number) if ch.isdigit())


def line_by_phone(db: TelecomDB, phone_number: str) -> Line:
    wanted = phone_digits(phone_number)
    for line in db["lines"]:
        if wanted and phone_digits(line["phone_number"]) == wanted:
            return line
    raise ToolError(f"Line with phone number {phone_number} not found")


def customer_by_phone(db: TelecomDB, phone_number: str) -> Customer:
    """The first customer whose contact number, or one of whose lines' numbers, matches."""
    wanted = phone_digits(phone_number)
    if wanted:
        lines = {line["line_id"]: line for line in db["lines"]}
        for customer in db["customers"]:
            if phone_digits(customer["phone_number"]) == wanted:
                return customer
            for line_id in customer["line_ids"]:
                line = lines.get(line_id)
                if line is not None and phone_digits(line["phone_number"]) == wanted:
                    return customer
    raise ToolError(f"Customer with phone number {phone_number} not found")


def bills_awaiting_payment(db: TelecomDB, customer: Customer) -> list[Bill]:
    """The customer's bills in status "Awaiting Payment", in the order of ``bill_ids``."""
    return [bill for bill in (find_bill(db, b) for b in customer["bill_ids"]) if bill["status"] == "Awaiting Payment"]
