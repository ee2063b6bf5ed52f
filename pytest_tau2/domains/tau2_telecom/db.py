"""Telecom databases as plain dicts: the carrier DB (``db.toml``) and the phone DB (``user_db.toml``).

Both readers return the dict upstream's pydantic models would dump: every field of every
record present (optional ones as ``None``), keys in the models' field order (so tool results
print fields in upstream's order), str-Enums as their values, floats where the model says
float, and dates kept as ``datetime.date`` / ``datetime.datetime`` objects. With the core's
``db_hash`` (``json.dumps(..., sort_keys=True, default=str)``) a ``date`` prints as
``2025-01-20`` and a ``datetime`` as ``2025-01-20 14:30:00``: exactly upstream's hash input.

The phone DB has a ``surroundings`` block that the TOML file does not contain (where the
user is, which network signal is available there, what the carrier allows): it is filled
with upstream's defaults, as are the device fields the file leaves out.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import cast

from pytest_tau2.domains.tau2_telecom.records import APNSettings, AppStatus, TelecomDB, TelecomUserDB
from pytest_tau2.errors import DataError

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10: the tomli backport has the same API
    import tomli as tomllib  # type: ignore[no-redef]

TODAY = dt.date(2025, 2, 25)
"""The telecom clock: upstream's tools always run on 2025-02-25 (policy: 12:08 EST)."""

DEFAULT_MMSC_URL = "http://mms.carrier.com/mms/wapenc"

REQUIRED = object()
"""Marks a field without a default: reading a record that lacks it is a data error."""

Converter = Callable[[object], object]
"""A raw TOML value -> the field's value (raises TypeError or ValueError for a wrong one)."""
FieldSpec = tuple[str, Converter, object]
"""(name, converter, default): the default is :data:`REQUIRED`, a value, or a callable making one."""


# --- value converters (what pydantic's validation does to each field type) -------------


def _float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    return float(value)


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def _bool(value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {value!r}")
    return value


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value


def _date(value: object) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(_str(value))


def _datetime(value: object) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    return dt.datetime.fromisoformat(_str(value))


def _optional(convert: Converter) -> Converter:
    return lambda value: None if value is None else convert(value)


def _choice(*allowed: str) -> Callable[[object], str]:
    def convert(value: object) -> str:
        if value not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}, got {value!r}")
        return str(value)

    return convert


def _record(spec: tuple[FieldSpec, ...], where: str = "") -> Converter:
    return lambda value: build_record(spec, value, where)


def _records(spec: tuple[FieldSpec, ...], where: str = "") -> Converter:
    def convert(value: object) -> list[dict[str, object]]:
        if not isinstance(value, list):
            raise TypeError(f"expected a list, got {value!r}")
        return [build_record(spec, item, f"{where}[{i}]") for i, item in enumerate(value)]

    return convert


def _str_list(value: object) -> list[str]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {value!r}")
    return [_str(item) for item in value]


def build_record(spec: tuple[FieldSpec, ...], raw: object, where: str = "") -> dict[str, object]:
    """One record in field order, defaults filled, values converted; unknown keys refused."""
    if not isinstance(raw, dict):
        raise DataError(f"{where or 'record'}: expected a table, got {raw!r}")
    known = {name for name, _, _ in spec}
    extra = sorted(set(raw) - known)
    if extra:
        raise DataError(f"{where or 'record'}: unknown field(s) {', '.join(extra)}; known: {', '.join(sorted(known))}")
    out: dict[str, object] = {}
    for name, convert, default in spec:
        if name in raw:
            try:
                out[name] = convert(raw[name])
            except DataError:
                raise
            except (TypeError, ValueError) as exc:
                raise DataError(f"{where or 'record'}.{name}: {exc}") from exc
        elif default is REQUIRED:
            raise DataError(f"{where or 'record'}: required field {name!r} is missing")
        else:
            out[name] = default() if callable(default) else default
    return out


# --- carrier DB (TelecomDB) -------------------------------------------------------------

LINE_STATUSES = ("Active", "Suspended", "Pending Activation", "Closed")
BILL_STATUSES = ("Draft", "Issued", "Awaiting Payment", "Paid", "Overdue", "Disputed")

