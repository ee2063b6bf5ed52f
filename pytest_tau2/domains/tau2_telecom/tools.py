"""The carrier's tools: what the agent can look up and change (13, upstream's order).

Each tool works on the carrier DB dict (``self.db``). Results are the DB records themselves
(dates print as ``2025-02-25``, datetimes as ``2025-01-20 14:30:00``, like upstream's model
dumps) or upstream's texts; where upstream returns a plain dict of numbers, the numbers are
strings (upstream's serialiser stringifies bare numbers outside models). Refusals raise
:class:`~pytest_tau2.errors.ToolError` with upstream's message.

Arguments are taken as upstream takes them (:class:`~.tau2_common.tools.Tau2Tool`): only their
names are checked. Upstream's telecom tools build no pydantic model from an argument, so no
value is converted: each is compared, sliced or added as given, and a value upstream's code
cannot use refuses the call with the error upstream's code raises.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

from pytest_tau2.domains.tau2_common.tools import Tau2Tool, TransferMixin, no_attribute
from pytest_tau2.domains.tau2_telecom import lookup
from pytest_tau2.domains.tau2_telecom.db import TODAY
from pytest_tau2.domains.tau2_telecom.records import Bill, Customer, TelecomDB
from pytest_tau2.environment.ids import id_key
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.errors import ToolError

NAMESPACE = "tau2_telecom"
_T = TypeVar("_T")


def params(*required: str, **properties: tuple[str, str]) -> JSONObject:
    """A JSON Schema for keyword arguments: ``name=(json type, description)``."""
    return {
        "type": "object",
        "properties": {name: {"type": kind, "description": text} for name, (kind, text) in properties.items()},
        "required": list(required),
        "additionalProperties": False,
    }


CUSTOMER_ID = ("string", "The customer's id, e.g. C1001.")
LINE_ID = ("string", "The line's id, e.g. L1001.")


def plain(value: _T) -> _T | str:
    """A bare number or bool as upstream's serialiser shows it inside a plain dict: a string."""
    return str(value) if isinstance(value, bool | int | float) else value


class TelecomTool(Tau2Tool):
    """Base of the carrier tools (``self.db`` is the carrier DB dict; arguments as upstream takes them)."""

    abstract = True
    namespace = NAMESPACE

    if TYPE_CHECKING:  # the state's DB is read_db's (a fresh_db copy of it); no runtime cost

        @property
        def db(self) -> TelecomDB: ...


class GetCustomerByPhoneTool(TelecomTool):
    name = "get_customer_by_phone"
    description = (
        "Find the customer who owns a phone number (their contact number or the number of one of their lines)."
    )
    parameters = params("phone_number", phone_number=("string", "The phone number, e.g. 555-123-2002."))

    def run(self, phone_number: JSONValue) -> Customer:
        if not isinstance(phone_number, str):  # upstream compares it to the stored strings: no match
            raise ToolError(f"Customer with phone number {phone_number} not found")
        return lookup.customer_by_phone(self.db, phone_number)


class GetCustomerByIdTool(TelecomTool):
    name = "get_customer_by_id"
    description = "Get a customer's record by customer id."
    parameters = params("customer_id", customer_id=CUSTOMER_ID)

    def run(self, customer_id: str) -> Customer:
        return lookup.find_customer(self.db, customer_id)


class GetCustomerByNameTool(TelecomTool):
    name = "get_customer_by_name"
    description = (
        "List the customers with this full name and date of birth (name compared without regard to case; "
        "the list may be empty)."
    )
    parameters = params(
        "full_name",
        "dob",
        full_name=("string", "The customer's full name."),
        dob=("string", "Date of birth, YYYY-MM-DD."),
    )

    def run(self, full_name: JSONValue, dob: JSONValue) -> list[Customer]:
        # Upstream lower-cases the name (a non-string refuses the call) and compares the date of
        # birth as given (a non-string matches no one: the list is empty).
        if not isinstance(full_name, str):
            raise no_attribute(full_name, "lower")
        wanted = " ".join(full_name.split()).casefold()
        return [
            customer
            for customer in self.db["customers"]
            if " ".join(customer["full_name"].split()).casefold() == wanted and customer["date_of_birth"] == dob
        ]


class GetDetailsByIdTool(TelecomTool):
    name = "get_details_by_id"
    description = (
        "Get any record by its id; the first letter says the kind: C customer, L line, D device, B bill, P plan."
    )
    parameters = params("id", id=("string", "The id, e.g. L1002, B1003, D1001, C1001 or P1002."))

    def run(self, id: JSONValue) -> Mapping[str, object]:
        if not isinstance(id, str):  # upstream reads the kind with str.startswith
            raise no_attribute(id, "startswith")
        finders = {
            "l": lookup.find_line,
            "d": lookup.find_device,
            "b": lookup.find_bill,
            "c": lookup.find_customer,
            "p": lookup.find_plan,
        }
        finder = finders.get(id_key(id)[:1])
        if finder is None:
            raise ToolError(f"Unknown ID format or type: {id}")
        return finder(self.db, id)


