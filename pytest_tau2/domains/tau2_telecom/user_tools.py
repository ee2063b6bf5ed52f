"""The phone's tools: what the simulated user can check and change on their device (30, upstream's order).

Each tool works on the phone DB dict (``self.db``: ``{"device", "surroundings"}``) and answers
with upstream's exact text. Most changes end with a ``Status Bar: ...`` line. Nothing here
touches the carrier DB: the core keeps the two in step with
:func:`pytest_tau2.domains.tau2_telecom.sync.sync_state` after each successful call.
The second half of the tools (Wi-Fi calling, VPN, apps, MMS, reboot, payment) lives in
:mod:`.user_tools_apps`; the base class in :mod:`.user_base`.
"""

from __future__ import annotations

from typing import Literal, cast

from pydantic import BaseModel, ConfigDict

from pytest_tau2.domains.tau2_common.tools import upstream_model
from pytest_tau2.domains.tau2_telecom import device as phone
from pytest_tau2.domains.tau2_telecom.db import APN_SETTINGS, DEFAULT_MMSC_URL, NETWORK_MODES, build_record
from pytest_tau2.domains.tau2_telecom.records import APNSettings as APNRecord
from pytest_tau2.domains.tau2_telecom.tools import params
from pytest_tau2.domains.tau2_telecom.user_base import (
    USER_NAMESPACE,
    TelecomUserTool,
    on_off,
    write_tool,
    yes_no,
)
from pytest_tau2.domains.tau2_telecom.user_tools_apps import (
    CanSendMmsTool,
    CheckAppPermissionsTool,
    CheckAppStatusTool,
    CheckInstalledAppsTool,
    CheckPaymentRequestTool,
    CheckVpnStatusTool,
    CheckWifiCallingStatusTool,
    ConnectVpnTool,
    DisconnectVpnTool,
    GrantAppPermissionTool,
    MakePaymentTool,
    RebootDeviceTool,
    ToggleWifiCallingTool,
)
from pytest_tau2.environment.jsontypes import JSONObject

__all__ = ["USER_ACTION_NAME_TO_TOOL", "USER_NAMESPACE", "USER_TOOL_CLASSES", "TelecomUserTool"]

_SIM_TEXT = {
    "active": "Your SIM card is active and working.",
    "missing": "No SIM card detected in the phone.",
    "locked_pin": "The SIM card is locked with a PIN code.",
    "locked_puk": "The SIM card is locked with a PUK code.",
}
_SPEED_ADVICE = {
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}


class CheckStatusBarTool(TelecomUserTool):
    name = "check_status_bar"
    description = "Show the icons in the phone's status bar: signal, network type, mobile data, Wi-Fi, VPN, battery."

    def run(self) -> str:
        return f"Status Bar: {phone.status_bar(self.device)}"


class CheckNetworkStatusTool(TelecomUserTool):
    name = "check_network_status"
    description = "Show airplane mode, SIM, cellular connection, signal, network type, mobile data, roaming and Wi-Fi."

    def run(self) -> str:
        d = self.device
        lines = [
            f"Airplane Mode: {on_off(d['airplane_mode'])}",
            f"SIM Card Status: {phone.sim_status(d)}",
            f"Cellular Connection: {d['network_connection_status']}",
            f"Cellular Signal: {d['network_signal_strength']}",
            f"Cellular Network Type: {d['network_technology_connected']}",
            f"Mobile Data Enabled: {yes_no(d['data_enabled'])}",
            f"Data Roaming Enabled: {yes_no(d['roaming_enabled'])}",
            f"Wi-Fi Radio: {on_off(d['wifi_enabled'])}",
            f"Wi-Fi Connected: {yes_no(d['wifi_connected'])}",
        ]
        if d["wifi_connected"]:
            lines.append(f"Connected Wi-Fi Network: {d['wifi_ssid']}")
        return "\n".join(lines)


class CheckNetworkModePreferenceTool(TelecomUserTool):
    name = "check_network_mode_preference"
    description = "Show which cellular network types the phone is set to use."

    def run(self) -> str:
        return f"Network Mode Preference: {self.device['network_mode_preference']}"