PLAN: tuple[FieldSpec, ...] = (
    ("plan_id", _str, REQUIRED),
    ("name", _str, REQUIRED),
    ("data_limit_gb", _float, REQUIRED),
    ("price_per_month", _float, REQUIRED),
    ("data_refueling_price_per_gb", _float, REQUIRED),
)
DEVICE: tuple[FieldSpec, ...] = (
    ("device_id", _str, REQUIRED),
    ("device_type", _choice("phone", "router", "tablet", "watch", "other"), REQUIRED),
    ("model", _str, REQUIRED),
    ("imei", _optional(_str), None),
    ("is_esim_capable", _bool, REQUIRED),
    ("activated", _bool, False),
    ("activation_date", _optional(_datetime), None),
    ("last_esim_transfer_date", _optional(_datetime), None),
)
LINE: tuple[FieldSpec, ...] = (
    ("line_id", _str, REQUIRED),
    ("phone_number", _str, REQUIRED),
    ("status", _choice(*LINE_STATUSES), "Pending Activation"),
    ("plan_id", _str, REQUIRED),
    ("device_id", _optional(_str), None),
    ("data_used_gb", _float, 0.0),
    ("data_refueling_gb", _float, 0.0),
    ("roaming_enabled", _bool, False),
    ("contract_end_date", _optional(_date), None),
    ("last_plan_change_date", _optional(_date), None),
    ("last_sim_replacement_date", _optional(_date), None),
    ("suspension_start_date", _optional(_date), None),
)
LINE_ITEM: tuple[FieldSpec, ...] = (
    ("description", _str, REQUIRED),
    ("amount", _float, REQUIRED),
    ("date", _date, REQUIRED),
    ("item_type", _str, REQUIRED),
)
BILL: tuple[FieldSpec, ...] = (
    ("bill_id", _str, REQUIRED),
    ("customer_id", _str, REQUIRED),
    ("period_start", _date, REQUIRED),
    ("period_end", _date, REQUIRED),
    ("issue_date", _date, REQUIRED),
    ("total_due", _float, REQUIRED),
    ("due_date", _date, REQUIRED),
    ("line_items", _records(LINE_ITEM, "line_items"), list),
    ("status", _choice(*BILL_STATUSES), "Draft"),
)
ADDRESS: tuple[FieldSpec, ...] = (
    ("street", _str, REQUIRED),
    ("city", _str, REQUIRED),
    ("state", _str, REQUIRED),
    ("zip_code", _str, REQUIRED),
)
PAYMENT_METHOD: tuple[FieldSpec, ...] = (
    ("method_type", _choice("Credit Card", "Debit Card", "PayPal"), REQUIRED),
    ("account_number_last_4", _str, REQUIRED),
    ("expiration_date", _str, REQUIRED),
)
CUSTOMER: tuple[FieldSpec, ...] = (
    ("customer_id", _str, REQUIRED),
    ("full_name", _str, REQUIRED),
    ("date_of_birth", _str, REQUIRED),
    ("email", _str, REQUIRED),
    ("phone_number", _str, REQUIRED),
    ("address", _record(ADDRESS, "address"), REQUIRED),
    ("account_status", _choice("Active", "Suspended", "Pending Verification", "Closed"), "Pending Verification"),
    ("payment_methods", _records(PAYMENT_METHOD, "payment_methods"), list),
    ("line_ids", _str_list, list),
    ("bill_ids", _str_list, list),
    # upstream's default is a plain date (2025-01-01) that pydantic does not convert
    ("created_at", _datetime, dt.date(2025, 1, 1)),
    ("last_extension_date", _optional(_date), None),
    ("goodwill_credit_used_this_year", _float, 0.0),
)
TELECOM_DB: tuple[FieldSpec, ...] = (
    ("plans", _records(PLAN, "plans"), list),
    ("customers", _records(CUSTOMER, "customers"), list),
    ("lines", _records(LINE, "lines"), list),
    ("bills", _records(BILL, "bills"), list),
    ("devices", _records(DEVICE, "devices"), list),
)


# --- phone DB (TelecomUserDB) -----------------------------------------------------------

SIGNALS = ("none", "poor", "fair", "good", "excellent")
TECHNOLOGIES = ("none", "2G", "3G", "4G", "5G")
NETWORK_MODES = ("4g_5g_preferred", "4g_only", "3g_only", "2g_only")
PERMISSIONS = ("sms", "storage", "phone", "network")
"""The permissions an app tracks, in upstream's field order (the order texts list them)."""

APN_SETTINGS: tuple[FieldSpec, ...] = (
    ("apn_name", _choice("internet", "broken"), "internet"),
    ("reset_at_reboot", _bool, False),
    ("mms_apn", _optional(_str), "mms"),
    ("mmsc_url", _optional(_str), DEFAULT_MMSC_URL),
    ("mms_proxy", _optional(_str), None),
    ("mms_port", _optional(_int), None),
)
VPN_DETAILS: tuple[FieldSpec, ...] = (
    ("server_address", _optional(_str), None),
    ("protocol", _optional(_str), None),
    ("server_performance", _choice("unknown", "poor", "fair", "good", "excellent"), "unknown"),
)
APP_PERMISSIONS: tuple[FieldSpec, ...] = tuple((name, _bool, False) for name in PERMISSIONS)


def _permissions(**granted: bool) -> Callable[[], dict[str, bool]]:
    return lambda: {name: granted.get(name, False) for name in PERMISSIONS}


