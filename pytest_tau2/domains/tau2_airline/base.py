"""What every airline tool shares: constants, argument schemas, upstream's model
conversions, and the base class with the lookups and the payment rule for changes.

Behaviour follows upstream tau2's airline toolkit check for check: the same arguments, the
same refusals in the same order with the same messages, the same effects (including what
upstream does *not* check: no 24-hour or membership rule, no seat release on cancel, a
certificate consumed whole). Two deliberate additions:

- ids are found whatever their spelling (:mod:`pytest_tau2.environment.ids`): reservation and
  user ids, flight numbers and payment ids; what is written back keeps the stored spelling.
  Dates and airport codes compare exactly.
- ``calculate`` refuses integer powers whose result would be astronomically large (upstream
  would hang on ``9**9**9**9``); every other expression gives upstream's result or error.

Arguments are taken as upstream takes them (:class:`~pytest_tau2.domains.tau2_common.tools.Tau2Tool`):
converted only where upstream builds a model from them (:mod:`.models`: payments and booked
baggage counts become ``int``, certificate amounts ``float``), used as given everywhere else
(``update_reservation_baggages`` stores the counts as passed). This decides the DB hash.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar, TypedDict, TypeVar, cast, get_args

from pytest_tau2.domains.tau2_airline.db import (
    AirlineDB,
    Flight,
    FlightDate,
    PaymentRecord,
    Reservation,
    ReservationFlight,
    User,
)
from pytest_tau2.domains.tau2_airline.models import CabinClass, FlightType, Insurance, Payment
from pytest_tau2.domains.tau2_common.tools import Tau2Tool, upstream_model
from pytest_tau2.environment.db import peek, peek_values
from pytest_tau2.environment.ids import find_key
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.errors import ToolError

_R = TypeVar("_R")

NAMESPACE = "tau2_airline"
NEW_RESERVATION_IDS: tuple[str, ...] = ("HATHAT", "HATHAU", "HATHAV")
NEW_CERTIFICATE_IDS: tuple[str, ...] = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
NOW = "2024-05-15T15:00:00"
"""The fixed clock of the airline domain (``created_at`` of new reservations)."""
CABINS: tuple[str, ...] = get_args(CabinClass)
FLIGHT_TYPES: tuple[str, ...] = get_args(FlightType)
INSURANCE_CHOICES: tuple[str, ...] = get_args(Insurance)
INSURANCE_FEE = 30
"""Per passenger."""
BAG_FEE = 50
"""Per non-free bag."""
BALANCE_SOURCES: frozenset[str] = frozenset({"gift_card", "certificate"})
AIRPORTS: tuple[tuple[str, str], ...] = (
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
)


# --------------------------------------------------------------------------- schemas


def string(description: str, choices: Sequence[str] | None = None) -> JSONObject:
    schema: JSONObject = {"type": "string", "description": description}
    if choices is not None:
        schema["enum"] = list(choices)
    return schema


def integer(description: str) -> JSONObject:
    return {"type": "integer", "description": description}


def item(properties: JSONObject) -> JSONObject:
    """A nested object: every property required, unknown keys tolerated (upstream drops them)."""
    return {"type": "object", "properties": properties, "required": list(properties)}


def array(description: str, items: JSONObject) -> JSONObject:
    return {"type": "array", "description": description, "items": items}


def arguments(**properties: JSONValue) -> JSONObject:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


USER_ID = string("The user's id, e.g. 'emma_kim_9957'.")
RESERVATION_ID = string("The reservation id, six letters and digits, e.g. 'EHGLP3'.")
FLIGHT_NUMBER = string("The flight number, e.g. 'HAT170'.")
DATE = string("A date written YYYY-MM-DD, e.g. '2024-05-22'.")
AIRPORT = string("An airport's IATA code, e.g. 'JFK'.")
CABIN = string("The cabin class.", CABINS)
PAYMENT_ID = string("The id of a payment method in the user's profile, e.g. 'credit_card_4421486'.")
FLIGHT_ITEM = item({"flight_number": FLIGHT_NUMBER, "date": DATE})
PASSENGER_ITEM = item(
    {
        "first_name": string("The passenger's first name."),
        "last_name": string("The passenger's last name."),
        "dob": string("The passenger's date of birth, YYYY-MM-DD."),
    }
)
PAYMENT_ITEM = item({"payment_id": PAYMENT_ID, "amount": integer("The whole-dollar amount charged to this method.")})


# --------------------------------------------------------------------------- base


class AirlineTool(Tau2Tool):
    """Base of the airline tools: lookups shared by several tools."""

    abstract = True
    namespace: ClassVar[str] = NAMESPACE

    if TYPE_CHECKING:  # the state's DB is read_db's (a fresh_db copy of it); no runtime cost

        @property
        def db(self) -> AirlineDB: ...

    def _user(self, user_id: JSONValue, *, writable: bool = True) -> User:
        return _lookup(self.db["users"], user_id, f"User {user_id} not found", writable)

    def _reservation(self, reservation_id: JSONValue, *, writable: bool = True) -> Reservation:
        return _lookup(self.db["reservations"], reservation_id, f"Reservation {reservation_id} not found", writable)

    def _flight(self, flight_number: JSONValue) -> Flight:
        return _lookup(self.db["flights"], flight_number, f"Flight {flight_number} not found")

    def _flight_date(self, flight_number: JSONValue, date: JSONValue) -> tuple[Flight, FlightDate]:
        """The flight and its status on ``date`` (dates compare exactly)."""
        flight = self._flight(flight_number)
        day = flight["dates"].get(date) if isinstance(date, str) else None
        if day is None:
            raise ToolError(f"Flight {flight_number} not found on date {date}")
        return flight, day

    def _bookable(
        self, flight_number: JSONValue, date: JSONValue, cabin: JSONValue, passengers: int
    ) -> tuple[Flight, FlightDate]:
        """The flight and its date status, refused unless available with enough seats in ``cabin``."""
        flight, day = self._flight_date(flight_number, date)
        if day.get("status") != "available":
            raise ToolError(f"Flight {flight_number} not available on date {date}")
        # A cabin that is not a string finds no seats: the KeyError (TypeError) refuses the call.
        if day["available_seats"][cast(str, cabin)] < passengers:
            raise ToolError(f"Not enough seats on flight {flight_number}")
        return flight, day

    def _direct_flights(
        self, date: str, origin: str | None = None, destination: str | None = None, leave_after: str | None = None
    ) -> list[DirectFlight]:
        """Flights bookable on ``date`` (status "available"), in DB order.

        The tests run in upstream's order, so a date of the wrong type is only looked up (and
        refused) for a flight that already matched the airports, as upstream does it.
        """
        found = []
        for flight in peek_values(self.db["flights"]):  # read only: direct_flight copies what it keeps
            if origin is not None and flight["origin"] != origin:
                continue
            if destination is not None and flight["destination"] != destination:
                continue
            day = flight["dates"].get(date)
            if day is None or day.get("status") != "available":
                continue
            if leave_after is not None and flight["scheduled_departure_time_est"] < leave_after:
                continue
            found.append(direct_flight(flight, day))
        return found

    def _pay_update(self, user: User, payment_id: JSONValue, price: float) -> PaymentRecord | None:
        """Upstream's payment rule for changes to an existing reservation.

        The method must be the user's; a certificate is refused; a gift card must cover
        ``price`` and is debited by it, even by zero (a negative price credits it). A payment
        record is returned only when the price is not zero.
        """
        methods = user["payment_methods"]
        key = find_key(methods, payment_id) if isinstance(payment_id, str) else None
        if key is None:
            raise ToolError("Payment method not found")
        method = methods[key]
        if method["source"] == "certificate":
            raise ToolError("Certificate cannot be used to update reservation")
        if method["source"] == "gift_card" and method["amount"] < price:
            raise ToolError("Gift card balance is not enough")
        if method["source"] == "gift_card":
            method["amount"] -= price
        if price == 0:
            return None
        return cast(PaymentRecord, upstream_model(Payment, {"payment_id": key, "amount": price}))


def _lookup(mapping: Mapping[str, _R], wanted: JSONValue, message: str, writable: bool = True) -> _R:
    """The record ``wanted`` names; ``writable=False``: the stored one itself, to be read only
    (:func:`~pytest_tau2.environment.db.peek`)."""
    key = find_key(mapping, wanted) if isinstance(wanted, str) else None
    if key is None:
        raise ToolError(message)
    return mapping[key] if writable else peek(mapping, key)


class DirectFlight(TypedDict):
    """A search result (upstream's DirectFlight)."""

    flight_number: str
    origin: str
    destination: str
    status: str
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    date: str | None
    available_seats: dict[str, int]
    prices: dict[str, int]


def direct_flight(flight: Flight, day: FlightDate, date: str | None = None) -> DirectFlight:
    """A search result (upstream's DirectFlight): a snapshot of one bookable flight date."""
    return {
        "flight_number": flight["flight_number"],
        "origin": flight["origin"],
        "destination": flight["destination"],
        "status": "available",
        "scheduled_departure_time_est": flight["scheduled_departure_time_est"],
        "scheduled_arrival_time_est": flight["scheduled_arrival_time_est"],
        "date": date,
        "available_seats": dict(day["available_seats"]),
        "prices": dict(day["prices"]),
    }


def reservation_flight(flight: Flight, date: str, price: int) -> ReservationFlight:
    """A reservation segment (upstream's ReservationFlight), stored flight number kept."""
    return {
        "flight_number": flight["flight_number"],
        "origin": flight["origin"],
        "destination": flight["destination"],
        "date": date,
        "price": price,
    }
