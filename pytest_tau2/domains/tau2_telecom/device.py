"""The simulated phone: what works and what a change does, over the phone DB dict.

``user_db`` is ``{"device": {...}, "surroundings": {...}}`` (see :mod:`.db`). The *read*
functions here (:func:`mobile_data_working`, :func:`speed_test`, :func:`can_send_mms`,
:func:`status_bar`, :func:`sim_status`) never modify their input: the user tools and the
db-state predicates share them. The *change* functions mutate ``user_db`` in place, as
upstream's device does; the user tools and the initialization functions share them.
"""

from __future__ import annotations

from pytest_tau2.domains.tau2_telecom.db import PERMISSIONS, default_apn_settings
from pytest_tau2.domains.tau2_telecom.records import AppStatus, DeviceState, TelecomUserDB, VPNDetails
from pytest_tau2.environment.jsontypes import JSONValue

SPEED_RANGE_MBPS = {"2G": (0.1, 0.4), "3G": (1.0, 5.0), "4G": (10.0, 100.0), "5G": (50.0, 500.0), "none": (0.0, 0.0)}
"""Download speed range per technology; a speed test reports the middle of the range."""

SIGNAL_FACTOR = {"poor": 0.2, "fair": 0.5, "good": 0.8, "excellent": 1.0, "none": 0.0}
"""Share of the technology's speed reached at each signal strength."""

SPEED_LABELS = ((1, "Very Poor"), (5, "Poor"), (25, "Fair"), (100, "Good"))
"""Upper bounds (exclusive) of each label; from 100 Mbps on the label is "Excellent"."""

DEFAULT_VPN: VPNDetails = {"server_address": "192.168.1.1", "protocol": "OpenVPN", "server_performance": "excellent"}
"""What connecting the VPN installs."""

_SIGNAL_ICONS = {
    "none": "📵 No Signal",
    "poor": "📶¹ Poor",
    "fair": "📶² Fair",
    "good": "📶³ Good",
    "excellent": "📶⁴ Excellent",
}

# --- reading the phone ------------------------------------------------------------------


def sim_status(device: DeviceState) -> str:
    """``missing`` when the SIM is out, else the card's own status."""
    return "missing" if device["sim_card_missing"] else device["sim_card_status"]


def mobile_data_working(user_db: TelecomUserDB) -> bool:
    """True when the phone can use mobile data right now.

    Not in airplane mode, some signal, not ``no_service``, abroad only with roaming on
    both on the phone and on the line, data switched on, data allowance not used up.
    """
    device, where = user_db["device"], user_db["surroundings"]
    if device["airplane_mode"] or device["network_signal_strength"] == "none":
        return False
    if device["network_connection_status"] == "no_service":
        return False
    if where["is_abroad"] and not (device["roaming_enabled"] and where["roaming_allowed"]):
        return False
    return bool(device["data_enabled"]) and not where["mobile_data_usage_exceeded"]


def speed_label(speed_mbps: float) -> str:
    for bound, label in SPEED_LABELS:
        if speed_mbps < bound:
            return label
    return "Excellent"


def speed_test(user_db: TelecomUserDB) -> tuple[float | None, str]:
    """``(speed in Mbps rounded to 2 decimals, label)``, or ``(None, "No Connection")``.

    speed = middle of the technology's range x signal factor x 0.1 when a VPN with poor
    performance is connected x 0.2 when Data Saver is on.
    """
    if not mobile_data_working(user_db):
        return None, "No Connection"
    device = user_db["device"]
    vpn = device["vpn_details"]
    slowdown = 0.1 if device["vpn_connected"] and vpn and vpn["server_performance"] == "poor" else 1.0
    if device["data_saver_mode"]:
        slowdown *= 0.2
    low, high = SPEED_RANGE_MBPS.get(device["network_technology_connected"], (0.0, 0.0))
    signal = SIGNAL_FACTOR.get(device["network_signal_strength"], 0.0)
    speed = round((low + high) / 2.0 * signal * slowdown, 2)
    return speed, speed_label(speed)


def can_send_mms(user_db: TelecomUserDB) -> bool:
    """True when the messaging app can send a picture message.

    Needs working mobile data, a technology better than 2G, not Wi-Fi calling with MMS over
    Wi-Fi (the carrier does not support it), an MMSC URL in the APN, and the messaging app
    installed with both its sms and storage permissions.
    """
    if not mobile_data_working(user_db):
        return False
    device = user_db["device"]
    if device["network_technology_connected"] == "2G":
        return False
    if device["wifi_calling_enabled"] and device["wifi_calling_mms_over_wifi"]:
        return False
    if device["active_apn_settings"]["mmsc_url"] is None:
        return False
    app = device["app_statuses"].get("messaging")
    if app is None:
        return False
    return bool(app["permissions"]["storage"] and app["permissions"]["sms"])


def status_bar(device: DeviceState) -> str:
    """The icons at the top of the screen, joined by `` | ``."""
    parts: list[str] = []
    if device["airplane_mode"]:
        parts.append("✈️ Airplane Mode")
    else:
        parts.append(_SIGNAL_ICONS.get(device["network_signal_strength"], "📵 No Signal"))
        technology = device["network_technology_connected"]
        if technology != "none":
            parts.append(technology)
        if device["data_enabled"] and technology != "none":
            parts.append("📱 Data Enabled")
            if device["data_saver_mode"]:
                parts.append("🔽 Data Saver")
        else:
            parts.append("📵 Data Disabled")
    if device["wifi_enabled"] and device["wifi_connected"]:
        parts.append(f"📡 Connected to {device['wifi_ssid']}" if device["wifi_ssid"] else "📡 Enabled")
    if device["vpn_connected"]:
        parts.append("🔒 VPN Connected")
    parts.append(f"🔋 {device['battery_level']}%")
    return " | ".join(parts)


