"""Telecom functions that are not tools: setting up a task's world, and :func:`run_function`.

Upstream's task files name functions of either side in ``initialization_actions`` and
``env_assertions`` (``{"env_type": "user"|"assistant", "func_name", "arguments"}``). A
name may be a tool (``enable_roaming``, ``set_network_mode_preference``...), one of the
set-up functions below (``set_user_info``, ``turn_airplane_mode_on``, ``break_vpn``...) or
an assertion (the db-state predicates). :func:`run_function` runs any of them on the right
DB, then syncs phone and carrier like upstream's ``run_env_function_call``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from pytest_tau2.domains.tau2_telecom import device as phone
from pytest_tau2.domains.tau2_telecom import lookup
from pytest_tau2.domains.tau2_telecom.db import TODAY
from pytest_tau2.domains.tau2_telecom.predicates import AGENT_PREDICATES, USER_PREDICATES
from pytest_tau2.domains.tau2_telecom.records import TelecomDB, TelecomUserDB
from pytest_tau2.domains.tau2_telecom.sync import sync_state
from pytest_tau2.domains.tau2_telecom.tools import AGENT_TOOL_CLASSES
from pytest_tau2.domains.tau2_telecom.user_tools import USER_TOOL_CLASSES
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.environment.tools import Tool
from pytest_tau2.errors import ToolError

Function = Callable[..., object]
"""A function a task record may name: its side's DB first, then the record's keyword arguments."""


class UnknownFunctionError(ToolError, KeyError):
    """No function of that name on that side (a ToolError and a KeyError alike)."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else ""


# --- carrier side -----------------------------------------------------------------------


def set_data_usage(db: TelecomDB, customer_id: str, line_id: str, data_used_gb: float) -> str:
    """Set how much data the line used this cycle (stored as given, like upstream)."""
    lookup.target_line(db, customer_id, line_id)["data_used_gb"] = data_used_gb
    return f"Data usage set to {data_used_gb} GB for line {line_id}"


def suspend_line_for_overdue_bill(
    db: TelecomDB, customer_id: str, line_id: str, new_bill_id: str, contract_ended: bool
) -> str:
    """Give the customer an Overdue bill for last month (the plan's monthly price) and suspend the line.

    Refused when the line is not Active or the customer already has an Overdue bill. With
    ``contract_ended`` the line's contract ends on the last day of last month.
    """
    line = lookup.find_line(db, line_id)
    if line["status"] != "Active":
        raise ToolError("Line must be active to suspend for unpaid bill")
    amount = lookup.find_plan(db, line["plan_id"])["price_per_month"]
    if amount <= 0:
        raise ToolError("Amount must be positive for overdue bill")
    customer = lookup.find_customer(db, customer_id)
    if any(lookup.find_bill(db, bill_id)["status"] == "Overdue" for bill_id in customer["bill_ids"]):
        raise ToolError("Customer already has an overdue bill")
    last_month_end = TODAY.replace(day=1) - dt.timedelta(days=1)
    last_month_start = last_month_end.replace(day=1)
    db["bills"].append(
        {
            "bill_id": new_bill_id,
            "customer_id": customer["customer_id"],
            "period_start": last_month_start,
            "period_end": last_month_end,
            "issue_date": last_month_start,
            "total_due": 0.0 + amount,
            "due_date": last_month_start + dt.timedelta(days=14),
            "line_items": [
                {
                    "description": f"Charge for line {line['line_id']}",
                    "amount": float(amount),
                    "date": TODAY,
                    "item_type": "Charge",
                }
            ],
            "status": "Overdue",
        }
    )
    customer["bill_ids"].append(new_bill_id)
    line["status"] = "Suspended"
    line["suspension_start_date"] = TODAY
    if contract_ended:
        line["contract_end_date"] = last_month_end
    return f"Line {line_id} suspended for unpaid bill {new_bill_id}. Contract ended: {contract_ended}"