@write_tool
class SetNetworkModePreferenceTool(TelecomUserTool):
    name = "set_network_mode_preference"
    description = (
        "Choose which cellular network types the phone may use: 4g_5g_preferred, 4g_only, 3g_only or 2g_only. "
        "Faster types give faster data and may use more battery."
    )
    parameters = params("mode", mode=("string", "One of 4g_5g_preferred, 4g_only, 3g_only, 2g_only."))

    def run(self, mode: str) -> str:
        if mode not in NETWORK_MODES:
            return self.bar(
                f"Failed to set network mode: '{mode}' is not a valid option. "
                f"Please use one of: {', '.join(NETWORK_MODES)}"
            )
        self.device["network_mode_preference"] = mode
        phone.simulate_network_search(self.db)
        return self.bar(f"Preferred Network Mode set to: {mode}")


class RunSpeedTestTool(TelecomUserTool):
    name = "run_speed_test"
    description = "Measure the phone's current download speed and say what it is good for."

    def run(self) -> str:
        speed, label = phone.speed_test(self.db)
        if speed is None:
            return f"Speed test failed: {label or 'Could not determine speed'}."
        return f"Speed Test Result: {speed:.2f} Mbps ({label}). {_SPEED_ADVICE.get(label, '')}"


@write_tool
class ToggleAirplaneModeTool(TelecomUserTool):
    name = "toggle_airplane_mode"
    description = "Switch airplane mode on or off. On cuts every radio: cellular, Wi-Fi, Bluetooth."

    def run(self) -> str:
        return self.bar(f"Airplane Mode is now {on_off(phone.toggle_airplane_mode(self.db))}.")


class CheckSimStatusTool(TelecomUserTool):
    name = "check_sim_status"
    description = "Check whether the SIM card works: active, missing, or locked with a PIN or PUK code."

    def run(self) -> str:
        status = phone.sim_status(self.device)
        return _SIM_TEXT.get(status, f"Unknown SIM status: {status}")


@write_tool
class ReseatSimCardTool(TelecomUserTool):
    name = "reseat_sim_card"
    description = "Take the SIM card out and put it back in, which can fix a SIM that is not recognised."

    def run(self) -> str:
        self.device["sim_card_missing"] = False
        phone.simulate_network_search(self.db)
        return self.bar("SIM card re-seated successfully.")


@write_tool
class ToggleDataTool(TelecomUserTool):
    name = "toggle_data"
    description = "Switch mobile data on or off (internet over the cellular network when there is no Wi-Fi)."

    def run(self) -> str:
        return self.bar(f"Mobile Data is now {on_off(phone.toggle_data(self.db))}.")


@write_tool
class ToggleRoamingTool(TelecomUserTool):
    name = "toggle_roaming"
    description = "Switch data roaming on or off: whether the phone may use data on networks outside the carrier's own."

    def run(self) -> str:
        return self.bar(f"Data Roaming is now {on_off(phone.toggle_roaming(self.db))}.")


class CheckDataRestrictionStatusTool(TelecomUserTool):
    name = "check_data_restriction_status"
    description = "Check whether a data-limiting feature (Data Saver) is on."

    def run(self) -> str:
        if self.device["data_saver_mode"]:
            return "Data Saver mode is ON (limits data usage)."
        return "Data Saver mode is OFF."


@write_tool
class ToggleDataSaverModeTool(TelecomUserTool):
    name = "toggle_data_saver_mode"
    description = "Switch Data Saver on or off. On reduces data use and can make data slower."

    def run(self) -> str:
        return self.bar(f"Data Saver Mode is now {on_off(phone.toggle_data_saver_mode(self.db))}.")


class CheckApnSettingsTool(TelecomUserTool):
    name = "check_apn_settings"
    description = "Show the APN settings used to reach the carrier's data network: APN name and MMSC URL."

    def run(self) -> str:
        apn = self.device["active_apn_settings"]
        return (
            f"Current APN Name: {apn['apn_name'] or 'Not Set'}\n"
            f"MMSC URL (for picture messages): {apn['mmsc_url'] or 'Not Set'}\n"
            "(These are technical settings, usually best left unchanged.)"
        )