def with_status_bar(user_db: TelecomUserDB, text: str) -> str:
    return f"{text}\nStatus Bar: {status_bar(user_db['device'])}"


def granted_permissions(app: AppStatus) -> list[str]:
    """The app's granted permissions, in field order."""
    permissions = app["permissions"]
    return [name for name in PERMISSIONS if permissions.get(name)]


def find_app(device: DeviceState, app_name: JSONValue) -> AppStatus | None:
    """The installed app ``app_name`` names (exact name first, then case/space-insensitive)."""
    apps = device["app_statuses"]
    if not isinstance(app_name, str):
        return None
    if app_name in apps:
        return apps[app_name]
    wanted = app_name.strip().casefold()
    return next((app for name, app in apps.items() if name.casefold() == wanted), None)


# --- changing the phone -----------------------------------------------------------------


def _no_network(device: DeviceState) -> None:
    device["network_connection_status"] = "no_service"
    device["network_technology_connected"] = "none"
    device["network_signal_strength"] = "none"


def simulate_network_search(user_db: TelecomUserDB) -> None:
    """Re-attach to the cellular network after a change.

    An active SIM connects with the technology its network-mode preference allows (the
    preferred 4G/5G mode takes 5G where 5G has signal, else 4G) at the signal the
    surroundings give that technology. A missing or locked SIM, airplane mode, a broken
    APN, or an inactive line leaves the phone without service.
    """
    device, where = user_db["device"], user_db["surroundings"]
    signal_at = where["signal_strength"]
    if sim_status(device) == "active":
        device["network_connection_status"] = "connected"
        preference = device["network_mode_preference"]
        if preference == "4g_5g_preferred":
            technology = "4G" if signal_at.get("5G", "none") == "none" else "5G"
        elif preference == "3g_only":
            technology = "3G"
        elif preference == "2g_only":
            technology = "2G"
        else:  # 4g_only and anything unexpected
            technology = "4G"
        device["network_technology_connected"] = technology
        device["network_signal_strength"] = signal_at.get(technology, "none")
    else:
        _no_network(device)
    if device["airplane_mode"] or device["active_apn_settings"]["apn_name"] == "broken" or not where["line_active"]:
        _no_network(device)


def _forget_wifi_network(device: DeviceState) -> None:
    device["wifi_connected"] = False
    device["wifi_ssid"] = None
    device["wifi_signal_strength"] = "none"


def toggle_airplane_mode(user_db: TelecomUserDB) -> bool:
    """Flip airplane mode (turning it on drops Wi-Fi and the VPN), then search; the new state."""
    device = user_db["device"]
    was_on = device["airplane_mode"]
    device["airplane_mode"] = not was_on
    if was_on:
        device["network_connection_status"] = "searching"
        if device["wifi_enabled"]:
            _forget_wifi_network(device)
    else:
        _forget_wifi_network(device)
        if device["vpn_connected"]:
            disconnect_vpn(user_db)
    simulate_network_search(user_db)
    return bool(device["airplane_mode"])


def toggle_data(user_db: TelecomUserDB) -> bool:
    device = user_db["device"]
    device["data_enabled"] = not device["data_enabled"]
    simulate_network_search(user_db)
    return bool(device["data_enabled"])


def toggle_roaming(user_db: TelecomUserDB) -> bool:
    device = user_db["device"]
    device["roaming_enabled"] = not device["roaming_enabled"]
    simulate_network_search(user_db)
    return bool(device["roaming_enabled"])


def toggle_data_saver_mode(user_db: TelecomUserDB) -> bool:
    device = user_db["device"]
    device["data_saver_mode"] = not device["data_saver_mode"]
    return bool(device["data_saver_mode"])


def toggle_wifi(user_db: TelecomUserDB) -> bool | None:
    """Flip the Wi-Fi radio; None (nothing changed) while airplane mode is on."""
    device = user_db["device"]
    if device["airplane_mode"]:
        return None
    device["wifi_enabled"] = not device["wifi_enabled"]
    if not device["wifi_enabled"]:
        _forget_wifi_network(device)
    return bool(device["wifi_enabled"])


def toggle_wifi_calling(user_db: TelecomUserDB) -> bool:
    device = user_db["device"]
    device["wifi_calling_enabled"] = not device["wifi_calling_enabled"]
    return bool(device["wifi_calling_enabled"])


def connect_vpn(user_db: TelecomUserDB) -> bool | None:
    """Connect the VPN with the default server; None when it was already connected."""
    device = user_db["device"]
    if device["vpn_connected"]:
        return None
    device["vpn_connected"] = True
    device["vpn_details"] = DEFAULT_VPN.copy()  # a plain shallow copy, like dict()
    return True


def disconnect_vpn(user_db: TelecomUserDB) -> bool:
    """Drop the VPN connection; False when none was connected."""
    device = user_db["device"]
    if not device["vpn_connected"]:
        return False
    device["vpn_connected"] = False
    device["vpn_details"] = None
    return True


def reboot(user_db: TelecomUserDB) -> list[str]:
    """Restart the phone: apply a pending APN reset, then search again; the progress lines."""
    device = user_db["device"]
    lines = []
    if device["active_apn_settings"]["reset_at_reboot"]:
        lines.append("Resetting APN settings...")
        device["active_apn_settings"] = default_apn_settings()
    lines.append("Restarting network services...")
    device["network_connection_status"] = "searching"
    simulate_network_search(user_db)
    return lines
