"""The records of the two telecom DBs, as :mod:`.db` builds them (upstream's model dumps).

One TypedDict per field table of :mod:`.db` (``PLAN``, ``LINE``, ``DEVICE_STATE``...), with the
types its converters produce: the tables decide what a record holds at run time, these say it to
the type checker. A choice field (a str-Enum upstream) is a ``str``; dates are ``datetime.date``
(``datetime.datetime`` where upstream's field is one).
"""

from __future__ import annotations

import datetime as dt
from typing import TypedDict

# --- carrier DB (TelecomDB) -------------------------------------------------------------


class Plan(TypedDict):
    plan_id: str
    name: str
    data_limit_gb: float
    price_per_month: float
    data_refueling_price_per_gb: float


class Device(TypedDict):
    device_id: str
    device_type: str
    model: str
    imei: str | None
    is_esim_capable: bool
    activated: bool
    activation_date: dt.datetime | None
    last_esim_transfer_date: dt.datetime | None


class Line(TypedDict):
    line_id: str
    phone_number: str
    status: str
    plan_id: str
    device_id: str | None
    data_used_gb: float
    data_refueling_gb: float
    roaming_enabled: bool
    contract_end_date: dt.date | None
    last_plan_change_date: dt.date | None
    last_sim_replacement_date: dt.date | None
    suspension_start_date: dt.date | None


class LineItem(TypedDict):
    description: str
    amount: float
    date: dt.date
    item_type: str


class Bill(TypedDict):
    bill_id: str
    customer_id: str
    period_start: dt.date
    period_end: dt.date
    issue_date: dt.date
    total_due: float
    due_date: dt.date
    line_items: list[LineItem]
    status: str


class Address(TypedDict):
    street: str
    city: str
    state: str
    zip_code: str


class PaymentMethod(TypedDict):
    method_type: str
    account_number_last_4: str
    expiration_date: str


class Customer(TypedDict):
    customer_id: str
    full_name: str
    date_of_birth: str
    email: str
    phone_number: str
    address: Address
    account_status: str
    payment_methods: list[PaymentMethod]
    line_ids: list[str]
    bill_ids: list[str]
    created_at: dt.date
    """A ``datetime`` from the file; upstream's default is a plain date."""
    last_extension_date: dt.date | None
    goodwill_credit_used_this_year: float


class TelecomDB(TypedDict):
    plans: list[Plan]
    customers: list[Customer]
    lines: list[Line]
    bills: list[Bill]
    devices: list[Device]


# --- phone DB (TelecomUserDB) -----------------------------------------------------------


class APNSettings(TypedDict):
    apn_name: str
    reset_at_reboot: bool
    mms_apn: str | None
    mmsc_url: str | None
    mms_proxy: str | None
    mms_port: int | None


class VPNDetails(TypedDict):
    server_address: str | None
    protocol: str | None
    server_performance: str


class AppStatus(TypedDict):
    app_name: str
    permissions: dict[str, bool]
    """Permission name (:data:`.db.PERMISSIONS`) -> granted."""


class DeviceState(TypedDict):
    sim_card_status: str
    sim_card_missing: bool
    airplane_mode: bool
    network_signal_strength: str
    network_technology_connected: str
    network_connection_status: str
    battery_level: int
    data_enabled: bool
    roaming_enabled: bool
    network_mode_preference: str
    active_apn_settings: APNSettings
    wifi_enabled: bool
    wifi_connected: bool
    wifi_ssid: str | None
    wifi_signal_strength: str
    wifi_calling_enabled: bool
    wifi_calling_mms_over_wifi: bool
    data_saver_mode: bool
    vpn_enabled_setting: bool
    vpn_connected: bool
    vpn_details: VPNDetails | None
    app_statuses: dict[str, AppStatus]


class PaymentRequest(TypedDict):
    bill_id: str
    amount_due: float
    paid: bool


class Surroundings(TypedDict):
    name: str | None
    phone_number: str | None
    is_abroad: bool
    roaming_allowed: bool
    signal_strength: dict[str, str]
    """Technology (``2G``...) -> the signal available for it where the user is."""
    mobile_data_usage_exceeded: bool
    line_active: bool
    payment_request: PaymentRequest | None


class TelecomUserDB(TypedDict):
    device: DeviceState
    surroundings: Surroundings