class APNSettings(BaseModel):
    """The APN record as upstream's ``set_apn_settings`` validates it: pydantic's lax mode, so
    ``"true"`` is a bool and ``"8080"`` or ``8080.0`` a port; unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")

    apn_name: Literal["internet", "broken"] = "internet"
    reset_at_reboot: bool = False
    mms_apn: str | None = "mms"
    mmsc_url: str | None = DEFAULT_MMSC_URL
    mms_proxy: str | None = None
    mms_port: int | None = None


@write_tool
class SetApnSettingsTool(TelecomUserTool):
    name = "set_apn_settings"
    description = "Replace the phone's APN settings (fields not given take their default values)."
    parameters = params(
        "apn_settings",
        apn_settings=(
            "object",
            "The new settings: apn_name ('internet' or 'broken'), reset_at_reboot, mms_apn, mmsc_url, "
            "mms_proxy, mms_port.",
        ),
    )

    def run(self, apn_settings: JSONObject) -> str:
        # Upstream builds its APN model from the object (the JSON Schema check keeps out a
        # non-object, which upstream would store before failing); the record keeps our field order.
        model = upstream_model(APNSettings, apn_settings)
        settings = cast(APNRecord, build_record(APN_SETTINGS, model, "apn_settings"))
        self.device["active_apn_settings"] = settings
        phone.simulate_network_search(self.db)
        return self.bar(f"APN settings set to: {settings['apn_name']}")


@write_tool
class ResetApnSettingsTool(TelecomUserTool):
    name = "reset_apn_settings"
    description = "Restore the default APN settings; the reset takes effect at the next reboot."

    def run(self) -> str:
        self.device["active_apn_settings"]["reset_at_reboot"] = True
        phone.simulate_network_search(self.db)
        return self.bar("APN settings will reset at reboot.")


class CheckWifiStatusTool(TelecomUserTool):
    name = "check_wifi_status"
    description = "Check whether Wi-Fi is on, which network it is connected to and how strong its signal is."

    def run(self) -> str:
        d = self.device
        if not d["wifi_enabled"]:
            return "Wi-Fi is turned OFF."
        if d["wifi_connected"]:
            return f"Wi-Fi is ON and connected to '{d['wifi_ssid']}'. Signal strength: {d['wifi_signal_strength']}."
        return "Wi-Fi is ON but not connected to any network."


@write_tool
class ToggleWifiTool(TelecomUserTool):
    name = "toggle_wifi"
    description = "Switch the Wi-Fi radio on or off."

    def run(self) -> str:
        state = phone.toggle_wifi(self.db)
        if state is None:
            return self.bar("Cannot change Wi-Fi settings while Airplane Mode is ON.")
        return self.bar(f"Wi-Fi is now {on_off(state)}.")


USER_TOOL_CLASSES: tuple[type[TelecomUserTool], ...] = (
    CheckStatusBarTool,
    CheckNetworkStatusTool,
    CheckNetworkModePreferenceTool,
    SetNetworkModePreferenceTool,
    RunSpeedTestTool,
    ToggleAirplaneModeTool,
    CheckSimStatusTool,
    ReseatSimCardTool,
    ToggleDataTool,
    ToggleRoamingTool,
    CheckDataRestrictionStatusTool,
    ToggleDataSaverModeTool,
    CheckApnSettingsTool,
    SetApnSettingsTool,
    ResetApnSettingsTool,
    CheckWifiStatusTool,
    ToggleWifiTool,
    CheckWifiCallingStatusTool,
    ToggleWifiCallingTool,
    CheckVpnStatusTool,
    ConnectVpnTool,
    DisconnectVpnTool,
    CheckInstalledAppsTool,
    CheckAppStatusTool,
    CheckAppPermissionsTool,
    GrantAppPermissionTool,
    CanSendMmsTool,
    RebootDeviceTool,
    CheckPaymentRequestTool,
    MakePaymentTool,
)

USER_ACTION_NAME_TO_TOOL: dict[str, type[TelecomUserTool]] = {
    cls.action_name: cls for cls in USER_TOOL_CLASSES if cls.action_name
}
