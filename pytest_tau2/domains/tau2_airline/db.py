"""The airline database: ``db.json`` parsed into the plain dict that mirrors upstream's dump.

Upstream validates the file into pydantic models and hashes ``model_dump()``. Three things
separate the file from that dump, and :func:`read_db` puts each of them right:

- reservations have no ``status`` key in the file; the dump shows ``"status": null``;
- ``address2`` is optional upstream (dumped as ``null`` when absent; the pinned file has it
  everywhere, so this is a guard);
- the dump writes flights and reservation segments with ``flight_number`` first (model field
  order). Key order never changes the hash, but it is the order the agent reads in tool
  results, so we follow the dump.

Gift-card and certificate balances are floats in the model; the file already writes them as
floats, and :func:`read_db` keeps them so even if an edited file holds an int.
"""

from __future__ import annotations

from pathlib import Path
from typing import NotRequired, TypedDict, cast

from pytest_tau2.data.parsing import load_json_file
from pytest_tau2.environment.jsontypes import JSONObject


class Name(TypedDict):
    first_name: str
    last_name: str


class Address(TypedDict):
    address1: str
    address2: str | None
    city: str
    country: str
    state: str
    zip: str


class PaymentMethod(TypedDict):
    """A credit card, gift card or certificate (the last two have an ``amount`` balance)."""

    source: str
    id: str
    amount: NotRequired[float]
    brand: NotRequired[str]
    last_four: NotRequired[str]


class Passenger(TypedDict):
    first_name: str
    last_name: str
    dob: str


class User(TypedDict):
    user_id: str
    name: Name
    address: Address
    email: str
    dob: str
    payment_methods: dict[str, PaymentMethod]
    saved_passengers: list[Passenger]
    membership: str
    reservations: list[str]


class FlightDate(TypedDict, total=False):
    """A flight on one date: its status, and seats and prices per cabin while it is bookable."""

    status: str
    available_seats: dict[str, int]
    prices: dict[str, int]
    estimated_departure_time_est: str
    estimated_arrival_time_est: str
    actual_departure_time_est: str
    actual_arrival_time_est: str


class Flight(TypedDict):
    flight_number: str
    origin: str
    destination: str
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    dates: dict[str, FlightDate]


class Segment(TypedDict):
    """A requested segment of an itinerary (upstream's FlightInfo, after its model)."""

    flight_number: str
    date: str


class ReservationFlight(TypedDict):
    flight_number: str
    origin: str
    destination: str
    date: str
    price: int


class PaymentRecord(TypedDict):
    """A line of a reservation's payment history (whole dollars; refunds negative)."""

    payment_id: str
    amount: int


class Reservation(TypedDict):
    """A reservation. The baggage counts are ints in the pinned file and in what ``book_reservation``
    stores; ``update_reservation_baggages`` stores them as the caller passed them (upstream does)."""

    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: str
    cabin: str
    flights: list[ReservationFlight]
    passengers: list[Passenger]
    payment_history: list[PaymentRecord]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: str
    status: str | None


class AirlineDB(TypedDict):
    """The airline DB, as :func:`read_db` returns it (the types the pinned ``db.json`` holds)."""

    flights: dict[str, Flight]
    users: dict[str, User]
    reservations: dict[str, Reservation]


BALANCE_SOURCES: frozenset[str] = frozenset({"gift_card", "certificate"})
"""Payment-method sources whose ``amount`` the model stores as a float."""


def read_db(path: str | Path) -> AirlineDB:
    """Parse the airline ``db.json`` at ``path`` (no caching: the core caches)."""
    db = cast("dict[str, dict[str, JSONObject]]", load_json_file(path))
    flights = db.get("flights", {})
    for number, flight in flights.items():
        flights[number] = flight_number_first(flight)
    for user in db.get("users", {}).values():
        complete_user(user)
    for reservation in db.get("reservations", {}).values():
        complete_reservation(reservation)
    return cast(AirlineDB, db)  # the file's records, completed: upstream's dump


def flight_number_first(entry: JSONObject) -> JSONObject:
    """A copy of ``entry`` with ``flight_number`` as its first key (the dump's field order)."""
    if "flight_number" not in entry or next(iter(entry)) == "flight_number":
        return entry
    return {"flight_number": entry["flight_number"], **entry}


def complete_user(user: JSONObject) -> JSONObject:
    """Add ``address2: None`` where absent and make balances floats (in place); returns ``user``."""
    address = user.get("address")
    if isinstance(address, dict) and "address2" not in address:
        user["address"] = {
            "address1": address.get("address1"),
            "address2": None,
            **{k: v for k, v in address.items() if k != "address1"},
        }
    for method in cast("dict[str, JSONObject]", user.get("payment_methods", {})).values():
        amount = method.get("amount")
        if method.get("source") in BALANCE_SOURCES and isinstance(amount, int):
            method["amount"] = float(amount)
    return user


def complete_reservation(reservation: JSONObject) -> JSONObject:
    """Add ``status: None`` where absent, order segment keys (in place); returns ``reservation``."""
    reservation.setdefault("status", None)
    segments = reservation.get("flights")
    if isinstance(segments, list):
        reservation["flights"] = [flight_number_first(cast(JSONObject, s)) for s in segments]
    return reservation