class SuspendLineTool(TelecomTool):
    name = "suspend_line"
    description = "Suspend an active line of a customer (a $5 monthly holding fee applies while suspended)."
    parameters = params(
        "customer_id",
        "line_id",
        "reason",
        customer_id=CUSTOMER_ID,
        line_id=LINE_ID,
        reason=("string", "Why the line is suspended."),
    )
    action_name = "suspend_line"
    mutates_state = True

    def run(self, customer_id: str, line_id: str, reason: JSONValue) -> dict[str, object]:
        # ``reason`` only goes into upstream's log line, so any JSON value is accepted.
        line = lookup.target_line(self.db, customer_id, line_id)
        if line["status"] != "Active":
            raise ToolError("Line must be active to suspend")
        line["status"] = "Suspended"
        line["suspension_start_date"] = TODAY
        return {"message": "Line suspended successfully. $5/month holding fee will apply.", "line": line}


class ResumeLineTool(TelecomTool):
    name = "resume_line"
    description = "Reactivate a suspended (or pending-activation) line of a customer."
    parameters = params("customer_id", "line_id", customer_id=CUSTOMER_ID, line_id=LINE_ID)
    action_name = "resume_line"
    mutates_state = True

    def run(self, customer_id: str, line_id: str) -> dict[str, object]:
        line = lookup.target_line(self.db, customer_id, line_id)
        if line["status"] not in ("Suspended", "Pending Activation"):
            raise ToolError("Line must be suspended to resume")
        line["status"] = "Active"
        line["suspension_start_date"] = None
        return {"message": "Line resumed successfully", "line": line}


class GetBillsForCustomerTool(TelecomTool):
    name = "get_bills_for_customer"
    description = "List a customer's bills, newest issue date first."
    parameters = params(
        "customer_id",
        customer_id=CUSTOMER_ID,
        limit=("integer", "How many bills to return at most (default 12)."),
    )

    def run(self, customer_id: str, limit: JSONValue = 12) -> list[Bill]:
        customer = lookup.find_customer(self.db, customer_id)
        bills = [lookup.find_bill(self.db, bill_id) for bill_id in customer["bill_ids"]]
        newest_first = sorted(bills, key=lambda bill: bill["issue_date"], reverse=True)
        # Upstream slices with ``limit`` as given: null returns every bill, true one, false none;
        # a float or a string is not a slice index and refuses the call.
        if limit is not None and not isinstance(limit, int):
            raise ToolError("slice indices must be integers or None or have an __index__ method")
        return newest_first[:limit]


class SendPaymentRequestTool(TelecomTool):
    name = "send_payment_request"
    description = (
        "Ask the customer to pay one of their bills; the bill becomes 'Awaiting Payment'. Only one bill per "
        "customer can await payment. Paid bills are not refused: check the status first."
    )
    parameters = params(
        "customer_id",
        "bill_id",
        customer_id=CUSTOMER_ID,
        bill_id=("string", "The bill's id, e.g. B1002."),
    )
    action_name = "send_payment_request"
    mutates_state = True

    def run(self, customer_id: str, bill_id: str) -> str:
        customer = lookup.find_customer(self.db, customer_id)
        if lookup.bills_awaiting_payment(self.db, customer):
            raise ToolError("A bill is already awaiting payment for this customer")
        stored = lookup.stored_id(customer["bill_ids"], bill_id)
        if stored is None:
            raise ToolError(f"Bill {bill_id} not found for customer {customer_id}")
        bill = lookup.find_bill(self.db, stored)
        bill["status"] = "Awaiting Payment"
        return f"Payment request sent to the customer for bill {bill['bill_id']}"


def cycle_end(today: dt.date) -> dt.date:
    """Last day of the month of ``today``."""
    first_of_next = dt.date(today.year + (today.month == 12), today.month % 12 + 1, 1)
    return first_of_next - dt.timedelta(days=1)


class GetDataUsageTool(TelecomTool):
    name = "get_data_usage"
    description = (
        "Show a line's data use in the current billing cycle, its plan allowance, data bought on top, "
        "and the cycle's end date."
    )
    parameters = params("customer_id", "line_id", customer_id=CUSTOMER_ID, line_id=LINE_ID)

    def run(self, customer_id: str, line_id: str) -> dict[str, object]:
        line = lookup.target_line(self.db, customer_id, line_id)
        plan = lookup.find_plan(self.db, line["plan_id"])
        return {
            "line_id": line["line_id"],
            "data_used_gb": plain(line["data_used_gb"]),
            "data_limit_gb": plain(plan["data_limit_gb"]),
            "data_refueling_gb": plain(line["data_refueling_gb"]),
            "cycle_end_date": cycle_end(TODAY).isoformat(),
        }