def get_available_plan_ids(db: TelecomDB) -> list[str]:
    return [plan["plan_id"] for plan in db["plans"]]


# --- phone side -------------------------------------------------------------------------


def set_user_info(user_db: TelecomUserDB, name: str, phone_number: str) -> None:
    """Who holds the phone; from now on sync ties the phone to the line with this number."""
    user_db["surroundings"]["name"] = name
    user_db["surroundings"]["phone_number"] = phone_number


def set_user_location(user_db: TelecomUserDB, abroad: bool) -> None:
    user_db["surroundings"]["is_abroad"] = abroad


def _turn(name: str, toggle: Callable[[TelecomUserDB], bool | None], wanted: bool, done: str) -> Function:
    """A set-up function that toggles until the setting is ``wanted`` (upstream's turn_* functions)."""

    def turn(user_db: TelecomUserDB) -> str:
        if toggle(user_db) != wanted:
            toggle(user_db)
        return done

    turn.__name__ = turn.__qualname__ = name
    return turn


turn_airplane_mode_on = _turn("turn_airplane_mode_on", phone.toggle_airplane_mode, True, "Airplane Mode is now ON.")
turn_airplane_mode_off = _turn("turn_airplane_mode_off", phone.toggle_airplane_mode, False, "Airplane Mode is now OFF.")
turn_roaming_on = _turn("turn_roaming_on", phone.toggle_roaming, True, "Data Roaming is now ON.")
turn_roaming_off = _turn("turn_roaming_off", phone.toggle_roaming, False, "Data Roaming is now OFF.")
turn_data_off = _turn("turn_data_off", phone.toggle_data, False, "Data connection broken.")
turn_data_saver_mode_on = _turn(
    "turn_data_saver_mode_on", phone.toggle_data_saver_mode, True, "Data Saver Mode is now ON."
)
turn_data_saver_mode_off = _turn(
    "turn_data_saver_mode_off", phone.toggle_data_saver_mode, False, "Data Saver Mode is now OFF."
)


def turn_data_on(user_db: TelecomUserDB) -> str:
    """Switch mobile data on without a network search (as upstream)."""
    user_db["device"]["data_enabled"] = True
    return "Data connection restored."


def unseat_sim_card(user_db: TelecomUserDB) -> str:
    user_db["device"]["sim_card_missing"] = True
    phone.simulate_network_search(user_db)
    return "SIM card un-seated successfully."


def lock_sim_card(user_db: TelecomUserDB, mode: str) -> str:
    """Lock the SIM with a PIN (``mode="pin"``) or PUK (``"puk"``): no tool can fix that."""
    if mode in ("pin", "puk"):
        user_db["device"]["sim_card_status"] = f"locked_{mode}"
    phone.simulate_network_search(user_db)
    return f"SIM card locked successfully in {mode} mode."


def break_apn_settings(user_db: TelecomUserDB) -> str:
    user_db["device"]["active_apn_settings"]["apn_name"] = "broken"
    phone.simulate_network_search(user_db)
    return "APN settings broken. Please call reset_apn_settings() to fix."


def break_apn_mms_setting(user_db: TelecomUserDB) -> str:
    user_db["device"]["active_apn_settings"]["mmsc_url"] = None
    return "APN MMS setting broken. Please call reset_apn_settings() to fix."


def break_vpn(user_db: TelecomUserDB) -> str:
    """Connect the VPN (if it is not) and make its server slow."""
    phone.connect_vpn(user_db)
    details = user_db["device"]["vpn_details"]
    if details is None:
        raise ToolError("VPN is connected without details; cannot break it")
    details["server_performance"] = "poor"
    return "VPN connection broken."


def remove_app_permission(user_db: TelecomUserDB, app_name: str, permission: str) -> tuple[bool, str]:
    app = phone.find_app(user_db["device"], app_name)
    permission = permission.lower()
    if app is None:
        return False, f"App '{app_name}' not found. Cannot remove permission."
    if permission not in app["permissions"]:
        return False, f"Permission '{permission}' not tracked for app '{app_name}'."
    app["permissions"][permission] = False
    return True, f"Permission '{permission}' removed from app '{app_name}'."


