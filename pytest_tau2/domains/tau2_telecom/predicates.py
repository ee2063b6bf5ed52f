"""Telecom db-state predicates: upstream's ``assert_*`` functions as pure checks over a DB dict.

Registered under domain ``"tau2_telecom"``. The carrier-side ones (``env_type``
``"assistant"``) read the carrier DB; the phone-side ones (``env_type`` ``"user"``) read the
phone DB and share the phone logic of the user tools (:mod:`.device`). None mutates its
input. The shipped tasks use six of them: ``assert_data_refueling_amount``,
``assert_no_overdue_bill`` (carrier) and ``assert_can_send_mms``, ``assert_mobile_data_status``,
``assert_internet_speed``, ``assert_service_status`` (phone); the others are upstream's
remaining assertion functions, registered for custom scenarios.
"""

from __future__ import annotations

from pytest_tau2.domains.tau2_telecom import device as phone
from pytest_tau2.domains.tau2_telecom import lookup
from pytest_tau2.domains.tau2_telecom.records import TelecomDB, TelecomUserDB
from pytest_tau2.errors import ToolError
from pytest_tau2.scoring.predicates import register_db_state_predicate

DOMAIN = "tau2_telecom"
NETWORK_STATUSES = ("connected", "searching", "no_service", "emergency_only")

predicate = register_db_state_predicate(DOMAIN)

# --- carrier DB -------------------------------------------------------------------------


@predicate
def assert_data_refueling_amount(db: TelecomDB, customer_id: str, line_id: str, expected_amount: float) -> bool:
    """The customer's line has ``expected_amount`` GB of refuelled data (within 1e-6)."""
    return bool(abs(lookup.target_line(db, customer_id, line_id)["data_refueling_gb"] - expected_amount) < 1e-6)


@predicate
def assert_line_status(db: TelecomDB, customer_id: str, line_id: str, expected_status: str) -> bool:
    """The customer's line has status ``expected_status`` (Active, Suspended, ...)."""
    return bool(lookup.target_line(db, customer_id, line_id)["status"] == expected_status)


@predicate
def assert_overdue_bill_exists(db: TelecomDB, customer_id: str, overdue_bill_id: str) -> bool:
    """The bill is the customer's and is Overdue; like upstream it raises instead of returning False."""
    customer = lookup.find_customer(db, customer_id)
    stored = lookup.stored_id(customer["bill_ids"], overdue_bill_id)
    if stored is None:
        raise ToolError(f"Overdue bill {overdue_bill_id} not found")
    if lookup.find_bill(db, stored)["status"] != "Overdue":
        raise ToolError(f"Overdue bill {overdue_bill_id} is not overdue")
    return True


@predicate
def assert_no_overdue_bill(db: TelecomDB, overdue_bill_id: str) -> bool:
    """The bill does not exist, or it is Paid."""
    try:
        bill = lookup.find_bill(db, overdue_bill_id)
    except ToolError:
        return True
    return bool(bill["status"] == "Paid")


# --- phone DB ---------------------------------------------------------------------------


@predicate
def assert_airplane_mode_status(db: TelecomUserDB, expected_status: bool) -> bool:
    return bool(db["device"]["airplane_mode"] == expected_status)


@predicate
def assert_service_status(db: TelecomUserDB, expected_status: str) -> bool:
    """The phone's cellular connection is ``expected_status`` (connected, no_service, ...)."""
    if expected_status not in NETWORK_STATUSES:
        raise ValueError(f"'{expected_status}' is not a valid NetworkStatus")
    return bool(db["device"]["network_connection_status"] == expected_status)


@predicate
def assert_mobile_data_status(db: TelecomUserDB, expected_status: bool) -> bool:
    """Mobile data works (True) or not (False), by the same rule the phone uses."""
    return phone.mobile_data_working(db) == expected_status


@predicate
def assert_mobile_roaming_status(db: TelecomUserDB, expected_status: bool) -> bool:
    return bool(db["device"]["roaming_enabled"] == expected_status)


@predicate
def assert_mobile_data_saver_mode_status(db: TelecomUserDB, expected_status: bool) -> bool:
    return bool(db["device"]["data_saver_mode"] == expected_status)


@predicate
def assert_internet_speed(db: TelecomUserDB, expected_speed: float, expected_desc: str | None = None) -> bool:
    """A speed test gives at least ``expected_speed`` Mbps (no connection counts as 0), with label
    ``expected_desc`` (case-insensitive) when given."""
    speed, label = phone.speed_test(db)
    if (speed or 0.0) < expected_speed:
        return False
    return expected_desc is None or label.lower() == expected_desc.lower()


@predicate
def assert_internet_not_excellent(db: TelecomUserDB) -> bool:
    """A speed test does not report "Excellent"."""
    return phone.speed_test(db)[1].lower() != "excellent"


@predicate
def assert_can_send_mms(db: TelecomUserDB, expected_status: bool) -> bool:
    """The messaging app can (True) or cannot (False) send MMS, by the phone's own rule."""
    return phone.can_send_mms(db) == expected_status


@predicate
def assert_mobile_data_usage_exceeded(db: TelecomUserDB, expected_status: bool) -> bool:
    return bool(db["surroundings"]["mobile_data_usage_exceeded"] == expected_status)


AGENT_PREDICATES = (
    assert_data_refueling_amount,
    assert_line_status,
    assert_overdue_bill_exists,
    assert_no_overdue_bill,
)
"""Predicates of the carrier side (upstream's TelecomTools assertion methods)."""

USER_PREDICATES = (
    assert_airplane_mode_status,
    assert_service_status,
    assert_mobile_data_status,
    assert_mobile_roaming_status,
    assert_mobile_data_saver_mode_status,
    assert_internet_speed,
    assert_internet_not_excellent,
    assert_can_send_mms,
    assert_mobile_data_usage_exceeded,
)
"""Predicates of the phone side (upstream's TelecomUserTools assertion methods)."""