class EnableRoamingTool(TelecomTool):
    name = "enable_roaming"
    description = "Allow international roaming on a customer's line."
    parameters = params("customer_id", "line_id", customer_id=CUSTOMER_ID, line_id=LINE_ID)
    action_name = "enable_roaming"
    mutates_state = True

    def run(self, customer_id: str, line_id: str) -> str:
        line = lookup.target_line(self.db, customer_id, line_id)
        if line["roaming_enabled"]:
            return "Roaming was already enabled"
        line["roaming_enabled"] = True
        return "Roaming enabled successfully"


class DisableRoamingTool(TelecomTool):
    name = "disable_roaming"
    description = "Stop international roaming on a customer's line."
    parameters = params("customer_id", "line_id", customer_id=CUSTOMER_ID, line_id=LINE_ID)
    action_name = "disable_roaming"
    mutates_state = True

    def run(self, customer_id: str, line_id: str) -> str:
        line = lookup.target_line(self.db, customer_id, line_id)
        if not line["roaming_enabled"]:
            return "Roaming was already disabled"
        line["roaming_enabled"] = False
        return "Roaming disabled successfully"


class TransferToHumanAgentsTool(TransferMixin, TelecomTool):
    """Hand over to a human agent; no DB effect, ends the conversation."""


def draft_bill_for(db: TelecomDB, customer: Customer) -> Bill:
    """The customer's first Draft bill, created for next month when there is none.

    Upstream names a created bill ``B`` + 8 random hex digits. Here the 8 hex digits come from
    a sha256 of the customer id and the number of bills, so replays are reproducible. In the
    shipped tasks this never runs: customer C1001 already has the Draft bill B1003.
    """
    for bill_id in customer["bill_ids"]:
        bill = lookup.find_bill(db, bill_id)
        if bill["status"] == "Draft":
            return bill
    start = cycle_end(TODAY) + dt.timedelta(days=1)
    taken = {bill["bill_id"] for bill in db["bills"]}
    salt = len(db["bills"])
    while True:
        new_id = "B" + hashlib.sha256(f"{customer['customer_id']}:{salt}".encode()).hexdigest()[:8]
        if new_id not in taken:
            break
        salt += 1
    bill = {
        "bill_id": new_id,
        "customer_id": customer["customer_id"],
        "period_start": start,
        "period_end": cycle_end(start),
        "issue_date": start,
        "total_due": 0.0,
        "due_date": start + dt.timedelta(days=14),
        "line_items": [],
        "status": "Draft",
    }
    db["bills"].append(bill)
    customer["bill_ids"].append(new_id)
    return bill


class RefuelDataTool(TelecomTool):
    name = "refuel_data"
    description = (
        "Add extra data to a customer's line for the current cycle; the cost (gigabytes times the plan's "
        "refuel price) is charged on the customer's next bill."
    )
    parameters = params(
        "customer_id",
        "line_id",
        "gb_amount",
        customer_id=CUSTOMER_ID,
        line_id=LINE_ID,
        gb_amount=("number", "How many gigabytes to add (more than 0)."),
    )
    action_name = "refuel_data"
    mutates_state = True

    def run(self, customer_id: str, line_id: str, gb_amount: JSONValue) -> dict[str, object]:
        # ``gb_amount`` is compared, multiplied and added as given, as upstream does: true counts
        # as 1 (and is shown as "True"), false is not positive, a string or null refuses the call.
        line = lookup.target_line(self.db, customer_id, line_id)
        if not isinstance(gb_amount, int | float):
            raise ToolError(f"'<=' not supported between instances of '{type(gb_amount).__name__}' and 'int'")
        if gb_amount <= 0:
            raise ToolError("Refuel amount must be positive")
        plan = lookup.find_plan(self.db, line["plan_id"])
        price = plan["data_refueling_price_per_gb"]
        charge = gb_amount * price
        line["data_refueling_gb"] += gb_amount
        customer = lookup.find_customer(self.db, customer_id)
        bill = draft_bill_for(self.db, customer)
        bill["line_items"].append(
            {
                "description": f"Data refueling: {gb_amount} GB at ${price}/GB",
                "amount": float(charge),
                "date": TODAY,
                "item_type": "Credit" if charge < 0 else "Charge",
            }
        )
        bill["total_due"] += charge
        return {
            "message": f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}",
            "new_data_refueling_gb": plain(line["data_refueling_gb"]),
            "charge": plain(charge),
        }


AGENT_TOOL_CLASSES: tuple[type[TelecomTool], ...] = (
    GetCustomerByPhoneTool,
    GetCustomerByIdTool,
    GetCustomerByNameTool,
    GetDetailsByIdTool,
    SuspendLineTool,
    ResumeLineTool,
    GetBillsForCustomerTool,
    SendPaymentRequestTool,
    GetDataUsageTool,
    EnableRoamingTool,
    DisableRoamingTool,
    TransferToHumanAgentsTool,
    RefuelDataTool,
)
TOOL_CLASSES = AGENT_TOOL_CLASSES
"""The name the domain contract uses for the agent tools."""

ACTION_NAME_TO_TOOL: dict[str, type[TelecomTool]] = {
    cls.action_name: cls for cls in AGENT_TOOL_CLASSES if cls.action_name
}
