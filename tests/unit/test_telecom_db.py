"""Reading the telecom DBs: upstream's initial hashes, record shape, defaults, refusals."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from pytest_tau2.domains.tau2_telecom.db import (
    TELECOM_USER_DB,
    build_record,
    default_apn_settings,
    read_db,
    read_user_db,
)
from pytest_tau2.environment.db import canonical_json, db_hash
from pytest_tau2.errors import DataError

REAL_DATA = Path(os.environ.get("TAU2_DATA_DIR") or "/work/shared/tau2-data")
TELECOM = REAL_DATA / "tau2" / "domains" / "telecom"
needs_real_data = pytest.mark.skipif(not TELECOM.is_dir(), reason=f"pinned tau2 data not found at {REAL_DATA}")

AGENT_HASH = "304cf5ef059852e117ea801ab9a5efc24c9713ec887679dc2e30acceb4b6742d"
USER_HASH = "e1f3a8637388808221228ff3f87294444e6b64caf721f5eb243a85d0a9380b28"


@needs_real_data
def test_agent_db_hash_matches_upstream() -> None:
    assert db_hash(read_db(TELECOM / "db.toml")) == AGENT_HASH


@needs_real_data
def test_user_db_hash_matches_upstream() -> None:
    assert db_hash(read_user_db(TELECOM / "user_db.toml")) == USER_HASH


@needs_real_data
def test_agent_db_shape() -> None:
    db = read_db(TELECOM / "db.toml")
    assert list(db) == ["plans", "customers", "lines", "bills", "devices"]
    assert [len(db[k]) for k in db] == [5, 4, 9, 6, 9]
    line = db["lines"][0]
    assert list(line)[:5] == ["line_id", "phone_number", "status", "plan_id", "device_id"]
    assert line["suspension_start_date"] is None and line["last_sim_replacement_date"] is None
    assert line["contract_end_date"] == dt.date(2026, 12, 31)
    bill = db["bills"][0]
    # model field order: line_items before status (the TOML has them the other way round)
    assert list(bill)[-2:] == ["line_items", "status"]
    device = db["devices"][0]
    assert device["activation_date"] == dt.datetime(2025, 1, 20, 14, 30)
    assert device["last_esim_transfer_date"] is None
    assert '"activation_date": "2025-01-20 14:30:00"' in canonical_json(device)
    customer = db["customers"][1]
    assert customer["last_extension_date"] == dt.date(2025, 1, 5)
    assert db["customers"][0]["last_extension_date"] is None
    assert isinstance(db["plans"][0]["data_limit_gb"], float)


@needs_real_data
def test_user_db_fills_defaults_absent_from_the_toml() -> None:
    user = read_user_db(TELECOM / "user_db.toml")
    assert list(user) == ["device", "surroundings"]
    device = user["device"]
    assert device["wifi_ssid"] is None and device["vpn_details"] is None
    assert device["active_apn_settings"] == default_apn_settings()
    assert device["app_statuses"]["messaging"]["permissions"] == {
        "sms": True,
        "storage": True,
        "phone": True,
        "network": False,
    }
    assert user["surroundings"] == {
        "name": None,
        "phone_number": None,
        "is_abroad": False,
        "roaming_allowed": False,
        "signal_strength": {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"},
        "mobile_data_usage_exceeded": False,
        "line_active": True,
        "payment_request": None,
    }


def test_an_empty_user_db_is_upstreams_default_phone() -> None:
    user = build_record(TELECOM_USER_DB, {})
    assert user["device"]["network_technology_connected"] == "5G"
    assert user["device"]["battery_level"] == 80
    assert set(user["device"]["app_statuses"]) == {"messaging", "browser"}


def test_read_db_refuses_missing_file_bad_toml_and_unknown_fields(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        read_db(tmp_path / "absent.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("plans = [", encoding="utf-8")
    with pytest.raises(DataError, match="not valid TOML"):
        read_db(bad)
    extra = tmp_path / "extra.toml"
    extra.write_text(
        '[[plans]]\nplan_id = "P1"\nname = "x"\ndata_limit_gb = 1.0\nprice_per_month = 1.0\n'
        'data_refueling_price_per_gb = 1.0\ncolour = "red"\n',
        encoding="utf-8",
    )
    with pytest.raises(DataError, match=r"unknown field.*colour"):
        read_db(extra)
    missing = tmp_path / "missing.toml"
    missing.write_text('[[plans]]\nplan_id = "P1"\n', encoding="utf-8")
    with pytest.raises(DataError, match="required field 'name'"):
        read_db(missing)
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('[device]\nnetwork_mode_preference = "6g"\n', encoding="utf-8")
    with pytest.raises(DataError, match="network_mode_preference"):
        read_user_db(wrong)


def test_ints_become_floats_where_the_model_says_float(tmp_path: Path) -> None:
    path = tmp_path / "db.toml"
    path.write_text(
        '[[plans]]\nplan_id = "P1"\nname = "x"\ndata_limit_gb = 5\nprice_per_month = 40\n'
        "data_refueling_price_per_gb = 2\n",
        encoding="utf-8",
    )
    plan = read_db(path)["plans"][0]
    assert plan["data_limit_gb"] == 5.0 and isinstance(plan["data_limit_gb"], float)
