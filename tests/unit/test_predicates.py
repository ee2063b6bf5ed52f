"""The db-state predicate registry, its verdicts and failure modes, and the telecom predicates."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import pytest_tau2.domains.tau2_telecom.predicates as telecom
from pytest_tau2.domains.tau2_telecom.db import TELECOM_USER_DB, build_record
from pytest_tau2.environment.db import copy_db, db_hash
from pytest_tau2.scoring import predicates as registry
from pytest_tau2.scoring.predicates import (
    ALL_DB_STATE_PREDICATES,
    DB_STATE_PREDICATES,
    evaluate_db_state_assertion,
    list_registered_predicates,
    register_db_state_predicate,
)


@pytest.fixture(autouse=True)
def _restore_registry() -> Iterator[None]:
    """Tests may register predicates in throwaway domains; put the registry back afterwards."""
    saved = dict(DB_STATE_PREDICATES)
    yield
    for key in set(DB_STATE_PREDICATES) - set(saved):
        DB_STATE_PREDICATES.unregister(key)
    for key, fn in saved.items():
        DB_STATE_PREDICATES.register(key, fn, replace=True)


def _demo_domain() -> None:
    @register_db_state_predicate(domain="demo")
    def has_key(db: dict, key: str) -> bool:
        return key in db

    @register_db_state_predicate(domain="demo")
    def explodes(db: dict) -> bool:
        raise RuntimeError("boom")

    @register_db_state_predicate(domain="demo")
    def counts(db: dict) -> Any:
        return len(db)


# --- registry ----------------------------------------------------------------------------


def test_register_returns_the_function_and_keys_it_by_name() -> None:
    def probe(db: dict) -> bool:
        return True

    assert register_db_state_predicate("demo")(probe) is probe
    assert ALL_DB_STATE_PREDICATES["demo"]["probe"] is probe
    register_db_state_predicate("demo")(probe)  # the same function again is harmless


def test_duplicate_name_in_a_domain_raises_naming_both_modules() -> None:
    def twin(db: dict) -> bool:
        return True

    register_db_state_predicate("demo")(twin)
    other = type(twin)(twin.__code__, {"__name__": "elsewhere.module"}, "twin")
    other.__module__ = "elsewhere.module"
    with pytest.raises(ValueError, match=r"'twin' is registered twice in domain 'demo'") as caught:
        register_db_state_predicate("demo")(other)
    assert __name__ in str(caught.value) and "elsewhere.module" in str(caught.value)
    register_db_state_predicate("other-domain")(other)  # same name, other domain: fine


def test_list_registered_predicates_whole_and_per_domain() -> None:
    _demo_domain()
    everything = list_registered_predicates()
    assert everything["demo"] == ["counts", "explodes", "has_key"]
    assert "assert_can_send_mms" in everything["tau2_telecom"]
    assert list_registered_predicates("demo") == {"demo": ["counts", "explodes", "has_key"]}
    assert list_registered_predicates("nowhere") == {"nowhere": []}
    assert len(list_registered_predicates("tau2_telecom")["tau2_telecom"]) == 13


# --- verdicts and failure modes ------------------------------------------------------------


def test_verdict_shape_and_side_choice() -> None:
    _demo_domain()
    record = {"side": "agent", "func_name": "has_key", "arguments": {"key": "a"}, "message": "need a"}
    assert evaluate_db_state_assertion("demo", record, {"a": 1}, {"b": 2}) == {
        "func_name": "has_key",
        "side": "agent",
        "passed": True,
        "expected": True,
        "actual": True,
        "message": "need a",
        "error": None,
    }
    user = {"env_type": "user", "func_name": "has_key", "arguments": {"key": "a"}}
    verdict = evaluate_db_state_assertion("demo", user, {"a": 1}, {"b": 2})
    assert (verdict["side"], verdict["passed"], verdict["actual"], verdict["message"]) == ("user", False, False, None)
    upstream = {"env_type": "assistant", "func_name": "has_key", "arguments": {"key": "a"}, "assert_value": True}
    assert evaluate_db_state_assertion("demo", upstream, {"a": 1}, None)["passed"] is True


def test_assert_value_false_expects_the_predicate_to_fail() -> None:
    _demo_domain()
    record = {"side": "agent", "func_name": "has_key", "arguments": {"key": "z"}, "assert_value": False}
    verdict = evaluate_db_state_assertion("demo", record, {"a": 1}, None)
    assert (verdict["passed"], verdict["expected"], verdict["actual"]) == (True, False, False)
    verdict = evaluate_db_state_assertion("demo", {**record, "arguments": {"key": "a"}}, {"a": 1}, None)
    assert (verdict["passed"], verdict["expected"], verdict["actual"]) == (False, False, True)


KEY_A = {"key": "a"}


@pytest.mark.parametrize(
    ("record", "db", "user_db", "mode", "detail"),
    [
        ({"side": "agent", "func_name": "nope"}, {}, {}, "missing_predicate", "there: counts, explodes, has_key"),
        ({"side": "user", "func_name": "has_key", "arguments": KEY_A}, {"a": 1}, None, "missing_db", "user DB"),
        ({"side": "agent", "func_name": "has_key", "arguments": KEY_A}, None, {"a": 1}, "missing_db", "agent DB"),
        ({"side": "phone", "func_name": "has_key"}, {}, {}, "bad_assertion", "unknown side 'phone'"),
        ({"func_name": "has_key", "arguments": {"key": "a"}}, {}, {}, "bad_assertion", "unknown side None"),
        ({"side": "agent", "func_name": "explodes"}, {}, {}, "predicate_raised", "RuntimeError: boom"),
        ({"side": "agent", "func_name": "has_key", "arguments": {"wrong": 1}}, {}, {}, "predicate_raised", "TypeError"),
        ({"side": "agent", "func_name": "counts"}, {"a": 1}, {}, "non_bool_result", "returned int 1 instead of bool"),
        ({"side": "agent", "func_name": "has_key", "arguments": ["a"]}, {}, {}, "bad_assertion", "must be a dict"),
        ({"side": "agent"}, {}, {}, "bad_assertion", "'func_name' must be a non-empty string"),
    ],
)
def test_failure_modes_never_raise(record: dict, db: Any, user_db: Any, mode: str, detail: str) -> None:
    _demo_domain()
    verdict = evaluate_db_state_assertion("demo", {**record, "message": "m"}, db, user_db)
    assert verdict["passed"] is False and verdict["actual"] is None
    assert verdict["error"].startswith(f"{mode}: ") and detail in verdict["error"], verdict["error"]
    assert verdict["expected"] is True and verdict["message"] == "m"


def test_unknown_domain_and_non_dict_assertion() -> None:
    verdict = evaluate_db_state_assertion("no_such_domain", {"side": "agent", "func_name": "x"}, {}, {})
    assert verdict["error"].startswith("missing_predicate: ") and "(none)" in verdict["error"]
    verdict = evaluate_db_state_assertion("demo", "not a dict", {}, {})  # type: ignore[arg-type]
    assert verdict["passed"] is False and verdict["error"].startswith("bad_assertion: ")


def test_builtin_domain_predicates_load_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [key for key in DB_STATE_PREDICATES if key[0] == "tau2_telecom"]:
        DB_STATE_PREDICATES.unregister(key)
    imported: list[str] = []
    monkeypatch.setattr(registry.importlib, "import_module", lambda name: imported.append(name))
    evaluate_db_state_assertion("tau2_telecom", {"side": "user", "func_name": "assert_can_send_mms"}, {}, {})
    assert imported == ["pytest_tau2.domains.tau2_telecom.predicates"]


# --- telecom predicates on small dicts -----------------------------------------------------


def carrier(refuel: float = 2.0, bill_status: str | None = "Overdue", line_status: str = "Active") -> dict[str, Any]:
    db: dict[str, Any] = {
        "customers": [{"customer_id": "C1", "line_ids": ["L1"], "bill_ids": ["B1"] if bill_status else []}],
        "lines": [{"line_id": "L1", "status": line_status, "data_refueling_gb": refuel}],
        "bills": [{"bill_id": "B1", "status": bill_status}] if bill_status else [],
    }
    return db


def phone(**device: Any) -> dict[str, Any]:
    user_db = build_record(TELECOM_USER_DB, {})
    where = {k[6:]: device.pop(k) for k in list(device) if k.startswith("where_")}
    user_db["device"].update(device)
    user_db["surroundings"].update(where)
    return user_db


LINE = {"customer_id": "C1", "line_id": "L1"}
YES, NO = {"expected_status": True}, {"expected_status": False}
ABROAD = {"where_is_abroad": True}

CASES: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = [
    ("assert_data_refueling_amount", carrier(), {**LINE, "expected_amount": 2.0}, True),
    ("assert_data_refueling_amount", carrier(2.0000001), {**LINE, "expected_amount": 2}, True),
    ("assert_data_refueling_amount", carrier(0.0), {**LINE, "expected_amount": 2.0}, False),
    ("assert_line_status", carrier(), {**LINE, "expected_status": "Active"}, True),
    ("assert_line_status", carrier(line_status="Suspended"), {**LINE, "expected_status": "Active"}, False),
    ("assert_overdue_bill_exists", carrier(), {"customer_id": "C1", "overdue_bill_id": "B1"}, True),
    ("assert_no_overdue_bill", carrier(bill_status=None), {"overdue_bill_id": "B1"}, True),
    ("assert_no_overdue_bill", carrier(bill_status="Paid"), {"overdue_bill_id": "B1"}, True),
    ("assert_no_overdue_bill", carrier(bill_status="Overdue"), {"overdue_bill_id": "B1"}, False),
    ("assert_no_overdue_bill", carrier(bill_status="Awaiting Payment"), {"overdue_bill_id": "B1"}, False),
    ("assert_airplane_mode_status", phone(airplane_mode=True), YES, True),
    ("assert_airplane_mode_status", phone(), YES, False),
    ("assert_service_status", phone(), {"expected_status": "connected"}, True),
    ("assert_service_status", phone(network_connection_status="no_service"), {"expected_status": "connected"}, False),
    ("assert_service_status", phone(network_connection_status="no_service"), {"expected_status": "no_service"}, True),
    ("assert_mobile_data_status", phone(), YES, True),
    ("assert_mobile_data_status", phone(data_enabled=False), NO, True),
    ("assert_mobile_data_status", phone(network_signal_strength="none"), YES, False),
    ("assert_mobile_data_status", phone(**ABROAD), YES, False),
    ("assert_mobile_data_status", phone(**ABROAD, roaming_enabled=True), YES, False),
    ("assert_mobile_data_status", phone(**ABROAD, roaming_enabled=True, where_roaming_allowed=True), YES, True),
    ("assert_mobile_data_status", phone(where_mobile_data_usage_exceeded=True), YES, False),
    ("assert_mobile_roaming_status", phone(roaming_enabled=True), YES, True),
    ("assert_mobile_data_saver_mode_status", phone(data_saver_mode=True), NO, False),
    # 5G at "good" (the file's state): 275 * 0.8 = 220 Mbps, Excellent
    ("assert_internet_speed", phone(), {"expected_speed": 200, "expected_desc": "excellent"}, True),
    ("assert_internet_speed", phone(), {"expected_speed": 221}, False),
    ("assert_internet_speed", phone(data_saver_mode=True), {"expected_speed": 40, "expected_desc": "excellent"}, False),
    ("assert_internet_speed", phone(data_saver_mode=True), {"expected_speed": 40, "expected_desc": "GOOD"}, True),
    ("assert_internet_speed", phone(airplane_mode=True), {"expected_speed": 0}, True),
    ("assert_internet_speed", phone(airplane_mode=True), {"expected_speed": 0, "expected_desc": "no connection"}, True),
    ("assert_internet_not_excellent", phone(), {}, False),
    ("assert_internet_not_excellent", phone(network_technology_connected="4G"), {}, True),
    ("assert_can_send_mms", phone(), YES, True),
    ("assert_can_send_mms", phone(network_technology_connected="2G"), YES, False),
    ("assert_can_send_mms", phone(wifi_calling_enabled=True, wifi_calling_mms_over_wifi=True), NO, True),
    ("assert_mobile_data_usage_exceeded", phone(where_mobile_data_usage_exceeded=True), YES, True),
]


@pytest.mark.parametrize(("name", "db", "arguments", "expected"), CASES)
def test_telecom_predicates_are_pure(name: str, db: dict, arguments: dict, expected: bool) -> None:
    before = copy_db(db)
    fn = ALL_DB_STATE_PREDICATES["tau2_telecom"][name]
    assert fn(db, **arguments) is expected
    assert fn(db, **arguments) is expected  # same DB, same answer
    assert db == before and db_hash(db) == db_hash(before)


def test_every_telecom_predicate_has_a_case_and_a_side() -> None:
    names = set(ALL_DB_STATE_PREDICATES["tau2_telecom"])
    assert {case[0] for case in CASES} == names
    assert {fn.__name__ for fn in telecom.AGENT_PREDICATES + telecom.USER_PREDICATES} == names


def test_telecom_predicates_through_the_dispatcher() -> None:
    db, user_db = carrier(bill_status="Paid"), phone(airplane_mode=True, network_connection_status="no_service")

    def verdict(env_type: str, func_name: str, assert_value: bool = True, **arguments: Any) -> dict[str, Any]:
        record = {"env_type": env_type, "func_name": func_name, "arguments": arguments, "assert_value": assert_value}
        return evaluate_db_state_assertion("tau2_telecom", record, db, user_db)

    assert verdict("assistant", "assert_no_overdue_bill", overdue_bill_id="B1")["passed"]
    assert verdict("user", "assert_service_status", expected_status="no_service")["passed"]
    assert verdict("user", "assert_can_send_mms", False, expected_status=True)["passed"]
    raised = verdict("assistant", "assert_overdue_bill_exists", customer_id="C1", overdue_bill_id="B1")
    assert raised["error"] == (
        "predicate_raised: assert_overdue_bill_exists raised ToolError: Overdue bill B1 is not overdue"
    )
    bad_status = verdict("user", "assert_service_status", expected_status="up")
    assert bad_status["error"] == (
        "predicate_raised: assert_service_status raised ValueError: 'up' is not a valid NetworkStatus"
    )


def test_a_predicate_that_could_not_be_evaluated_says_why_first() -> None:
    """The check's message leads with the reason, not with "returned None" (issue 38 point 7)."""
    from pytest_tau2.scoring.builtin_signals import _predicate_message

    _demo_domain()
    record = {"side": "agent", "func_name": "explodes", "message": "the line is unlocked"}
    text = _predicate_message(evaluate_db_state_assertion("demo", record, {}, None), record)
    assert text == (
        "explodes() on the agent DB could not be evaluated: predicate_raised: explodes raised RuntimeError: boom "
        "(expected True): the line is unlocked"
    )
    assert "returned None" not in text
    record = {"side": "agent", "func_name": "has_key", "arguments": {"key": "z"}}
    text = _predicate_message(evaluate_db_state_assertion("demo", record, {"a": 1}, None), record)
    assert text == "has_key(key='z') on the agent DB returned False, expected True"
