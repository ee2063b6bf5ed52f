"""Airline tool arguments taken the way upstream takes them.

Upstream checks no argument at call time: a value is converted only where a tool builds a
model from it (pydantic lax mode), and used as given everywhere else. Each case below was run
against upstream's code at the pin: where it accepts a value we accept it and write the same
DB (compared here with the DB written by the well-typed call), where it refuses we refuse and
the DB is untouched.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from pytest_tau2.domains.tau2_airline import TOOL_CLASSES
from pytest_tau2.environment import Environment, db_hash
from tests.unit.test_airline_tools import (
    CARD,
    DAY,
    ITINERARY,
    PASSENGER,
    RES,
    USER,
    booking,
    call,
    change,
    make_db,
    ok,
    reservation,
    user,
)


@pytest.fixture
def db() -> dict[str, Any]:
    return make_db()


@pytest.fixture
def env(db: dict[str, Any]) -> Environment:
    return _env(db)


def _env(db: dict[str, Any]) -> Environment:
    state = {"db": db}
    return Environment("agent", state, [cls(state) for cls in TOOL_CLASSES])


def db_after(name: str, **arguments: Any) -> str:
    """The DB hash after one successful call on a fresh DB."""
    env = _env(make_db())
    ok(env, name, **arguments)
    return db_hash(env.db)


def refused_with(env: Environment, name: str, fragment: str, **arguments: Any) -> str:
    """Call a tool that must refuse with a message containing ``fragment``; the DB stays untouched."""
    before = db_hash(env.db)
    result = call(env, name, **arguments)
    assert result.error and fragment in result.content, result.content
    assert db_hash(env.db) == before and env.actions == []
    return result.content


CASH = [{"payment_id": CARD, "amount": 480}]
"""Pays ``booking()`` in full by card."""


# --------------------------------------------------------------------------- argument names


def test_every_tool_takes_arguments_as_upstream_and_its_schema_names_its_parameters() -> None:
    for cls in TOOL_CLASSES:
        assert cls.check_argument_types is False, cls.name
        names = list(inspect.signature(cls.run).parameters)[1:]
        assert list(cls.parameters["properties"]) == names == cls.parameters["required"], cls.name
        assert cls.parameters["additionalProperties"] is False


def test_unknown_and_missing_argument_names_are_refused_like_a_python_call(env: Environment) -> None:
    assert call(env, "get_user_details").content == "Error: get_user_details() missing 1 required argument: 'user_id'"
    assert (
        call(env, "get_user_details", user_id=USER, extra=1).content
        == "Error: get_user_details() got an unexpected keyword argument 'extra'"
    )
    assert (
        call(env, "send_certificate").content
        == "Error: send_certificate() missing 2 required arguments: 'user_id', 'amount'"
    )
    assert env.tool_errors == 3


# --------------------------------------------------------------------------- book_reservation


@pytest.mark.parametrize("amount", ["480", " 480 ", 480.0, "480.0"])
def test_book_payment_amount_as_numeric_string_or_whole_float(db: dict[str, Any], amount: Any) -> None:
    env = _env(db)
    ok(env, "book_reservation", **booking(payment_methods=[{"payment_id": CARD, "amount": amount}]))
    paid = reservation(db, "HATHAT")["payment_history"]
    assert paid == CASH and isinstance(paid[0]["amount"], int)
    assert db_hash(db) == db_after("book_reservation", **booking(payment_methods=CASH))
    assert env.actions[0]["arguments"]["payment_methods"][0]["amount"] == amount  # recorded as given


@pytest.mark.parametrize(
    ("amount", "fragment"),
    [
        (480.5, "Input should be a valid integer, got a number with a fractional part"),
        ("480 dollars", "Input should be a valid integer, unable to parse string as an integer"),
        (None, "Input should be a valid integer"),
    ],
)
def test_book_payment_amount_the_model_refuses(env: Environment, amount: Any, fragment: str) -> None:
    arguments = booking(payment_methods=[{"payment_id": CARD, "amount": amount}])
    content = refused_with(env, "book_reservation", fragment, **arguments)
    assert content.startswith("Error: 1 validation error for Payment\namount\n")


def test_book_total_baggages_as_numeric_string(db: dict[str, Any]) -> None:
    ok(_env(db), "book_reservation", **booking(total_baggages="2", payment_methods=CASH))
    assert reservation(db, "HATHAT")["total_baggages"] == 2
    assert db_hash(db) == db_after("book_reservation", **booking(total_baggages=2, payment_methods=CASH))


def test_book_nonfree_baggages_as_string_is_refused(env: Environment) -> None:
    # The model would convert it, but upstream also adds the argument itself to the price.
    refused_with(
        env,
        "book_reservation",
        "unsupported operand type(s) for +=: 'int' and 'str'",
        **booking(nonfree_baggages="1", payment_methods=CASH),
    )


def test_book_nonfree_baggages_as_whole_float(db: dict[str, Any]) -> None:
    ok(_env(db), "book_reservation", **booking(nonfree_baggages=1.0, payment_methods=CASH))
    assert isinstance(reservation(db, "HATHAT")["nonfree_baggages"], int)
    assert db_hash(db) == db_after("book_reservation", **booking(payment_methods=CASH))


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"origin": 123}, "validation error for Reservation\norigin\n  Input should be a valid string"),
        ({"flight_type": "return"}, "Input should be 'round_trip' or 'one_way'"),
        ({"insurance": True}, "Input should be 'yes' or 'no'"),
        ({"total_baggages": "two"}, "total_baggages\n  Input should be a valid integer"),
        ({"passengers": [{"first_name": "A", "last_name": "B"}]}, "1 validation error for Passenger\ndob\n"),
        ({"passengers": ["Emma Kim"]}, "validation error for Reservation\npassengers.0\n"),
        ({"payment_methods": ["credit card"]}, "validation error for Reservation\npayment_history.0\n"),
        ({"flights": [{"flight_number": 1, "date": DAY}]}, "1 validation error for FlightInfo\nflight_number\n"),
        ({"flights": ["HAT001"]}, "'str' object has no attribute 'flight_number'"),
        ({"flights": None}, "'NoneType' object is not iterable"),
    ],
)
def test_book_values_upstream_refuses(env: Environment, overrides: dict[str, Any], fragment: str) -> None:
    refused_with(env, "book_reservation", fragment, **booking(**overrides))


def test_book_several_model_errors_are_reported_together(env: Environment) -> None:
    content = refused_with(
        env, "book_reservation", "3 validation errors for Reservation", **booking(origin=1, cabin="first", insurance=0)
    )
    assert "\norigin\n" in content and "\ncabin\n" in content and "\ninsurance\n" in content


def test_book_nested_unknown_keys_are_dropped(db: dict[str, Any]) -> None:
    passenger = {**PASSENGER, "seat": "1A"}
    ok(_env(db), "book_reservation", **booking(passengers=[passenger], payment_methods=CASH))
    assert reservation(db, "HATHAT")["passengers"] == [PASSENGER]


# --------------------------------------------------------------------------- send_certificate


@pytest.mark.parametrize(
    ("amount", "stored", "shown"),
    [(50, 50.0, "50"), ("50", 50.0, "50"), (50.5, 50.5, "50.5"), ("50.5", 50.5, "50.5"), (True, 1.0, "True")],
)
def test_send_certificate_amount_becomes_a_float_and_is_shown_as_given(
    env: Environment, db: dict[str, Any], amount: Any, stored: float, shown: str
) -> None:
    message = ok(env, "send_certificate", user_id=USER, amount=amount)
    assert message == f"Certificate certificate_3221322 added to user {USER} with amount {shown}."
    certificate = user(db)["payment_methods"]["certificate_3221322"]
    assert certificate == {"source": "certificate", "id": "certificate_3221322", "amount": stored}
    assert isinstance(certificate["amount"], float)


@pytest.mark.parametrize("amount", ["fifty", None, [50]])
def test_send_certificate_amount_the_model_refuses(env: Environment, amount: Any) -> None:
    content = refused_with(
        env, "send_certificate", "1 validation error for Certificate\namount\n", user_id=USER, amount=amount
    )
    assert "Input should be a valid number" in content


# --------------------------------------------------------------------------- update_reservation_baggages


def bags(**overrides: Any) -> dict[str, Any]:
    return {"reservation_id": RES, "total_baggages": 3, "nonfree_baggages": 2, "payment_id": CARD, **overrides}


@pytest.mark.parametrize("total", ["2", 2.5, None, "two"])
def test_update_baggages_stores_the_total_as_given(env: Environment, db: dict[str, Any], total: Any) -> None:
    # Upstream assigns the count without a model: whatever was passed is stored (and hashed).
    ok(env, "update_reservation_baggages", **bags(total_baggages=total))
    assert reservation(db)["total_baggages"] == total
    assert reservation(db)["payment_history"][-1] == {"payment_id": CARD, "amount": 100}


def test_update_baggages_nonfree_as_string_is_refused(env: Environment) -> None:
    refused_with(
        env,
        "update_reservation_baggages",
        "unsupported operand type(s) for -: 'str' and 'int'",
        **bags(nonfree_baggages="2"),
    )


def test_update_baggages_float_counts_stay_floats_and_the_payment_is_whole(
    env: Environment, db: dict[str, Any]
) -> None:
    ok(env, "update_reservation_baggages", **bags(total_baggages=3.0, nonfree_baggages=2.0))
    stored = reservation(db)
    assert isinstance(stored["total_baggages"], float) and isinstance(stored["nonfree_baggages"], float)
    assert stored["payment_history"][-1] == {"payment_id": CARD, "amount": 100}
    assert isinstance(stored["payment_history"][-1]["amount"], int)


def test_update_baggages_fractional_price_is_refused_after_the_gift_card_is_debited(
    env: Environment, db: dict[str, Any]
) -> None:
    # Upstream debits the gift card, then fails to build the Payment: the debit stays.
    result = call(env, "update_reservation_baggages", **bags(nonfree_baggages=0.01, payment_id="gift_card_2222222"))
    assert result.error and "got a number with a fractional part" in result.content
    assert user(db)["payment_methods"]["gift_card_2222222"]["amount"] == 499.5
    assert reservation(db)["payment_history"] == [{"payment_id": CARD, "amount": 700}]


# --------------------------------------------------------------------------- update_reservation_flights / passengers


def test_update_flights_cabin_is_stored_as_given_when_no_segment_is_priced(
    env: Environment, db: dict[str, Any]
) -> None:
    ok(env, "update_reservation_flights", **change(cabin="first", flights=[]))
    assert reservation(db)["cabin"] == "first" and reservation(db)["flights"] == []
    assert reservation(db)["payment_history"][-1] == {"payment_id": CARD, "amount": -700}


def test_update_flights_unknown_cabin_is_refused_when_a_segment_is_priced(env: Environment) -> None:
    assert refused_with(env, "update_reservation_flights", "'first'", **change(cabin="first")) == "Error: 'first'"


@pytest.mark.parametrize(
    ("flights", "fragment"),
    [
        (["HAT001", "HAT002"], "'str' object has no attribute 'flight_number'"),
        ([{"flight_number": "HAT001"}], "1 validation error for FlightInfo\ndate\n  Field required"),
    ],
)
def test_update_flights_segments_upstream_refuses(env: Environment, flights: Any, fragment: str) -> None:
    refused_with(env, "update_reservation_flights", fragment, **change(flights=flights))


def test_update_flights_empty_string_counts_as_no_segment(db: dict[str, Any]) -> None:
    ok(_env(db), "update_reservation_flights", **change(flights=""))
    assert db_hash(db) == db_after("update_reservation_flights", **change(flights=[]))


def test_update_passengers_not_all_objects_are_stored_as_given(env: Environment, db: dict[str, Any]) -> None:
    ok(env, "update_reservation_passengers", reservation_id=RES, passengers=["Emma Kim", PASSENGER])
    assert reservation(db)["passengers"] == ["Emma Kim", PASSENGER]


def test_update_passengers_objects_are_converted(env: Environment, db: dict[str, Any]) -> None:
    people = [{**PASSENGER, "seat": "1A"}, {"first_name": "Li", "last_name": "Kim", "dob": "1992-02-02"}]
    ok(env, "update_reservation_passengers", reservation_id=RES, passengers=people)
    assert reservation(db)["passengers"][0] == PASSENGER


def test_update_passengers_objects_the_model_refuses(env: Environment) -> None:
    content = refused_with(
        env,
        "update_reservation_passengers",
        "3 validation errors for Passenger",
        reservation_id=RES,
        passengers=[{}, {}],
    )
    assert "first_name\n  Field required" in content


# --------------------------------------------------------------------------- reads and the transfer


def test_non_string_ids_find_nothing(env: Environment) -> None:
    assert call(env, "get_user_details", user_id=42).content == "Error: User 42 not found"
    assert call(env, "get_reservation_details", reservation_id=None).content == "Error: Reservation None not found"


def test_search_with_null_airport_searches_every_airport(env: Environment) -> None:
    found = ok(env, "search_direct_flight", origin=None, destination="SEA", date=DAY)
    assert [f["flight_number"] for f in found] == ["HAT002", "HAT005"]
    assert ok(env, "search_direct_flight", origin=1, destination="SEA", date=DAY) == []


def test_transfer_summary_of_any_type(env: Environment) -> None:
    result = call(env, "transfer_to_human_agents", summary={"issue": "refund"})
    assert (result.content, result.error, result.ends_conversation) == ("Transfer successful", False, "transfer")


def test_well_typed_calls_are_unchanged(db: dict[str, Any]) -> None:
    env = _env(db)
    ok(env, "book_reservation", **booking(payment_methods=CASH))
    ok(env, "update_reservation_flights", **change(flights=ITINERARY))
    ok(env, "send_certificate", user_id=USER, amount=10)
    assert reservation(db, "HATHAT")["payment_history"] == CASH
    assert user(db)["payment_methods"]["certificate_3221322"]["amount"] == 10.0