def set_wifi_calling(user_db: TelecomUserDB, enabled: bool, mms_over_wifi: bool | None = None) -> str:
    device = user_db["device"]
    if device["wifi_calling_enabled"] != enabled:
        phone.toggle_wifi_calling(user_db)
    text = f"Wi-Fi Calling is now {'ON' if enabled else 'OFF'}."
    if mms_over_wifi is not None:
        device["wifi_calling_mms_over_wifi"] = mms_over_wifi
        text += f"\nMMS over Wi-Fi is now {'ON' if mms_over_wifi else 'OFF'}."
    return text


def simulate_network_search(user_db: TelecomUserDB) -> None:
    phone.simulate_network_search(user_db)


# --- dispatch ---------------------------------------------------------------------------


def _tool_function(cls: type[Tool]) -> Function:
    def call(db: TelecomDB | TelecomUserDB, **arguments: JSONValue) -> object:
        return cls({"db": db}).run(**arguments)

    call.__name__ = cls.name
    return call


def _table(tools: tuple[type[Tool], ...], *functions: Function) -> dict[str, Function]:
    table = {cls.name: _tool_function(cls) for cls in tools}
    for fn in functions:
        if fn.__name__ in table:
            raise ValueError(f"telecom function {fn.__name__!r} is defined twice")
        table[fn.__name__] = fn
    return table


AGENT_FUNCTIONS: dict[str, Function] = _table(
    AGENT_TOOL_CLASSES, set_data_usage, suspend_line_for_overdue_bill, get_available_plan_ids, *AGENT_PREDICATES
)
"""Everything an ``"assistant"`` record may name: tools, set-up functions, assertions."""

USER_FUNCTIONS: dict[str, Function] = _table(
    USER_TOOL_CLASSES,
    set_user_info,
    set_user_location,
    turn_airplane_mode_on,
    turn_airplane_mode_off,
    turn_roaming_on,
    turn_roaming_off,
    turn_data_on,
    turn_data_off,
    turn_data_saver_mode_on,
    turn_data_saver_mode_off,
    unseat_sim_card,
    lock_sim_card,
    break_apn_settings,
    break_apn_mms_setting,
    break_vpn,
    remove_app_permission,
    set_wifi_calling,
    simulate_network_search,
    *USER_PREDICATES,
)
"""Everything a ``"user"`` record may name: phone tools, set-up functions, assertions."""

SIDES = {"assistant": "assistant", "agent": "assistant", "user": "user"}


def run_function(
    agent_db: TelecomDB,
    user_db: TelecomUserDB,
    env_type: JSONValue,
    func_name: str,
    arguments: JSONObject | None = None,
) -> object:
    """Run the function ``func_name`` of side ``env_type`` with ``arguments``, then sync.

    ``env_type`` is ``"assistant"`` (or ``"agent"``) for the carrier DB, ``"user"`` for the
    phone DB. Returns what the function returns (a tool's raw result, not its text form).
    An unknown side raises :class:`ToolError`; an unknown name raises
    :class:`UnknownFunctionError` (a ToolError and a KeyError). A function that raises
    propagates its exception and no sync happens.
    """
    side = SIDES.get(env_type) if isinstance(env_type, str) else None
    if side is None:
        raise ToolError(f"Invalid environment type: {env_type}; expected 'assistant', 'agent' or 'user'")
    table = AGENT_FUNCTIONS if side == "assistant" else USER_FUNCTIONS
    fn = table.get(func_name)
    if fn is None:
        raise UnknownFunctionError(
            f"Function {func_name} not found in {env_type} tools; known there: {', '.join(sorted(table))}"
        )
    result = fn(agent_db if side == "assistant" else user_db, **(arguments or {}))
    sync_state(agent_db, user_db)
    return result
