"""The airline tools on a small hand-made DB: every refusal, every effect, the type rules."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from pytest_tau2.domains.tau2_airline import ACTION_NAME_TO_TOOL, TOOL_CLASSES
from pytest_tau2.domains.tau2_airline.db import complete_reservation, complete_user, read_db
from pytest_tau2.domains.tau2_common.tools import calculate
from pytest_tau2.environment import Environment, ToolResult, db_hash
from pytest_tau2.errors import ToolError

USER = "emma_kim_9957"
OTHER_USER = "noah_li_1234"
CARD = "credit_card_1111111"
GIFT = "gift_card_2222222"
CERT = "certificate_3333333"
OTHER_CARD = "credit_card_9999999"
RES = "ABC123"
DAY = "2024-05-20"


def _open(economy_seats: int = 3, basic_seats: int = 0) -> dict[str, Any]:
    return {
        "status": "available",
        "available_seats": {"business": 5, "economy": economy_seats, "basic_economy": basic_seats},
        "prices": {"business": 1000, "economy": 200, "basic_economy": 100},
    }


def _flight(number: str, origin: str, destination: str, leaves: str, arrives: str, dates: dict[str, Any]) -> dict:
    return {
        "flight_number": number,
        "origin": origin,
        "destination": destination,
        "scheduled_departure_time_est": leaves,
        "scheduled_arrival_time_est": arrives,
        "dates": dates,
    }


def make_db() -> dict[str, Any]:
    """Two users, one reservation (2 passengers, HAT001 + HAT002 in economy), five flights."""
    landed = {"status": "landed", "actual_departure_time_est": "x", "actual_arrival_time_est": "y"}
    flights = [
        _flight("HAT001", "JFK", "LAX", "08:00:00", "11:00:00", {DAY: _open(), "2024-05-21": landed}),
        _flight("HAT002", "LAX", "SEA", "12:00:00", "14:00:00", {DAY: _open(economy_seats=9)}),
        _flight("HAT005", "LAX", "SEA", "10:00:00", "12:30:00", {DAY: _open()}),
        _flight("HAT003", "JFK", "ORD", "22:00:00", "01:00:00+1", {"2024-05-09": _open(), "2024-05-01": _open()}),
        _flight(
            "HAT004",
            "ORD",
            "SEA",
            "02:00:00",
            "04:00:00",
            {"2024-05-10": _open(), "2024-05-02": _open(), "2024-05-2": _open()},
        ),
    ]
    users = {
        USER: {
            "user_id": USER,
            "name": {"first_name": "Emma", "last_name": "Kim"},
            "address": {"address1": "1 Main St", "city": "Austin", "country": "USA", "state": "TX", "zip": "78750"},
            "email": "emma@example.com",
            "dob": "1990-01-01",
            "payment_methods": {
                CARD: {"source": "credit_card", "id": CARD, "brand": "visa", "last_four": "1111"},
                GIFT: {"source": "gift_card", "id": GIFT, "amount": 500.0},
                CERT: {"source": "certificate", "id": CERT, "amount": 250.0},
            },
            "saved_passengers": [],
            "membership": "gold",
            "reservations": [RES],
        },
        OTHER_USER: {
            "user_id": OTHER_USER,
            "name": {"first_name": "Noah", "last_name": "Li"},
            "address": {"address1": "2 Elm St", "address2": None, "city": "Austin", "country": "USA", "state": "TX"},
            "email": "noah@example.com",
            "dob": "1980-01-01",
            "payment_methods": {OTHER_CARD: {"source": "credit_card", "id": OTHER_CARD, "brand": "visa"}},
            "saved_passengers": [],
            "membership": "regular",
            "reservations": [],
        },
    }
    reservation = {
        "reservation_id": RES,
        "user_id": USER,
        "origin": "JFK",
        "destination": "SEA",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [
            {"origin": "JFK", "destination": "LAX", "flight_number": "HAT001", "date": DAY, "price": 200},
            {"origin": "LAX", "destination": "SEA", "flight_number": "HAT002", "date": DAY, "price": 150},
        ],
        "passengers": [
            {"first_name": "Emma", "last_name": "Kim", "dob": "1990-01-01"},
            {"first_name": "Li", "last_name": "Kim", "dob": "1992-02-02"},
        ],
        "payment_history": [{"payment_id": CARD, "amount": 700}],
        "created_at": "2024-05-01T10:00:00",
        "total_baggages": 1,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    for user in users.values():
        complete_user(user)
    return {
        "flights": {f["flight_number"]: f for f in flights},
        "users": users,
        "reservations": {RES: complete_reservation(reservation)},
    }


@pytest.fixture
def db() -> dict[str, Any]:
    return make_db()


@pytest.fixture
def env(db: dict[str, Any]) -> Environment:
    state = {"db": db}
    return Environment("agent", state, [cls(state) for cls in TOOL_CLASSES])


def call(env: Environment, name: str, **arguments: Any) -> ToolResult:
    return env.call(name, arguments)


def ok(env: Environment, name: str, **arguments: Any) -> Any:
    """Call a tool that must succeed; its result decoded from JSON when it is JSON."""
    result = call(env, name, **arguments)
    assert not result.error, result.content
    try:
        return json.loads(result.content)
    except json.JSONDecodeError:
        return result.content


def refused(env: Environment, name: str, message: str, **arguments: Any) -> None:
    """Call a tool that must refuse with exactly ``message`` and leave the DB untouched."""
    before = db_hash(env.db)
    result = call(env, name, **arguments)
    assert result.error
    assert result.content == f"Error: {message}"
    assert db_hash(env.db) == before
    assert env.actions == []


def tool(env: Environment, name: str) -> Any:
    return next(t for t in env.tools if t.name == name)


def user(db: dict[str, Any], user_id: str = USER) -> dict[str, Any]:
    return db["users"][user_id]


def reservation(db: dict[str, Any], reservation_id: str = RES) -> dict[str, Any]:
    return db["reservations"][reservation_id]


def seats(db: dict[str, Any], number: str, cabin: str = "economy", date: str = DAY) -> int:
    return db["flights"][number]["dates"][date]["available_seats"][cabin]


# --------------------------------------------------------------------------- registry and schemas


def test_tools_in_upstream_order_with_namespace_and_action_names() -> None:
    names = [cls.name for cls in TOOL_CLASSES]
    assert names == [
        "book_reservation",
        "calculate",
        "cancel_reservation",
        "get_reservation_details",
        "get_user_details",
        "list_all_airports",
        "search_direct_flight",
        "search_onestop_flight",
        "send_certificate",
        "transfer_to_human_agents",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
        "get_flight_status",
    ]
    assert all(cls.__name__.endswith("Tool") and cls.namespace == "tau2_airline" for cls in TOOL_CLASSES)
    assert ACTION_NAME_TO_TOOL == {cls.name: cls for cls in TOOL_CLASSES}
    writes = {cls.name for cls in TOOL_CLASSES if cls.mutates_state}
    assert writes == {
        "book_reservation",
        "cancel_reservation",
        "send_certificate",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    }
    recorded = {cls.name for cls in TOOL_CLASSES if cls.action_name}
    assert recorded == writes | {"transfer_to_human_agents"}
    assert all(cls.action_name in (None, cls.name) for cls in TOOL_CLASSES)


def test_schemas_are_closed_objects_with_described_properties() -> None:
    for cls in TOOL_CLASSES:
        schema = cls.parameters
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert schema["required"] == list(schema["properties"])
        for prop in schema["properties"].values():
            assert prop["type"] and prop["description"]
        assert cls.description
    flights = ACTION_NAME_TO_TOOL["book_reservation"].parameters["properties"]["flights"]
    assert flights["items"]["type"] == "object"
    assert flights["items"]["required"] == ["flight_number", "date"]


# --------------------------------------------------------------------------- reads and lookups


@pytest.mark.parametrize("spelling", [USER, "Emma Kim 9957", "EMMA-KIM-9957", "emmakim9957"])
def test_get_user_details_finds_any_spelling(env: Environment, spelling: str) -> None:
    assert ok(env, "get_user_details", user_id=spelling)["user_id"] == USER
    assert env.actions == []


@pytest.mark.parametrize("spelling", ["emma_kim_9958", "emma_kim", "kim_emma_9957", ""])
def test_get_user_details_refuses_other_ids(env: Environment, spelling: str) -> None:
    refused(env, "get_user_details", f"User {spelling} not found", user_id=spelling)


def test_get_reservation_details(env: Environment) -> None:
    found = ok(env, "get_reservation_details", reservation_id="abc 123")
    assert found["reservation_id"] == RES and found["status"] is None
    assert list(found["flights"][0]) == ["flight_number", "origin", "destination", "date", "price"]
    refused(env, "get_reservation_details", "Reservation ABC124 not found", reservation_id="ABC124")
    assert env.actions == []


def test_get_flight_status(env: Environment) -> None:
    assert ok(env, "get_flight_status", flight_number="hat-001", date=DAY) == "available"
    assert ok(env, "get_flight_status", flight_number="HAT001", date="2024-05-21") == "landed"
    refused(env, "get_flight_status", "Flight HAT999 not found", flight_number="HAT999", date=DAY)
    refused(
        env, "get_flight_status", "Flight HAT001 not found on date 2024-5-20", flight_number="HAT001", date="2024-5-20"
    )
    assert env.actions == []


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("get_reservation_details", {"reservation_id": "ABC12"}, "Reservation ABC12 not found"),
        ("get_reservation_details", {"reservation_id": "ABC1234"}, "Reservation ABC1234 not found"),
        ("get_flight_status", {"flight_number": "HAT01", "date": DAY}, "Flight HAT01 not found"),
        ("get_flight_status", {"flight_number": "HAT0001", "date": DAY}, "Flight HAT0001 not found"),
        (
            "update_reservation_baggages",
            {"reservation_id": RES, "total_baggages": 1, "nonfree_baggages": 0, "payment_id": "credit_card_1111112"},
            "Payment method not found",
        ),
        (
            "update_reservation_baggages",
            {"reservation_id": RES, "total_baggages": 1, "nonfree_baggages": 0, "payment_id": "card_1111111"},
            "Payment method not found",
        ),
    ],
)
def test_near_miss_ids_are_not_found(env: Environment, name: str, arguments: dict[str, Any], message: str) -> None:
    refused(env, name, message, **arguments)


def test_list_all_airports(env: Environment) -> None:
    airports = ok(env, "list_all_airports")
    assert len(airports) == 20
    assert airports[0] == {"iata": "SFO", "city": "San Francisco"}
    assert airports[-1] == {"iata": "LGA", "city": "LaGuardia"}


def test_search_direct_flight(env: Environment, db: dict[str, Any]) -> None:
    found = ok(env, "search_direct_flight", origin="JFK", destination="LAX", date=DAY)
    assert found == [
        {
            "flight_number": "HAT001",
            "origin": "JFK",
            "destination": "LAX",
            "status": "available",
            "scheduled_departure_time_est": "08:00:00",
            "scheduled_arrival_time_est": "11:00:00",
            "date": None,
            "available_seats": {"business": 5, "economy": 3, "basic_economy": 0},
            "prices": {"business": 1000, "economy": 200, "basic_economy": 100},
        }
    ]
    assert ok(env, "search_direct_flight", origin="JFK", destination="LAX", date="2024-05-21") == []
    assert ok(env, "search_direct_flight", origin="jfk", destination="LAX", date=DAY) == []  # codes are exact
    result = tool(env, "search_direct_flight").run(origin="JFK", destination="LAX", date=DAY)
    result[0]["available_seats"]["economy"] = 0
    assert seats(db, "HAT001") == 3  # a search result is a snapshot
    assert env.actions == []


def test_search_onestop_connects_after_arrival_on_the_same_day(env: Environment) -> None:
    pairs = ok(env, "search_onestop_flight", origin="JFK", destination="SEA", date=DAY)
    assert [[leg["flight_number"] for leg in pair] for pair in pairs] == [["HAT001", "HAT002"]]  # HAT005 leaves 10:00
    assert [leg["date"] for leg in pairs[0]] == [DAY, DAY]


def test_search_onestop_next_day_rule(env: Environment) -> None:
    pairs = ok(env, "search_onestop_flight", origin="JFK", destination="SEA", date="2024-05-09")
    assert [(leg["flight_number"], leg["date"]) for leg in pairs[0]] == [
        ("HAT003", "2024-05-09"),
        ("HAT004", "2024-05-10"),
    ]
    # The next day is the day number plus one without zero padding: "2024-05-2", not "2024-05-02".
    pairs = ok(env, "search_onestop_flight", origin="JFK", destination="SEA", date="2024-05-01")
    assert [(leg["flight_number"], leg["date"]) for leg in pairs[0]] == [
        ("HAT003", "2024-05-01"),
        ("HAT004", "2024-05-2"),
    ]


def test_search_onestop_compares_departure_with_the_plus_one_arrival_string(
    env: Environment, db: dict[str, Any]
) -> None:
    db["flights"]["HAT004"]["scheduled_departure_time_est"] = "01:00:00"  # "01:00:00" < "01:00:00+1"
    assert ok(env, "search_onestop_flight", origin="JFK", destination="SEA", date="2024-05-09") == []


def test_calculate() -> None:
    assert calculate("2 * ((350 - 122) + (499 - 127))") == "1200.0"
    assert calculate("10/3") == "3.33"
    assert calculate("2**3") == "8.0"
    assert calculate(" 1.5 + 1") == "2.5"
    with pytest.raises(ToolError, match=r"^Invalid characters in expression$"):
        calculate("abs(-1)")
    with pytest.raises(ZeroDivisionError, match=r"^division by zero$"):
        calculate("1/0")
    with pytest.raises(SyntaxError):
        calculate("1 2")


def test_calculate_through_the_environment(env: Environment) -> None:
    assert call(env, "calculate", expression="100 * 2 + 50") == ToolResult("250.0")
    assert call(env, "calculate", expression="1/0").content == "Error: division by zero"
    assert call(env, "calculate", expression="x").content == "Error: Invalid characters in expression"
    assert env.actions == []


def test_calculate_refuses_towers_of_powers_quickly() -> None:
    start = time.perf_counter()
    with pytest.raises(ToolError, match="too large"):
        calculate("9**9**9**9")
    with pytest.raises(ToolError, match="too large"):
        calculate("(10**100000)**100000")
    assert time.perf_counter() - start < 10  # computed, 9**9**9**9 would never end; loose for a loaded machine
    assert calculate("2**-1") == "0.5"
    assert calculate("1**100000000") == "1.0"
    with pytest.raises(OverflowError):  # large but computable: upstream's float() error
        calculate("10**400")


def test_transfer_to_human_agents(env: Environment, db: dict[str, Any]) -> None:
    before = db_hash(db)
    result = call(env, "transfer_to_human_agents", summary="wants a refund")
    assert result == ToolResult("Transfer successful", False, "transfer")
    assert env.actions == [{"name": "transfer_to_human_agents", "arguments": {"summary": "wants a refund"}}]
    assert db_hash(db) == before


# --------------------------------------------------------------------------- book_reservation

PASSENGER = {"first_name": "Emma", "last_name": "Kim", "dob": "1990-01-01"}
ITINERARY = [{"flight_number": "HAT001", "date": DAY}, {"flight_number": "HAT002", "date": DAY}]


def booking(**overrides: Any) -> dict[str, Any]:
    """One passenger on HAT001 + HAT002 in economy: 200 + 200 fares, insurance 30, one paid bag 50 = 480."""
    arguments = {
        "user_id": USER,
        "origin": "JFK",
        "destination": "SEA",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": ITINERARY,
        "passengers": [PASSENGER],
        "payment_methods": [
            {"payment_id": CERT, "amount": 200},
            {"payment_id": GIFT, "amount": 180},
            {"payment_id": CARD, "amount": 100},
        ],
        "total_baggages": 2,
        "nonfree_baggages": 1,
        "insurance": "yes",
    }
    return {**arguments, **overrides}


def test_book_reservation_effects(env: Environment, db: dict[str, Any]) -> None:
    booked = ok(env, "book_reservation", **booking())
    stored = reservation(db, "HATHAT")
    assert booked == stored
    assert list(stored) == [
        "reservation_id",
        "user_id",
        "origin",
        "destination",
        "flight_type",
        "cabin",
        "flights",
        "passengers",
        "payment_history",
        "created_at",
        "total_baggages",
        "nonfree_baggages",
        "insurance",
        "status",
    ]
    assert stored["created_at"] == "2024-05-15T15:00:00" and stored["status"] is None
    assert stored["flights"] == [
        {"flight_number": "HAT001", "origin": "JFK", "destination": "LAX", "date": DAY, "price": 200},
        {"flight_number": "HAT002", "origin": "LAX", "destination": "SEA", "date": DAY, "price": 200},
    ]
    assert stored["payment_history"] == [
        {"payment_id": CERT, "amount": 200},
        {"payment_id": GIFT, "amount": 180},
        {"payment_id": CARD, "amount": 100},
    ]
    methods = user(db)["payment_methods"]
    assert CERT not in methods  # removed whole although 50 were left
    assert methods[GIFT]["amount"] == 320.0 and isinstance(methods[GIFT]["amount"], float)
    assert seats(db, "HAT001") == 2 and seats(db, "HAT002") == 8
    assert user(db)["reservations"] == [RES, "HATHAT"]
    assert env.actions == [{"name": "book_reservation", "arguments": booking()}]


def test_book_reservation_ids_run_out_after_three(env: Environment, db: dict[str, Any]) -> None:
    card_only = {"payment_methods": [{"payment_id": CARD, "amount": 480}]}
    for expected in ("HATHAT", "HATHAU", "HATHAV"):
        assert ok(env, "book_reservation", **booking(**card_only))["reservation_id"] == expected
    env.actions.clear()
    refused(env, "book_reservation", "Too many reservations", **booking(**card_only))


def test_book_reservation_with_spoken_ids_stores_stored_spellings(env: Environment, db: dict[str, Any]) -> None:
    arguments = booking(
        user_id="Emma Kim 9957",
        flights=[{"flight_number": "hat 001", "date": DAY}, {"flight_number": "HAT-002", "date": DAY}],
        payment_methods=[{"payment_id": "Credit Card 1111111", "amount": 480}],
    )
    stored = ok(env, "book_reservation", **arguments)
    assert stored["user_id"] == USER
    assert [s["flight_number"] for s in stored["flights"]] == ["HAT001", "HAT002"]
    assert stored["payment_history"] == [{"payment_id": CARD, "amount": 480}]
    assert env.actions[0]["arguments"] == arguments  # the action keeps what the caller said


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"user_id": "emma_kim_0000"}, "User emma_kim_0000 not found"),
        ({"flights": [{"flight_number": "HAT999", "date": DAY}]}, "Flight HAT999 not found"),
        (
            {"flights": [{"flight_number": "HAT001", "date": "2024-05-22"}]},
            "Flight HAT001 not found on date 2024-05-22",
        ),
        (
            {"flights": [{"flight_number": "HAT001", "date": "2024-05-21"}]},
            "Flight HAT001 not available on date 2024-05-21",
        ),
        ({"cabin": "basic_economy"}, "Not enough seats on flight HAT001"),
        ({"passengers": [PASSENGER] * 4}, "Not enough seats on flight HAT001"),
        (
            {"payment_methods": [{"payment_id": OTHER_CARD, "amount": 480}]},
            f"Payment method {OTHER_CARD} not found",
        ),
        (
            {"payment_methods": [{"payment_id": CERT, "amount": 300}, {"payment_id": CARD, "amount": 180}]},
            f"Not enough balance in payment method {CERT}",
        ),
        (
            {"payment_methods": [{"payment_id": GIFT, "amount": 480.0 + 100}]},
            f"Not enough balance in payment method {GIFT}",
        ),
        (
            {"payment_methods": [{"payment_id": CARD, "amount": 400}]},
            "Payment amount does not add up, total price is 480, but paid 400",
        ),
        (
            {"insurance": "no", "nonfree_baggages": 0, "payment_methods": [{"payment_id": CARD, "amount": 480}]},
            "Payment amount does not add up, total price is 400, but paid 480",
        ),
        ({"payment_methods": []}, "Payment amount does not add up, total price is 480, but paid 0"),
    ],
)
def test_book_reservation_refusals(env: Environment, overrides: dict[str, Any], message: str) -> None:
    refused(env, "book_reservation", message, **booking(**overrides))


def test_book_reservation_with_gift_card_exactly_covering(env: Environment, db: dict[str, Any]) -> None:
    db["users"][USER]["payment_methods"][GIFT]["amount"] = 480.0
    ok(env, "book_reservation", **booking(payment_methods=[{"payment_id": GIFT, "amount": 480}]))
    assert user(db)["payment_methods"][GIFT]["amount"] == 0.0


def test_book_reservation_checks_user_before_flights_and_flights_before_payment(env: Environment) -> None:
    bad_everything = booking(
        user_id="nobody_1",
        flights=[{"flight_number": "HAT999", "date": DAY}],
        payment_methods=[{"payment_id": OTHER_CARD, "amount": 1}],
    )
    refused(env, "book_reservation", "User nobody_1 not found", **bad_everything)
    refused(env, "book_reservation", "Flight HAT999 not found", **{**bad_everything, "user_id": USER})


def test_book_reservation_same_certificate_twice_fails_like_upstream(env: Environment, db: dict[str, Any]) -> None:
    twice = [{"payment_id": CERT, "amount": 240}, {"payment_id": CERT, "amount": 240}]
    result = call(env, "book_reservation", **booking(payment_methods=twice))
    assert result.content == f"Error: '{CERT}'"  # upstream pops the certificate twice (KeyError)
    assert "HATHAT" not in db["reservations"] and seats(db, "HAT001") == 3


# --------------------------------------------------------------------------- cancel_reservation


def test_cancel_reservation_refunds_every_payment_and_keeps_seats(env: Environment, db: dict[str, Any]) -> None:
    gift_before = user(db)["payment_methods"][GIFT]["amount"]
    cancelled = ok(env, "cancel_reservation", reservation_id="abc123")
    assert cancelled["status"] == "cancelled" == reservation(db)["status"]
    assert reservation(db)["payment_history"] == [
        {"payment_id": CARD, "amount": 700},
        {"payment_id": CARD, "amount": -700},
    ]
    assert seats(db, "HAT001") == 3 and user(db)["payment_methods"][GIFT]["amount"] == gift_before
    assert env.actions == [{"name": "cancel_reservation", "arguments": {"reservation_id": "abc123"}}]


def test_cancel_reservation_twice_negates_again(env: Environment, db: dict[str, Any]) -> None:
    ok(env, "cancel_reservation", reservation_id=RES)
    ok(env, "cancel_reservation", reservation_id=RES)
    amounts = [p["amount"] for p in reservation(db)["payment_history"]]
    assert amounts == [700, -700, -700, 700]


def test_cancel_reservation_unknown(env: Environment) -> None:
    refused(env, "cancel_reservation", "Reservation ZZZ999 not found", reservation_id="ZZZ999")


# --------------------------------------------------------------------------- send_certificate


def test_send_certificate_fixed_ids_float_amount_and_limit(env: Environment, db: dict[str, Any]) -> None:
    message = ok(env, "send_certificate", user_id="emma kim 9957", amount=50)
    assert message == "Certificate certificate_3221322 added to user emma_kim_9957 with amount 50."
    assert user(db)["payment_methods"]["certificate_3221322"] == {
        "source": "certificate",
        "id": "certificate_3221322",
        "amount": 50.0,
    }
    assert isinstance(user(db)["payment_methods"]["certificate_3221322"]["amount"], float)
    assert "certificate_3221323" in ok(env, "send_certificate", user_id=USER, amount=100)
    assert "certificate_3221324" in ok(env, "send_certificate", user_id=USER, amount=100)
    env.actions.clear()
    refused(env, "send_certificate", "Too many certificates", user_id=USER, amount=10)
    refused(env, "send_certificate", "User x_1 not found", user_id="x_1", amount=10)


# --------------------------------------------------------------------------- update_reservation_baggages


def test_update_baggages_charges_new_paid_bags(env: Environment, db: dict[str, Any]) -> None:
    ok(env, "update_reservation_baggages", reservation_id=RES, total_baggages=3, nonfree_baggages=2, payment_id=CARD)
    stored = reservation(db)
    assert stored["payment_history"][-1] == {"payment_id": CARD, "amount": 100}
    assert (stored["total_baggages"], stored["nonfree_baggages"]) == (3, 2)


def test_update_baggages_free_change_records_no_payment(env: Environment, db: dict[str, Any]) -> None:
    reservation(db)["nonfree_baggages"] = 2
    ok(env, "update_reservation_baggages", reservation_id=RES, total_baggages=1, nonfree_baggages=1, payment_id=GIFT)
    stored = reservation(db)
    assert stored["payment_history"] == [{"payment_id": CARD, "amount": 700}]
    assert (stored["total_baggages"], stored["nonfree_baggages"]) == (1, 1)
    assert user(db)["payment_methods"][GIFT]["amount"] == 500.0  # debited by 0


def test_update_baggages_with_gift_card(env: Environment, db: dict[str, Any]) -> None:
    ok(
        env,
        "update_reservation_baggages",
        reservation_id=RES,
        total_baggages=2,
        nonfree_baggages=1,
        payment_id="GIFT CARD 2222222",
    )
    assert user(db)["payment_methods"][GIFT]["amount"] == 450.0
    assert reservation(db)["payment_history"][-1] == {"payment_id": GIFT, "amount": 50}


@pytest.mark.parametrize(
    ("payment_id", "message"),
    [
        (OTHER_CARD, "Payment method not found"),
        (CERT, "Certificate cannot be used to update reservation"),
        ("gift_card_poor", "Gift card balance is not enough"),
    ],
)
def test_update_baggages_payment_refusals(env: Environment, db: dict[str, Any], payment_id: str, message: str) -> None:
    user(db)["payment_methods"]["gift_card_poor"] = {"source": "gift_card", "id": "gift_card_poor", "amount": 99.5}
    arguments = {"reservation_id": RES, "total_baggages": 3, "nonfree_baggages": 2, "payment_id": payment_id}
    refused(env, "update_reservation_baggages", message, **arguments)


def test_update_baggages_unknown_reservation(env: Environment) -> None:
    arguments = {"reservation_id": "NOPE00", "total_baggages": 1, "nonfree_baggages": 0, "payment_id": CARD}
    refused(env, "update_reservation_baggages", "Reservation NOPE00 not found", **arguments)


# --------------------------------------------------------------------------- update_reservation_flights


def change(**overrides: Any) -> dict[str, Any]:
    return {"reservation_id": RES, "cabin": "economy", "flights": ITINERARY, "payment_id": CARD, **overrides}


def test_update_flights_unchanged_keeps_prices_and_records_no_payment(env: Environment, db: dict[str, Any]) -> None:
    flights = [{"flight_number": "hat001", "date": DAY}, {"flight_number": "HAT 002", "date": DAY}]
    ok(env, "update_reservation_flights", **change(flights=flights, payment_id=GIFT))
    stored = reservation(db)
    assert [(s["flight_number"], s["price"]) for s in stored["flights"]] == [("HAT001", 200), ("HAT002", 150)]
    assert stored["payment_history"] == [{"payment_id": CARD, "amount": 700}]
    assert user(db)["payment_methods"][GIFT]["amount"] == 500.0


def test_update_flights_new_segment_is_priced_and_charged(env: Environment, db: dict[str, Any]) -> None:
    flights = [{"flight_number": "HAT001", "date": DAY}, {"flight_number": "hat-005", "date": DAY}]
    ok(env, "update_reservation_flights", **change(flights=flights))
    stored = reservation(db)
    assert stored["flights"][1] == {
        "flight_number": "HAT005",
        "origin": "LAX",
        "destination": "SEA",
        "date": DAY,
        "price": 200,
    }
    assert stored["payment_history"][-1] == {"payment_id": CARD, "amount": (200 - 150) * 2}
    assert seats(db, "HAT005") == 3  # seats are not adjusted on a change


def test_update_flights_cabin_change_reprices_everything(env: Environment, db: dict[str, Any]) -> None:
    ok(env, "update_reservation_flights", **change(cabin="business"))
    stored = reservation(db)
    assert stored["cabin"] == "business"
    assert [s["price"] for s in stored["flights"]] == [1000, 1000]
    assert stored["payment_history"][-1] == {"payment_id": CARD, "amount": (2000 - 350) * 2}


def test_update_flights_refund_credits_gift_card(env: Environment, db: dict[str, Any]) -> None:
    ok(env, "update_reservation_flights", **change(flights=ITINERARY[:1], payment_id=GIFT))
    assert user(db)["payment_methods"][GIFT]["amount"] == 800.0  # 500 - (-150 * 2)
    assert reservation(db)["payment_history"][-1] == {"payment_id": GIFT, "amount": -300}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"reservation_id": "NOPE00"}, "Reservation NOPE00 not found"),
        ({"cabin": "basic_economy"}, "Not enough seats on flight HAT001"),
        (
            {"flights": [{"flight_number": "HAT001", "date": "2024-05-21"}]},
            "Flight HAT001 not available on date 2024-05-21",
        ),
        ({"flights": [{"flight_number": "HAT777", "date": DAY}]}, "Flight HAT777 not found"),
        (
            {"flights": [{"flight_number": "HAT002", "date": "2024-05-19"}]},
            "Flight HAT002 not found on date 2024-05-19",
        ),
        ({"payment_id": OTHER_CARD}, "Payment method not found"),
        ({"cabin": "business", "payment_id": CERT}, "Certificate cannot be used to update reservation"),
        ({"cabin": "business", "payment_id": GIFT}, "Gift card balance is not enough"),
    ],
)
def test_update_flights_refusals(env: Environment, overrides: dict[str, Any], message: str) -> None:
    refused(env, "update_reservation_flights", message, **change(**overrides))


def test_update_flights_seat_check_uses_passenger_count(env: Environment, db: dict[str, Any]) -> None:
    db["flights"]["HAT005"]["dates"][DAY]["available_seats"]["economy"] = 1
    flights = [{"flight_number": "HAT001", "date": DAY}, {"flight_number": "HAT005", "date": DAY}]
    refused(env, "update_reservation_flights", "Not enough seats on flight HAT005", **change(flights=flights))


def test_update_flights_certificate_refused_even_at_zero_price(env: Environment) -> None:
    refused(
        env, "update_reservation_flights", "Certificate cannot be used to update reservation", **change(payment_id=CERT)
    )


# --------------------------------------------------------------------------- update_reservation_passengers


def test_update_passengers(env: Environment, db: dict[str, Any]) -> None:
    people = [{"first_name": "Ann", "last_name": "Lee", "dob": "2001-01-01"}, PASSENGER]
    ok(env, "update_reservation_passengers", reservation_id="abc-123", passengers=people)
    assert reservation(db)["passengers"] == people


@pytest.mark.parametrize(
    ("reservation_id", "passengers", "message"),
    [
        (RES, [PASSENGER], "Number of passengers does not match"),
        (RES, [PASSENGER] * 3, "Number of passengers does not match"),
        ("XYZ", [PASSENGER], "Reservation XYZ not found"),
    ],
)
def test_update_passengers_refusals(
    env: Environment, reservation_id: str, passengers: list[dict[str, str]], message: str
) -> None:
    refused(env, "update_reservation_passengers", message, reservation_id=reservation_id, passengers=passengers)


# --------------------------------------------------------------------------- read_db


def test_read_db_completes_optional_fields_and_orders_keys(tmp_path: Any) -> None:
    raw = make_db()
    raw["flights"]["HAT001"] = {
        k: raw["flights"]["HAT001"][k]
        for k in (
            "origin",
            "destination",
            "flight_number",
            "scheduled_departure_time_est",
            "scheduled_arrival_time_est",
            "dates",
        )
    }
    del raw["reservations"][RES]["status"]
    del raw["users"][USER]["address"]["address2"]
    raw["users"][USER]["payment_methods"][GIFT]["amount"] = 500
    path = tmp_path / "db.json"
    path.write_text(json.dumps(raw))
    db = read_db(path)
    assert db["reservations"][RES]["status"] is None
    assert list(db["users"][USER]["address"])[:2] == ["address1", "address2"]
    assert db["users"][USER]["address"]["address2"] is None
    assert isinstance(db["users"][USER]["payment_methods"][GIFT]["amount"], float)
    assert next(iter(db["flights"]["HAT001"])) == "flight_number"
    assert all(next(iter(s)) == "flight_number" for s in db["reservations"][RES]["flights"])
    assert db_hash(db) == db_hash(make_db())
