"""Telecom tools, set-up functions and sync on copies of the real DBs: effects and exact texts."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.domains.tau2_telecom import (
    ACTION_NAME_TO_TOOL,
    AGENT_TOOL_CLASSES,
    TOOL_CLASSES,
    USER_ACTION_NAME_TO_TOOL,
    USER_TOOL_CLASSES,
    UnknownFunctionError,
    read_db,
    read_user_db,
    run_function,
    sync_state,
)
from pytest_tau2.domains.tau2_telecom.db import default_apn_settings
from pytest_tau2.environment.db import copy_db, db_hash
from pytest_tau2.environment.env import Environment, ToolResult
from pytest_tau2.environment.tools import resolve_tool
from pytest_tau2.errors import ToolError

REAL_DATA = Path(os.environ.get("TAU2_DATA_DIR") or "/work/shared/tau2-data")
TELECOM = REAL_DATA / "tau2" / "domains" / "telecom"
pytestmark = pytest.mark.skipif(not TELECOM.is_dir(), reason=f"pinned tau2 data not found at {REAL_DATA}")

BAR = "Status Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled | 🔋 80%"
"""The status bar after a network search on the default phone (5G at excellent signal)."""
BAR0 = "Status Bar: 📶³ Good | 5G | 📱 Data Enabled | 🔋 80%"
"""The status bar as user_db.toml leaves it (before any search)."""


@pytest.fixture(scope="module")
def originals() -> tuple[dict[str, Any], dict[str, Any]]:
    return read_db(TELECOM / "db.toml"), read_user_db(TELECOM / "user_db.toml")


@dataclass
class World:
    db: dict[str, Any]
    user_db: dict[str, Any]
    agent_env: Environment
    user_env: Environment

    def agent(self, name: str, **arguments: Any) -> ToolResult:
        return self.agent_env.call(name, arguments)

    def user(self, name: str, **arguments: Any) -> ToolResult:
        return self.user_env.call(name, arguments)

    def fn(self, side: str, func_name: str, /, **arguments: Any) -> Any:
        return run_function(self.db, self.user_db, side, func_name, arguments)

    @property
    def device(self) -> dict[str, Any]:
        return self.user_db["device"]

    def line(self, line_id: str) -> dict[str, Any]:
        return next(line for line in self.db["lines"] if line["line_id"] == line_id)

    def bill(self, bill_id: str) -> dict[str, Any]:
        return next(bill for bill in self.db["bills"] if bill["bill_id"] == bill_id)


@pytest.fixture
def world(originals: tuple[dict[str, Any], dict[str, Any]]) -> World:
    db, user_db = copy_db(originals[0]), copy_db(originals[1])

    def hook() -> None:
        sync_state(db, user_db)

    agent = Environment("agent", {"db": db}, [cls({"db": db}) for cls in AGENT_TOOL_CLASSES], after_success=hook)
    user = Environment("user", {"db": user_db}, [cls({"db": user_db}) for cls in USER_TOOL_CLASSES], after_success=hook)
    return World(db, user_db, agent, user)


def ok(result: ToolResult) -> str:
    assert not result.error, result.content
    return result.content


def err(result: ToolResult) -> str:
    assert result.error, result.content
    return result.content


# --- tool sets ---------------------------------------------------------------------------


def test_agent_tools_in_upstream_order() -> None:
    assert [cls.name for cls in AGENT_TOOL_CLASSES] == [
        "get_customer_by_phone", "get_customer_by_id", "get_customer_by_name", "get_details_by_id",
        "suspend_line", "resume_line", "get_bills_for_customer", "send_payment_request", "get_data_usage",
        "enable_roaming", "disable_roaming", "transfer_to_human_agents", "refuel_data",
    ]  # fmt: skip
    assert TOOL_CLASSES is AGENT_TOOL_CLASSES
    assert set(ACTION_NAME_TO_TOOL) == {
        "suspend_line", "resume_line", "send_payment_request", "enable_roaming", "disable_roaming",
        "refuel_data", "transfer_to_human_agents",
    }  # fmt: skip
    transfer = ACTION_NAME_TO_TOOL["transfer_to_human_agents"]
    assert (transfer.mutates_state, transfer.ends_conversation) == (False, "transfer")
    assert all(cls.mutates_state for name, cls in ACTION_NAME_TO_TOOL.items() if name != "transfer_to_human_agents")
    assert all(cls.namespace == "tau2_telecom" and cls.__name__.endswith("Tool") for cls in AGENT_TOOL_CLASSES)
    assert resolve_tool("tau2_telecom", "RefuelDataTool").name == "refuel_data"


def test_user_tools_in_upstream_order() -> None:
    names = [cls.name for cls in USER_TOOL_CLASSES]
    assert len(names) == 30 and names[:4] == [
        "check_status_bar", "check_network_status", "check_network_mode_preference", "set_network_mode_preference",
    ]  # fmt: skip
    assert names[-4:] == ["can_send_mms", "reboot_device", "check_payment_request", "make_payment"]
    assert set(USER_ACTION_NAME_TO_TOOL) == {
        "set_network_mode_preference", "toggle_airplane_mode", "reseat_sim_card", "toggle_data", "toggle_roaming",
        "toggle_data_saver_mode", "set_apn_settings", "reset_apn_settings", "toggle_wifi", "toggle_wifi_calling",
        "connect_vpn", "disconnect_vpn", "grant_app_permission", "reboot_device", "make_payment",
    }  # fmt: skip
    assert all(cls.namespace == "tau2_telecom_user" for cls in USER_TOOL_CLASSES)
    for cls in USER_TOOL_CLASSES:
        assert cls.parameters["additionalProperties"] is False
        assert bool(cls.action_name) == cls.mutates_state


# --- agent tools -------------------------------------------------------------------------


def test_customer_lookups(world: World) -> None:
    assert json.loads(ok(world.agent("get_customer_by_phone", phone_number="555-123-2002")))["customer_id"] == "C1001"
    # a line's number finds its owner; spacing and punctuation do not matter
    assert json.loads(ok(world.agent("get_customer_by_phone", phone_number="(555) 123 2005")))["customer_id"] == "C1002"
    assert err(world.agent("get_customer_by_phone", phone_number="555-000-0000")) == (
        "Error: Customer with phone number 555-000-0000 not found"
    )
    assert json.loads(ok(world.agent("get_customer_by_id", customer_id="c1003")))["full_name"] == "Michael Lee"
    assert err(world.agent("get_customer_by_id", customer_id="C9")) == "Error: Customer with ID C9 not found"
    found = json.loads(ok(world.agent("get_customer_by_name", full_name="john SMITH", dob="1985-06-15")))
    assert [c["customer_id"] for c in found] == ["C1001"]
    assert ok(world.agent("get_customer_by_name", full_name="John Smith", dob="1985-06-16")) == "[]"


def test_get_details_by_id(world: World) -> None:
    device = ok(world.agent("get_details_by_id", id="D1001"))
    assert device == (
        '{"device_id": "D1001", "device_type": "phone", "model": "Smartphone X", "imei": "123456789012345", '
        '"is_esim_capable": true, "activated": true, "activation_date": "2025-01-20 14:30:00", '
        '"last_esim_transfer_date": null}'
    )
    assert json.loads(ok(world.agent("get_details_by_id", id="P1002")))["name"] == "Premium Plan"
    assert json.loads(ok(world.agent("get_details_by_id", id="B1003")))["status"] == "Draft"
    assert json.loads(ok(world.agent("get_details_by_id", id="C1004")))["line_ids"] == []
    assert json.loads(ok(world.agent("get_details_by_id", id="L1002")))["data_used_gb"] == 8.7
    assert err(world.agent("get_details_by_id", id="X1")) == "Error: Unknown ID format or type: X1"
    assert err(world.agent("get_details_by_id", id="L9999")) == "Error: Line with ID L9999 not found"


def test_suspend_and_resume_line(world: World) -> None:
    text = ok(world.agent("suspend_line", customer_id="C1001", line_id="L1001", reason="travel"))
    result = json.loads(text)
    assert result["message"] == "Line suspended successfully. $5/month holding fee will apply."
    assert result["line"]["status"] == "Suspended" and result["line"]["suspension_start_date"] == "2025-02-25"
    assert world.agent_env.actions[-1] == {
        "name": "suspend_line",
        "arguments": {"customer_id": "C1001", "line_id": "L1001", "reason": "travel"},
    }
    assert err(world.agent("suspend_line", customer_id="C1001", line_id="L1001", reason="x")) == (
        "Error: Line must be active to suspend"
    )
    assert err(world.agent("suspend_line", customer_id="C1001", line_id="L1004", reason="x")) == (
        "Error: Line L1004 not found for customer C1001"
    )
    result = json.loads(ok(world.agent("resume_line", customer_id="C1001", line_id="L1003")))
    assert result["message"] == "Line resumed successfully"
    assert world.line("L1003")["status"] == "Active" and world.line("L1003")["suspension_start_date"] is None
    assert err(world.agent("resume_line", customer_id="C1001", line_id="L1002")) == (
        "Error: Line must be suspended to resume"
    )


def test_bills_and_payment_request(world: World) -> None:
    bills = json.loads(ok(world.agent("get_bills_for_customer", customer_id="C1001")))
    assert [b["bill_id"] for b in bills] == ["B1003", "B1002", "B1001"]
    assert len(json.loads(ok(world.agent("get_bills_for_customer", customer_id="C1001", limit=1)))) == 1
    assert err(world.agent("send_payment_request", customer_id="C1001", bill_id="B1004")) == (
        "Error: Bill B1004 not found for customer C1001"
    )
    assert ok(world.agent("send_payment_request", customer_id="C1001", bill_id="B1002")) == (
        "Payment request sent to the customer for bill B1002"
    )
    assert world.bill("B1002")["status"] == "Awaiting Payment"
    assert err(world.agent("send_payment_request", customer_id="C1001", bill_id="B1001")) == (
        "Error: A bill is already awaiting payment for this customer"
    )


def test_data_usage_numbers_are_strings(world: World) -> None:
    assert ok(world.agent("get_data_usage", customer_id="C1001", line_id="L1002")) == (
        '{"line_id": "L1002", "data_used_gb": "8.7", "data_limit_gb": "15.0", "data_refueling_gb": "0.0", '
        '"cycle_end_date": "2025-02-28"}'
    )


def test_roaming_texts(world: World) -> None:
    assert ok(world.agent("enable_roaming", customer_id="C1001", line_id="L1002")) == "Roaming was already enabled"
    assert ok(world.agent("disable_roaming", customer_id="C1001", line_id="L1002")) == "Roaming disabled successfully"
    assert world.line("L1002")["roaming_enabled"] is False
    assert ok(world.agent("disable_roaming", customer_id="C1001", line_id="L1002")) == "Roaming was already disabled"
    assert ok(world.agent("enable_roaming", customer_id="C1001", line_id="L1002")) == "Roaming enabled successfully"


def test_transfer(world: World) -> None:
    result = world.agent("transfer_to_human_agents", summary="cannot fix")
    assert (result.content, result.error, result.ends_conversation) == ("Transfer successful", False, "transfer")
    assert world.agent_env.actions == [{"name": "transfer_to_human_agents", "arguments": {"summary": "cannot fix"}}]


def test_refuel_data_charges_the_draft_bill(world: World) -> None:
    text = ok(world.agent("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2.0))
    assert text == (
        '{"message": "Successfully added 2.0 GB of data for line L1002 for $4.00", '
        '"new_data_refueling_gb": "2.0", "charge": "4.0"}'
    )
    draft = world.bill("B1003")
    assert draft["total_due"] == 4.0
    assert draft["line_items"][-1]["description"] == "Data refueling: 2.0 GB at $2.0/GB"
    assert draft["line_items"][-1]["item_type"] == "Charge" and str(draft["line_items"][-1]["date"]) == "2025-02-25"
    assert err(world.agent("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=0)) == (
        "Error: Refuel amount must be positive"
    )


def test_refuel_without_a_draft_bill_creates_one_with_a_deterministic_id(world: World) -> None:
    world.bill("B1003")["status"] = "Issued"
    ok(world.agent("refuel_data", customer_id="C1001", line_id="L1001", gb_amount=1))
    new_id = world.db["customers"][0]["bill_ids"][-1]
    assert new_id.startswith("B") and len(new_id) == 9 and new_id not in {"B1001", "B1002", "B1003"}
    bill = world.bill(new_id)
    assert (str(bill["period_start"]), str(bill["period_end"]), str(bill["due_date"])) == (
        "2025-03-01", "2025-03-31", "2025-03-15",
    )  # fmt: skip
    assert bill["total_due"] == 5.0 and bill["status"] == "Draft"
    # same input, same id
    again = copy_db(world.db)
    again["bills"].pop()
    again["customers"][0]["bill_ids"].pop()
    again["lines"][0]["data_refueling_gb"] = 0.0
    run_function(
        again,
        copy_db(world.user_db),
        "assistant",
        "refuel_data",
        {"customer_id": "C1001", "line_id": "L1001", "gb_amount": 1},
    )
    assert again["customers"][0]["bill_ids"][-1] == new_id


# --- user tools --------------------------------------------------------------------------


def test_status_and_network_texts(world: World) -> None:
    assert ok(world.user("check_status_bar")) == BAR0
    assert ok(world.user("check_network_status")) == (
        "Airplane Mode: OFF\nSIM Card Status: active\nCellular Connection: connected\nCellular Signal: good\n"
        "Cellular Network Type: 5G\nMobile Data Enabled: Yes\nData Roaming Enabled: No\nWi-Fi Radio: OFF\n"
        "Wi-Fi Connected: No"
    )
    assert ok(world.user("check_network_mode_preference")) == "Network Mode Preference: 4g_5g_preferred"


def test_set_network_mode_preference(world: World) -> None:
    assert ok(world.user("set_network_mode_preference", mode="2g_only")) == (
        "Preferred Network Mode set to: 2g_only\nStatus Bar: 📶¹ Poor | 2G | 📱 Data Enabled | 🔋 80%"
    )
    assert world.device["network_technology_connected"] == "2G"
    failed = ok(world.user("set_network_mode_preference", mode="6g"))
    assert failed == (
        "Failed to set network mode: '6g' is not a valid option. Please use one of: 4g_5g_preferred, 4g_only, "
        "3g_only, 2g_only\nStatus Bar: 📶¹ Poor | 2G | 📱 Data Enabled | 🔋 80%"
    )
    assert world.device["network_mode_preference"] == "2g_only"


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ({}, "Speed Test Result: 275.00 Mbps (Excellent). Connection is very fast."),
        ({"network_mode_preference": "4g_only"},
         "Speed Test Result: 44.00 Mbps (Good). Connection is good for most activities, including HD streaming."),
        ({"network_mode_preference": "3g_only"},
         "Speed Test Result: 1.50 Mbps (Poor). Connection is slow. Web browsing may be sluggish, streaming difficult."),
        ({"network_mode_preference": "2g_only"},
         "Speed Test Result: 0.05 Mbps (Very Poor). Connection is very slow. Basic web browsing might be difficult."),
        ({"data_saver_mode": True},
         "Speed Test Result: 55.00 Mbps (Good). Connection is good for most activities, including HD streaming."),
        ({"data_saver_mode": True, "vpn": "poor"},
         "Speed Test Result: 5.50 Mbps (Fair). Connection is okay for web browsing and some standard definition "
         "streaming."),
        ({"vpn": "poor"},
         "Speed Test Result: 27.50 Mbps (Good). Connection is good for most activities, including HD streaming."),
        ({"vpn": "excellent"}, "Speed Test Result: 275.00 Mbps (Excellent). Connection is very fast."),
        ({"data_enabled": False}, "Speed test failed: No Connection."),
    ],
)  # fmt: skip
def test_speed_test_formula(world: World, setup: dict[str, Any], expected: str) -> None:
    setup = dict(setup)
    vpn = setup.pop("vpn", None)
    world.device.update(setup)
    if vpn:
        world.device["vpn_connected"] = True
        world.device["vpn_details"] = {"server_address": None, "protocol": None, "server_performance": vpn}
    world.fn("user", "simulate_network_search")
    assert ok(world.user("run_speed_test")) == expected


def test_airplane_mode_drops_wifi_and_vpn(world: World) -> None:
    world.device.update(wifi_enabled=True, wifi_connected=True, wifi_ssid="home", wifi_signal_strength="good")
    ok(world.user("connect_vpn"))
    assert ok(world.user("toggle_airplane_mode")) == "Airplane Mode is now ON.\nStatus Bar: ✈️ Airplane Mode | 🔋 80%"
    assert world.device["wifi_connected"] is False and world.device["wifi_ssid"] is None
    assert world.device["vpn_connected"] is False and world.device["vpn_details"] is None
    assert world.device["network_connection_status"] == "no_service"
    assert ok(world.user("toggle_wifi")) == (
        "Cannot change Wi-Fi settings while Airplane Mode is ON.\nStatus Bar: ✈️ Airplane Mode | 🔋 80%"
    )
    assert ok(world.user("toggle_airplane_mode")) == f"Airplane Mode is now OFF.\n{BAR}"
    assert world.device["network_connection_status"] == "connected"


def test_sim_card(world: World) -> None:
    assert ok(world.user("check_sim_status")) == "Your SIM card is active and working."
    world.fn("user", "unseat_sim_card")
    assert ok(world.user("check_sim_status")) == "No SIM card detected in the phone."
    assert world.device["network_connection_status"] == "no_service"
    assert ok(world.user("reseat_sim_card")) == f"SIM card re-seated successfully.\n{BAR}"
    assert world.fn("user", "lock_sim_card", mode="puk") == "SIM card locked successfully in puk mode."
    assert ok(world.user("check_sim_status")) == "The SIM card is locked with a PUK code."
    assert ok(world.user("reseat_sim_card")).startswith("SIM card re-seated successfully.\nStatus Bar: 📵 No Signal")


def test_data_roaming_and_saver_toggles(world: World) -> None:
    assert ok(world.user("toggle_data")) == (
        "Mobile Data is now OFF.\nStatus Bar: 📶⁴ Excellent | 5G | 📵 Data Disabled | 🔋 80%"
    )
    assert ok(world.user("toggle_data")).startswith("Mobile Data is now ON.")
    assert ok(world.user("toggle_roaming")).startswith("Data Roaming is now ON.\nStatus Bar:")
    assert world.device["roaming_enabled"] is True
    assert ok(world.user("check_data_restriction_status")) == "Data Saver mode is OFF."
    assert ok(world.user("toggle_data_saver_mode")) == (
        "Data Saver Mode is now ON.\nStatus Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled | 🔽 Data Saver | 🔋 80%"
    )
    assert ok(world.user("check_data_restriction_status")) == "Data Saver mode is ON (limits data usage)."


def test_apn_settings(world: World) -> None:
    assert ok(world.user("check_apn_settings")) == (
        "Current APN Name: internet\nMMSC URL (for picture messages): http://mms.carrier.com/mms/wapenc\n"
        "(These are technical settings, usually best left unchanged.)"
    )
    world.fn("user", "break_apn_settings")
    assert world.device["network_connection_status"] == "no_service"
    assert ok(world.user("reset_apn_settings")) == (
        "APN settings will reset at reboot.\nStatus Bar: 📵 No Signal | 📵 Data Disabled | 🔋 80%"
    )
    assert ok(world.user("reboot_device")) == f"Resetting APN settings...\nRestarting network services...\n{BAR}"
    assert world.device["active_apn_settings"] == default_apn_settings()
    assert ok(world.user("reboot_device")) == f"Restarting network services...\n{BAR}"
    assert ok(world.user("set_apn_settings", apn_settings={"apn_name": "broken", "mmsc_url": None})) == (
        "APN settings set to: broken\nStatus Bar: 📵 No Signal | 📵 Data Disabled | 🔋 80%"
    )
    assert ok(world.user("check_apn_settings")).startswith(
        "Current APN Name: broken\nMMSC URL (for picture messages): Not Set"
    )
    assert err(world.user("set_apn_settings", apn_settings={"apn_name": "fast"})).startswith(
        "Error: 1 validation error for APNSettings\napn_name\n"
    )


def test_wifi_and_wifi_calling(world: World) -> None:
    assert ok(world.user("check_wifi_status")) == "Wi-Fi is turned OFF."
    assert ok(world.user("toggle_wifi")) == f"Wi-Fi is now ON.\n{BAR0}"
    assert ok(world.user("check_wifi_status")) == "Wi-Fi is ON but not connected to any network."
    world.device.update(wifi_connected=True, wifi_ssid="home", wifi_signal_strength="fair")
    assert ok(world.user("check_wifi_status")) == "Wi-Fi is ON and connected to 'home'. Signal strength: fair."
    assert ok(world.user("check_status_bar")).endswith("| 📡 Connected to home | 🔋 80%")
    assert ok(world.user("check_wifi_calling_status")) == "Wi-Fi Calling is currently turned OFF."
    assert ok(world.user("toggle_wifi_calling")).startswith("Wi-Fi Calling is now ON.\nStatus Bar:")
    assert world.fn("user", "set_wifi_calling", enabled=False, mms_over_wifi=True) == (
        "Wi-Fi Calling is now OFF.\nMMS over Wi-Fi is now ON."
    )


def test_vpn(world: World) -> None:
    assert ok(world.user("check_vpn_status")) == "VPN is turned OFF."
    assert ok(world.user("disconnect_vpn")) == f"No active VPN connection to disconnect.\n{BAR0}"
    assert ok(world.user("connect_vpn")) == (
        "VPN connected successfully.\nStatus Bar: 📶³ Good | 5G | 📱 Data Enabled | 🔒 VPN Connected | 🔋 80%"
    )
    assert ok(world.user("connect_vpn")) == "VPN already connected."
    world.fn("user", "break_vpn")
    assert ok(world.user("check_vpn_status")) == (
        "VPN is ON and connected. Details: {'server_address': '192.168.1.1', 'protocol': 'OpenVPN', "
        "'server_performance': <PerformanceLevel.POOR: 'poor'>}"
    )
    assert ok(world.user("disconnect_vpn")) == f"VPN disconnected successfully.\n{BAR0}"
    world.device["vpn_enabled_setting"] = True
    assert ok(world.user("check_vpn_status")) == "VPN is turned ON in settings, but currently not connected."


def test_apps_and_permissions(world: World) -> None:
    assert ok(world.user("check_installed_apps")) == "The following apps are installed on the phone: messaging, browser"
    assert ok(world.user("check_app_status", app_name="messaging")) == (
        "Status for App: messaging\n - Permissions Granted:\n   - sms\n   - storage\n   - phone"
    )
    assert ok(world.user("check_app_permissions", app_name="browser")) == (
        "App 'browser' has permission for: storage, network."
    )
    assert ok(world.user("check_app_permissions", app_name="camera")) == "App 'camera' not found on this phone."
    for permission in ("sms", "storage", "phone"):
        assert world.fn("user", "remove_app_permission", app_name="messaging", permission=permission) == (
            True, f"Permission '{permission}' removed from app 'messaging'.",
        )  # fmt: skip
    assert ok(world.user("check_app_permissions", app_name="messaging")) == (
        "App 'messaging' currently has no permissions granted."
    )
    assert ok(world.user("check_app_status", app_name="messaging")) == (
        "Status for App: messaging\n - Permissions: None granted."
    )
    result = world.user("grant_app_permission", app_name="messaging", permission="SMS")
    assert ok(result) == f"Success. Permission 'sms' granted to app 'messaging'.\n{BAR0}"
    assert world.device["app_statuses"]["messaging"]["permissions"]["sms"] is True
    assert ok(world.user("grant_app_permission", app_name="messaging", permission="camera")) == (
        "Error. Permission 'camera' not tracked for app 'messaging', available permissions: "
        f"['sms', 'storage', 'phone', 'network']\n{BAR0}"
    )
    assert ok(world.user("grant_app_permission", app_name="maps", permission="sms")) == (
        f"Error. App 'maps' not found. Cannot grant permission.\n{BAR0}"
    )
    assert world.user_env.actions[-1]["name"] == "grant_app_permission"


@pytest.mark.parametrize(
    "breakage",
    ["airplane", "no_data", "2g", "wifi_mms", "no_mmsc", "no_sms", "no_storage", "no_app", "abroad", "exceeded"],
)
def test_can_send_mms_conditions(world: World, breakage: str) -> None:
    assert ok(world.user("can_send_mms")) == "Your messaging app can send MMS messages."
    d, where = world.device, world.user_db["surroundings"]
    if breakage == "airplane":
        world.fn("user", "turn_airplane_mode_on")
    elif breakage == "no_data":
        world.fn("user", "turn_data_off")
    elif breakage == "2g":
        ok(world.user("set_network_mode_preference", mode="2g_only"))
    elif breakage == "wifi_mms":
        world.fn("user", "set_wifi_calling", enabled=True, mms_over_wifi=True)
    elif breakage == "no_mmsc":
        world.fn("user", "break_apn_mms_setting")
    elif breakage in ("no_sms", "no_storage"):
        world.fn("user", "remove_app_permission", app_name="messaging", permission=breakage[3:])
    elif breakage == "no_app":
        del d["app_statuses"]["messaging"]
    elif breakage == "abroad":
        where["is_abroad"] = True  # phone roaming is off
    elif breakage == "exceeded":
        where["mobile_data_usage_exceeded"] = True
    assert ok(world.user("can_send_mms")) == "Your messaging app cannot send MMS messages."


def test_wifi_calling_alone_keeps_mms(world: World) -> None:
    world.fn("user", "set_wifi_calling", enabled=True, mms_over_wifi=False)
    assert ok(world.user("can_send_mms")) == "Your messaging app can send MMS messages."


# --- set-up functions, run_function and sync ---------------------------------------------


def test_run_function_dispatch_and_errors(world: World) -> None:
    assert world.fn("assistant", "get_available_plan_ids") == ["P1001", "P1002", "P1003", "P1004", "P1005"]
    assert world.fn("agent", "set_data_usage", customer_id="C1001", line_id="L1002", data_used_gb=15.1) == (
        "Data usage set to 15.1 GB for line L1002"
    )
    roaming = world.fn("assistant", "enable_roaming", customer_id="C1001", line_id="L1002")
    assert roaming == "Roaming was already enabled"
    assert world.fn("user", "assert_can_send_mms", expected_status=True) is True
    with pytest.raises(UnknownFunctionError, match="Function fly not found in user tools") as caught:
        world.fn("user", "fly")
    assert isinstance(caught.value, KeyError) and isinstance(caught.value, ToolError)
    with pytest.raises(KeyError):
        world.fn("assistant", "toggle_data")  # a phone function named on the carrier side
    with pytest.raises(ToolError, match="Invalid environment type: phone"):
        run_function(world.db, world.user_db, "phone", "toggle_data", {})


def test_suspend_line_for_overdue_bill(world: World) -> None:
    text = world.fn(
        "assistant",
        "suspend_line_for_overdue_bill",
        customer_id="C1001",
        line_id="L1002",
        new_bill_id="B1234321",
        contract_ended=True,
    )
    assert text == "Line L1002 suspended for unpaid bill B1234321. Contract ended: True"
    bill = world.bill("B1234321")
    assert bill["status"] == "Overdue" and bill["total_due"] == 65.0
    assert [str(bill[k]) for k in ("period_start", "period_end", "issue_date", "due_date")] == [
        "2025-01-01", "2025-01-31", "2025-01-01", "2025-01-15",
    ]  # fmt: skip
    (item,) = bill["line_items"]
    assert item == {"description": "Charge for line L1002", "amount": 65.0, "date": item["date"], "item_type": "Charge"}
    assert str(item["date"]) == "2025-02-25"
    line = world.line("L1002")
    assert line["status"] == "Suspended" and str(line["contract_end_date"]) == "2025-01-31"
    with pytest.raises(ToolError, match="Line must be active to suspend for unpaid bill"):
        world.fn(
            "assistant",
            "suspend_line_for_overdue_bill",
            customer_id="C1001",
            line_id="L1002",
            new_bill_id="B2",
            contract_ended=False,
        )


def test_sync_is_a_no_op_until_the_phone_number_is_set(world: World) -> None:
    before = db_hash(world.user_db)
    world.line("L1002")["status"] = "Suspended"
    sync_state(world.db, world.user_db)
    assert db_hash(world.user_db) == before


def test_sync_copies_line_state_and_carries_payments(world: World) -> None:
    world.fn("user", "set_user_info", name="John Smith", phone_number="555-123-2002")
    where = world.user_db["surroundings"]
    assert (where["line_active"], where["roaming_allowed"], where["mobile_data_usage_exceeded"]) == (True, True, False)
    world.fn("assistant", "set_data_usage", customer_id="C1001", line_id="L1002", data_used_gb=15.0)
    assert where["mobile_data_usage_exceeded"] is True  # 15.0 >= 15.0 + 0.0
    ok(world.agent("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=1.0))
    assert where["mobile_data_usage_exceeded"] is False
    ok(world.agent("disable_roaming", customer_id="C1001", line_id="L1002"))
    assert where["roaming_allowed"] is False
    # payment: request appears on the phone, paying settles the bill
    assert ok(world.user("check_payment_request")) == "No payment request has been made."
    assert ok(world.user("make_payment")) == "You do not have a payment request."
    ok(world.agent("send_payment_request", customer_id="C1001", bill_id="B1002"))
    assert where["payment_request"] == {"bill_id": "B1002", "amount_due": 150.0, "paid": False}
    assert ok(world.user("check_payment_request")) == "You have a payment request for bill B1002 of 150.0 USD."
    assert ok(world.user("make_payment")) == "Payment of 150.0 USD has been made for bill B1002."
    assert world.bill("B1002")["status"] == "Paid" and where["payment_request"] is None
    # an inactive line only shows on the phone after a network search
    ok(world.agent("suspend_line", customer_id="C1001", line_id="L1002", reason="test"))
    assert where["line_active"] is False and world.device["network_connection_status"] == "connected"
    assert ok(world.user("reboot_device")).endswith("Status Bar: 📵 No Signal | 📵 Data Disabled | 🔋 80%")
    assert world.device["network_connection_status"] == "no_service"


def test_sync_with_an_unknown_number_raises(world: World) -> None:
    world.user_db["surroundings"]["phone_number"] = "555-000-0000"
    with pytest.raises(ToolError, match="Line with phone number 555-000-0000 not found"):
        sync_state(world.db, world.user_db)


# --- arguments as upstream takes them (checked against upstream's code at the pin) ---------
# Upstream converts no telecom agent argument (it builds no model from one); a value is
# compared or used in arithmetic as given. More cases: test_telecom_arguments.py.


def test_refuel_whole_number_amount_is_shown_as_given_and_added_as_a_number(world: World) -> None:
    text = ok(world.agent("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2))
    assert json.loads(text)["message"] == "Successfully added 2 GB of data for line L1002 for $4.00"
    assert world.line("L1002")["data_refueling_gb"] == 2.0 and isinstance(
        world.line("L1002")["data_refueling_gb"], float
    )
    assert world.bill("B1003")["line_items"][-1]["description"] == "Data refueling: 2 GB at $2.0/GB"


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": "2"}),  # upstream: '<=' on a str
        ("get_bills_for_customer", {"customer_id": "C1001", "limit": 1.0}),  # upstream: slice index not an int
    ],
)
def test_numbers_upstream_refuses(world: World, name: str, arguments: dict[str, Any]) -> None:
    before = db_hash(world.db)
    err(world.agent(name, **arguments))
    assert db_hash(world.db) == before and world.agent_env.actions == []


# upstream only formats the reason into a log line, so any value is accepted and the line suspended
def test_suspend_line_reason_of_any_type_like_upstream(world: World) -> None:
    ok(world.agent("suspend_line", customer_id="C1001", line_id="L1001", reason=5))
    assert world.line("L1001")["status"] == "Suspended"
