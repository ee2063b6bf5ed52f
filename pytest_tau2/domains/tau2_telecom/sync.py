"""Keeping the phone and the carrier in step (upstream's ``TelecomEnvironment.sync_tools``).

The core calls :func:`sync_state` after every successful tool call of either side and after
every initialization action. It copies the carrier's view of the user's line onto the phone's
surroundings, and carries payment requests both ways:

- nothing happens until ``surroundings.phone_number`` is set (``set_user_info`` does that);
- ``line_active``: the line of that number has status "Active";
- ``roaming_allowed``: the line has roaming enabled;
- ``mobile_data_usage_exceeded``: data used >= plan allowance + data refuelled;
- a payment request the user has paid marks its bill "Paid" and is cleared;
- with no request pending, the first "Awaiting Payment" bill of the customer owning that
  number becomes the phone's payment request (amount = the bill's total due).

Sync never re-runs the phone's network search: a line resumed by the agent only brings the
signal back after a user action that searches (reboot, airplane mode off, ...).
"""

from __future__ import annotations

from pytest_tau2.domains.tau2_telecom import lookup
from pytest_tau2.domains.tau2_telecom.records import TelecomDB, TelecomUserDB


def sync_state(agent_db: TelecomDB, user_db: TelecomUserDB) -> None:
    """Bring ``user_db["surroundings"]`` (and a paid bill in ``agent_db``) up to date, in place."""
    where = user_db["surroundings"]
    phone_number = where["phone_number"]
    if phone_number is None:
        return
    line = lookup.line_by_phone(agent_db, phone_number)
    where["line_active"] = line["status"] == "Active"
    where["roaming_allowed"] = bool(line["roaming_enabled"])
    plan = lookup.find_plan(agent_db, line["plan_id"])
    where["mobile_data_usage_exceeded"] = line["data_used_gb"] >= plan["data_limit_gb"] + line["data_refueling_gb"]

    request = where["payment_request"]
    if request is not None and request["paid"]:
        lookup.find_bill(agent_db, request["bill_id"])["status"] = "Paid"
        where["payment_request"] = None

    if where["payment_request"] is None:
        customer = lookup.customer_by_phone(agent_db, phone_number)
        waiting = lookup.bills_awaiting_payment(agent_db, customer)
        if waiting:
            bill = waiting[0]
            where["payment_request"] = {
                "bill_id": bill["bill_id"],
                "amount_due": float(bill["total_due"]),
                "paid": False,
            }
