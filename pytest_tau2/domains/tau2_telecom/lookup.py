"""Finding records in the carrier DB dict (read-only; shared by tools, functions, sync, predicates).

Ids are matched the tolerant way (:mod:`pytest_tau2.environment.ids`): ``l1002`` and
``L-1002`` find ``L1002``. Phone numbers compare by their digits only, so ``555 123 2002``
and ``(555) 123-2002`` find ``555-123-2002``. Failure messages are upstream's, echoing the
id as the caller spelled it.
"""

from __future__ import annotations

from typing import Any

from pytest_tau2.environment.ids import find_key, id_key
from pytest_tau2.errors import ToolError

Record = dict[str, Any]


def _find(records: list[Record], field: str, wanted: Any) -> Record | None:
    if not isinstance(wanted, str):
        return None
    for record in records:
        if record[field] == wanted:
            return record
    target = id_key(wanted)
    if not target:
        return None
    for record in records:
        if id_key(record[field]) == target:
            return record
    return None


def find_customer(db: Record, customer_id: str) -> Record:
    customer = _find(db["customers"], "customer_id", customer_id)
    if customer is None:
        raise ToolError(f"Customer with ID {customer_id} not found")
    return customer


def find_line(db: Record, line_id: str) -> Record:
    line = _find(db["lines"], "line_id", line_id)
    if line is None:
        raise ToolError(f"Line with ID {line_id} not found")
    return line


def find_plan(db: Record, plan_id: str) -> Record:
    plan = _find(db["plans"], "plan_id", plan_id)
    if plan is None:
        raise ToolError(f"Plan with ID {plan_id} not found")
    return plan


def find_device(db: Record, device_id: str) -> Record:
    device = _find(db["devices"], "device_id", device_id)
    if device is None:
        raise ToolError(f"Device with ID {device_id} not found")
    return device


def find_bill(db: Record, bill_id: str) -> Record:
    bill = _find(db["bills"], "bill_id", bill_id)
    if bill is None:
        raise ToolError(f"Bill with ID {bill_id} not found")
    return bill


def stored_id(ids: list[str], wanted: Any) -> str | None:
    """The spelling in ``ids`` of the id ``wanted`` names, or None."""
    if not isinstance(wanted, str):
        return None
    return find_key(dict.fromkeys(ids), wanted)


def target_line(db: Record, customer_id: str, line_id: str) -> Record:
    """The line ``line_id`` of customer ``customer_id`` (it must be one of the customer's lines)."""
    customer = find_customer(db, customer_id)
    stored = stored_id(customer["line_ids"], line_id)
    if stored is None:
        raise ToolError(f"Line {line_id} not found for customer {customer_id}")
    return find_line(db, stored)


def phone_digits(phone_number: Any) -> str:
    return "".join(ch for ch in str(phone_number) if ch.isdigit())


def line_by_phone(db: Record, phone_number: str) -> Record:
    wanted = phone_digits(phone_number)
    line: Record
    for line in db["lines"]:
        if wanted and phone_digits(line["phone_number"]) == wanted:
            return line
    raise ToolError(f"Line with phone number {phone_number} not found")


def customer_by_phone(db: Record, phone_number: str) -> Record:
    """The first customer whose contact number, or one of whose lines' numbers, matches."""
    wanted = phone_digits(phone_number)
    if wanted:
        lines: dict[str, Record] = {line["line_id"]: line for line in db["lines"]}
        customer: Record
        for customer in db["customers"]:
            if phone_digits(customer["phone_number"]) == wanted:
                return customer
            for line_id in customer["line_ids"]:
                line = lines.get(line_id)
                if line is not None and phone_digits(line["phone_number"]) == wanted:
                    return customer
    raise ToolError(f"Customer with phone number {phone_number} not found")


def bills_awaiting_payment(db: Record, customer: Record) -> list[Record]:
    """The customer's bills in status "Awaiting Payment", in the order of ``bill_ids``."""
    return [bill for bill in (find_bill(db, b) for b in customer["bill_ids"]) if bill["status"] == "Awaiting Payment"]
