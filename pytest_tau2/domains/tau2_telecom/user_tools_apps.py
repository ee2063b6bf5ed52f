"""Phone tools, second half: Wi-Fi calling, VPN, apps, MMS, reboot, payment requests."""

from __future__ import annotations

from pytest_tau2.domains.tau2_common.tools import no_attribute
from pytest_tau2.domains.tau2_telecom import device as phone
from pytest_tau2.domains.tau2_telecom.db import PERMISSIONS
from pytest_tau2.domains.tau2_telecom.records import AppStatus, DeviceState, VPNDetails
from pytest_tau2.domains.tau2_telecom.tools import params
from pytest_tau2.domains.tau2_telecom.user_base import TelecomUserTool, on_off, write_tool
from pytest_tau2.environment.jsontypes import JSONValue
from pytest_tau2.errors import ToolError

APP_NAME = ("string", "The app's name, e.g. messaging.")


def named_app(device: DeviceState, app_name: JSONValue) -> AppStatus | None:
    """The app ``app_name`` names, taken as upstream takes it: upstream looks the name up in a
    dict as given, so another JSON scalar finds no app and a list or an object refuses the call."""
    if isinstance(app_name, list | dict):
        raise ToolError(f"unhashable type: '{type(app_name).__name__}'")
    return phone.find_app(device, app_name)


class CheckWifiCallingStatusTool(TelecomUserTool):
    name = "check_wifi_calling_status"
    description = "Check whether Wi-Fi Calling (calls over Wi-Fi instead of the cellular network) is on."

    def run(self) -> str:
        return f"Wi-Fi Calling is currently turned {on_off(self.device['wifi_calling_enabled'])}."


@write_tool
class ToggleWifiCallingTool(TelecomUserTool):
    name = "toggle_wifi_calling"
    description = "Switch Wi-Fi Calling on or off; it helps where the cellular signal is weak."

    def run(self) -> str:
        return self.bar(f"Wi-Fi Calling is now {on_off(phone.toggle_wifi_calling(self.db))}.")


def vpn_details_text(details: VPNDetails) -> str:
    """The VPN details as upstream prints them (a Python dict repr with the performance enum)."""
    level = details["server_performance"]
    return (
        f"{{'server_address': {details['server_address']!r}, 'protocol': {details['protocol']!r}, "
        f"'server_performance': <PerformanceLevel.{level.upper()}: {level!r}>}}"
    )


class CheckVpnStatusTool(TelecomUserTool):
    name = "check_vpn_status"
    description = "Check whether a VPN is switched on and connected, with its connection details."

    def run(self) -> str:
        d = self.device
        if d["vpn_connected"]:
            if d["vpn_details"]:
                return f"VPN is ON and connected. Details: {vpn_details_text(d['vpn_details'])}"
            return "VPN is ON and connected (no specific details available)."
        if d["vpn_enabled_setting"]:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."


@write_tool
class ConnectVpnTool(TelecomUserTool):
    name = "connect_vpn"
    description = "Connect the VPN."

    def run(self) -> str:
        if phone.connect_vpn(self.db) is None:
            return "VPN already connected."
        return self.bar("VPN connected successfully.")


@write_tool
class DisconnectVpnTool(TelecomUserTool):
    name = "disconnect_vpn"
    description = "Disconnect the VPN, so traffic no longer goes through a VPN server (this can change speed)."

    def run(self) -> str:
        done = phone.disconnect_vpn(self.db)
        return self.bar("VPN disconnected successfully." if done else "No active VPN connection to disconnect.")


class CheckInstalledAppsTool(TelecomUserTool):
    name = "check_installed_apps"
    description = "List the apps installed on the phone."

    def run(self) -> str:
        return f"The following apps are installed on the phone: {', '.join(self.device['app_statuses'])}"


class CheckAppStatusTool(TelecomUserTool):
    name = "check_app_status"
    description = "Show one app's details, including the permissions it has."
    parameters = params("app_name", app_name=APP_NAME)
    check_argument_types = False  # upstream: a name of another type finds no app

    def run(self, app_name: JSONValue) -> str:
        app = named_app(self.device, app_name)
        if app is None:
            return f"App '{app_name}' not found on this phone."
        granted = phone.granted_permissions(app)
        lines = [f"Status for App: {app_name}"]
        if granted:
            lines.append(" - Permissions Granted:")
            lines.extend(f"   - {name}" for name in granted)
        else:
            lines.append(" - Permissions: None granted.")
        return "\n".join(lines)


class CheckAppPermissionsTool(TelecomUserTool):
    name = "check_app_permissions"
    description = "Show which permissions one app has (sms, storage, phone, network)."
    parameters = params("app_name", app_name=APP_NAME)
    check_argument_types = False  # upstream: a name of another type finds no app

    def run(self, app_name: JSONValue) -> str:
        app = named_app(self.device, app_name)
        if app is None:
            return f"App '{app_name}' not found on this phone."
        granted = phone.granted_permissions(app)
        if not granted:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(granted)}."


@write_tool
class GrantAppPermissionTool(TelecomUserTool):
    name = "grant_app_permission"
    description = "Give an app one permission (sms, storage, phone or network); some app features need it."
    parameters = params(
        "app_name",
        "permission",
        app_name=APP_NAME,
        permission=("string", "The permission to grant, in lowercase: sms, storage, phone or network."),
    )
    check_argument_types = False  # upstream: a name of another type finds no app; a non-text permission refuses

    def run(self, app_name: JSONValue, permission: JSONValue) -> str:
        app = named_app(self.device, app_name)
        if not isinstance(permission, str):
            raise no_attribute(permission, "lower")
        permission = permission.lower()
        if app is None:
            outcome = f"Error. App '{app_name}' not found. Cannot grant permission."
        elif permission not in PERMISSIONS:
            outcome = (
                f"Error. Permission '{permission}' not tracked for app '{app_name}', "
                f"available permissions: {list(PERMISSIONS)}"
            )
        else:
            app["permissions"][permission] = True
            outcome = f"Success. Permission '{permission}' granted to app '{app_name}'."
        return self.bar(outcome)


class CanSendMmsTool(TelecomUserTool):
    name = "can_send_mms"
    description = "Check whether the messaging app can send MMS (picture) messages."

    def run(self) -> str:
        if phone.can_send_mms(self.db):
            return "Your messaging app can send MMS messages."
        return "Your messaging app cannot send MMS messages."


@write_tool
class RebootDeviceTool(TelecomUserTool):
    name = "reboot_device"
    description = "Restart the phone, which clears many temporary glitches and reconnects every service."

    def run(self) -> str:
        return self.bar("\n".join(phone.reboot(self.db)))


class CheckPaymentRequestTool(TelecomUserTool):
    name = "check_payment_request"
    description = "Check whether the agent has sent a payment request."

    def run(self) -> str:
        request = self.db["surroundings"]["payment_request"]
        if request is None:
            return "No payment request has been made."
        return f"You have a payment request for bill {request['bill_id']} of {request['amount_due']} USD."


@write_tool
class MakePaymentTool(TelecomUserTool):
    name = "make_payment"
    description = "Pay the bill of the payment request the agent sent."

    def run(self) -> str:
        request = self.db["surroundings"]["payment_request"]
        if request is None:
            return "You do not have a payment request."
        request["paid"] = True
        return f"Payment of {request['amount_due']} USD has been made for bill {request['bill_id']}."