APP_STATUS: tuple[FieldSpec, ...] = (
    ("app_name", _str, REQUIRED),
    ("permissions", _record(APP_PERMISSIONS, "permissions"), _permissions()),
)


def default_apps() -> dict[str, AppStatus]:
    """The two apps a fresh phone has (upstream's defaults)."""
    return {
        "messaging": {"app_name": "messaging", "permissions": _permissions(sms=True, storage=True, phone=True)()},
        "browser": {"app_name": "browser", "permissions": _permissions(network=True, storage=True)()},
    }


def default_apn_settings() -> APNSettings:
    """A fresh APN configuration (what a reboot after reset_apn_settings installs)."""
    return cast(APNSettings, build_record(APN_SETTINGS, {}, "active_apn_settings"))


def _apps(value: object) -> dict[str, AppStatus]:
    if not isinstance(value, dict):
        raise TypeError(f"expected a table of apps, got {value!r}")
    return {name: cast(AppStatus, build_record(APP_STATUS, app, f"app_statuses.{name}")) for name, app in value.items()}


DEVICE_STATE: tuple[FieldSpec, ...] = (
    ("sim_card_status", _choice("active", "missing", "locked_pin", "locked_puk"), "active"),
    ("sim_card_missing", _bool, False),
    ("airplane_mode", _bool, False),
    ("network_signal_strength", _choice(*SIGNALS), "good"),
    ("network_technology_connected", _choice(*TECHNOLOGIES), "5G"),
    ("network_connection_status", _choice("connected", "searching", "no_service", "emergency_only"), "connected"),
    ("battery_level", _int, 80),
    ("data_enabled", _bool, True),
    ("roaming_enabled", _bool, False),
    ("network_mode_preference", _choice(*NETWORK_MODES), "4g_5g_preferred"),
    ("active_apn_settings", _record(APN_SETTINGS, "active_apn_settings"), default_apn_settings),
    ("wifi_enabled", _bool, False),
    ("wifi_connected", _bool, False),
    ("wifi_ssid", _optional(_str), None),
    ("wifi_signal_strength", _choice(*SIGNALS), "none"),
    ("wifi_calling_enabled", _bool, False),
    ("wifi_calling_mms_over_wifi", _bool, False),
    ("data_saver_mode", _bool, False),
    ("vpn_enabled_setting", _bool, False),
    ("vpn_connected", _bool, False),
    ("vpn_details", _optional(_record(VPN_DETAILS, "vpn_details")), None),
    ("app_statuses", _apps, default_apps),
)
PAYMENT_REQUEST: tuple[FieldSpec, ...] = (
    ("bill_id", _str, REQUIRED),
    ("amount_due", _float, REQUIRED),
    ("paid", _bool, False),
)


def default_signal_strength() -> dict[str, str]:
    """Signal available per technology where the user is (upstream's defaults)."""
    return {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"}


def _signal_map(value: object) -> dict[str, str]:
    if not isinstance(value, dict):
        raise TypeError(f"expected a table, got {value!r}")
    return {_choice(*TECHNOLOGIES)(k): _choice(*SIGNALS)(v) for k, v in value.items()}


SURROUNDINGS: tuple[FieldSpec, ...] = (
    ("name", _optional(_str), None),
    ("phone_number", _optional(_str), None),
    ("is_abroad", _bool, False),
    ("roaming_allowed", _bool, False),
    ("signal_strength", _signal_map, default_signal_strength),
    ("mobile_data_usage_exceeded", _bool, False),
    ("line_active", _bool, True),
    ("payment_request", _optional(_record(PAYMENT_REQUEST, "payment_request")), None),
)
TELECOM_USER_DB: tuple[FieldSpec, ...] = (
    ("device", _record(DEVICE_STATE, "device"), lambda: build_record(DEVICE_STATE, {}, "device")),
    ("surroundings", _record(SURROUNDINGS, "surroundings"), lambda: build_record(SURROUNDINGS, {}, "surroundings")),
)


# --- readers ----------------------------------------------------------------------------


def _load_toml(path: Path | str) -> dict[str, object]:
    path = Path(path)
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError as exc:
        raise DataError(f"telecom DB file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{path} is not valid TOML: {exc}") from exc


def read_db(path: Path | str) -> TelecomDB:
    """The carrier DB (``tau2/domains/telecom/db.toml``) as upstream's TelecomDB dump."""
    return cast(TelecomDB, build_record(TELECOM_DB, _load_toml(path), "telecom db"))  # built by the tables


def read_user_db(path: Path | str) -> TelecomUserDB:
    """The phone DB (``tau2/domains/telecom/user_db.toml``) as upstream's TelecomUserDB dump."""
    return cast(TelecomUserDB, build_record(TELECOM_USER_DB, _load_toml(path), "telecom user db"))
