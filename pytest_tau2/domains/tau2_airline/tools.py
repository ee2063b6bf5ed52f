"""The 14 tau2 airline tools, re-implemented on the plain-dict DB of :mod:`.db`.

Behaviour follows upstream tau2's airline toolkit check for check: the same arguments, the
same refusals in the same order with the same messages, the same effects (including what
upstream does *not* check: no 24-hour or membership rule, no seat release on cancel, a
certificate consumed whole). Two deliberate additions:

- ids are found whatever their spelling (:mod:`pytest_tau2.environment.ids`): reservation and
  user ids, flight numbers and payment ids; what is written back keeps the stored spelling.
  Dates and airport codes compare exactly.
- ``calculate`` refuses integer powers whose result would be astronomically large (upstream
  would hang on ``9**9**9**9``); every other expression gives upstream's result or error.

Type rules (they change the DB hash): values upstream builds through a pydantic model are
coerced the way the model does it (payments and booked baggage counts to ``int``,
certificate amounts to ``float``); values it assigns directly keep the type they were given
(``update_reservation_baggages`` stores the counts as passed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pytest_tau2.domains.tau2_common.tools import CalculateMixin, TransferMixin
from pytest_tau2.environment.ids import find_key, same_id
from pytest_tau2.environment.tools import Tool
from pytest_tau2.errors import ToolError

JSONDict = dict[str, Any]

NAMESPACE = "tau2_airline"
NEW_RESERVATION_IDS: tuple[str, ...] = ("HATHAT", "HATHAU", "HATHAV")
NEW_CERTIFICATE_IDS: tuple[str, ...] = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
NOW = "2024-05-15T15:00:00"
"""The fixed clock of the airline domain (``created_at`` of new reservations)."""
CABINS: tuple[str, ...] = ("business", "economy", "basic_economy")
FLIGHT_TYPES: tuple[str, ...] = ("round_trip", "one_way")
INSURANCE_CHOICES: tuple[str, ...] = ("yes", "no")
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


def _string(description: str, choices: Sequence[str] | None = None) -> JSONDict:
    schema: JSONDict = {"type": "string", "description": description}
    if choices is not None:
        schema["enum"] = list(choices)
    return schema


def _integer(description: str) -> JSONDict:
    return {"type": "integer", "description": description}


def _item(properties: JSONDict) -> JSONDict:
    """A nested object: every property required, unknown keys tolerated (upstream drops them)."""
    return {"type": "object", "properties": properties, "required": list(properties)}


def _array(description: str, items: JSONDict) -> JSONDict:
    return {"type": "array", "description": description, "items": items}


def _parameters(**properties: JSONDict) -> JSONDict:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


USER_ID = _string("The user's id, e.g. 'emma_kim_9957'.")
RESERVATION_ID = _string("The reservation id, six letters and digits, e.g. 'EHGLP3'.")
FLIGHT_NUMBER = _string("The flight number, e.g. 'HAT170'.")
DATE = _string("A date written YYYY-MM-DD, e.g. '2024-05-22'.")
AIRPORT = _string("An airport's IATA code, e.g. 'JFK'.")
CABIN = _string("The cabin class.", CABINS)
PAYMENT_ID = _string("The id of a payment method in the user's profile, e.g. 'credit_card_4421486'.")
FLIGHT_ITEM = _item({"flight_number": FLIGHT_NUMBER, "date": DATE})
PASSENGER_ITEM = _item(
    {
        "first_name": _string("The passenger's first name."),
        "last_name": _string("The passenger's last name."),
        "dob": _string("The passenger's date of birth, YYYY-MM-DD."),
    }
)
PAYMENT_ITEM = _item({"payment_id": PAYMENT_ID, "amount": _integer("The whole-dollar amount charged to this method.")})


# --------------------------------------------------------------------------- model-like coercion


def _invalid(model: str, field: str, detail: str) -> ToolError:
    """A refusal shaped like the pydantic validation error upstream raises."""
    return ToolError(f"1 validation error for {model}\n{field}\n  {detail}")


def _as_int(value: Any, model: str, field: str) -> int:
    """What a pydantic ``int`` field makes of ``value`` (lax mode)."""
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, float):
        raise _invalid(model, field, "Input should be a valid integer, got a number with a fractional part")
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise _invalid(
                model, field, "Input should be a valid integer, unable to parse string as an integer"
            ) from None
    raise _invalid(model, field, "Input should be a valid integer")


def _as_float(value: Any, model: str, field: str) -> float:
    """What a pydantic ``float`` field makes of ``value`` (lax mode)."""
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise _invalid(model, field, "Input should be a valid number, unable to parse string as a number") from None
    raise _invalid(model, field, "Input should be a valid number")


def _as_choice(value: Any, choices: Sequence[str], model: str, field: str) -> str:
    if value in choices and isinstance(value, str):
        return value
    quoted = [f"'{c}'" for c in choices]
    options = ", ".join(quoted[:-1]) + f" or {quoted[-1]}"
    raise _invalid(model, field, f"Input should be {options}")


def _text(entry: Any, key: str, model: str) -> str:
    if not isinstance(entry, Mapping):
        raise _invalid(model, key, "Input should be a valid dictionary")
    if key not in entry:
        raise _invalid(model, key, "Field required")
    value = entry[key]
    if not isinstance(value, str):
        raise _invalid(model, key, "Input should be a valid string")
    return value


def _flight_info(entry: Any) -> JSONDict:
    return {"flight_number": _text(entry, "flight_number", "FlightInfo"), "date": _text(entry, "date", "FlightInfo")}


def _passenger(entry: Any) -> JSONDict:
    return {key: _text(entry, key, "Passenger") for key in ("first_name", "last_name", "dob")}


def _payment(entry: Any) -> JSONDict:
    payment_id = _text(entry, "payment_id", "Payment")
    if "amount" not in entry:
        raise _invalid("Payment", "amount", "Field required")
    return {"payment_id": payment_id, "amount": _as_int(entry["amount"], "Payment", "amount")}


# --------------------------------------------------------------------------- base


class AirlineTool(Tool):
    """Base of the airline tools: lookups shared by several tools."""

    abstract = True
    namespace: ClassVar[str] = NAMESPACE

    def _user(self, user_id: str) -> JSONDict:
        return _lookup(self.db["users"], user_id, f"User {user_id} not found")

    def _reservation(self, reservation_id: str) -> JSONDict:
        return _lookup(self.db["reservations"], reservation_id, f"Reservation {reservation_id} not found")

    def _flight(self, flight_number: str) -> JSONDict:
        return _lookup(self.db["flights"], flight_number, f"Flight {flight_number} not found")

    def _flight_date(self, flight_number: str, date: str) -> tuple[JSONDict, JSONDict]:
        """The flight and its status on ``date`` (dates compare exactly)."""
        flight = self._flight(flight_number)
        day = flight["dates"].get(date) if isinstance(date, str) else None
        if day is None:
            raise ToolError(f"Flight {flight_number} not found on date {date}")
        return flight, day

    def _bookable(self, flight_number: str, date: str, cabin: str, passengers: int) -> tuple[JSONDict, JSONDict]:
        """The flight and its date status, refused unless available with enough seats in ``cabin``."""
        flight, day = self._flight_date(flight_number, date)
        if day.get("status") != "available":
            raise ToolError(f"Flight {flight_number} not available on date {date}")
        if day["available_seats"][cabin] < passengers:
            raise ToolError(f"Not enough seats on flight {flight_number}")
        return flight, day

    def _direct_flights(
        self, date: str, origin: str | None = None, destination: str | None = None, leave_after: str | None = None
    ) -> list[JSONDict]:
        """Flights bookable on ``date`` (status "available"), in DB order."""
        found = []
        for flight in self.db["flights"].values():
            day = flight["dates"].get(date)
            if day is None or day.get("status") != "available":
                continue
            if origin is not None and flight["origin"] != origin:
                continue
            if destination is not None and flight["destination"] != destination:
                continue
            if leave_after is not None and flight["scheduled_departure_time_est"] < leave_after:
                continue
            found.append(_direct_flight(flight, day))
        return found

    def _pay_update(self, user: JSONDict, payment_id: str, price: Any) -> JSONDict | None:
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
        return {"payment_id": key, "amount": _as_int(price, "Payment", "amount")}


def _lookup(mapping: Mapping[str, JSONDict], wanted: Any, message: str) -> JSONDict:
    key = find_key(mapping, wanted) if isinstance(wanted, str) else None
    if key is None:
        raise ToolError(message)
    return mapping[key]


def _direct_flight(flight: JSONDict, day: JSONDict, date: str | None = None) -> JSONDict:
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


def _segment(flight: JSONDict, date: str, price: int) -> JSONDict:
    """A reservation segment (upstream's ReservationFlight), stored flight number kept."""
    return {
        "flight_number": flight["flight_number"],
        "origin": flight["origin"],
        "destination": flight["destination"],
        "date": date,
        "price": price,
    }


# --------------------------------------------------------------------------- tools (upstream order)


class BookReservationTool(AirlineTool):
    name = "book_reservation"
    action_name = "book_reservation"
    mutates_state = True
    description = (
        "Create a new reservation for a user: itinerary, cabin, passengers, baggage, insurance "
        "and payment. The payments must add up exactly to the total price (fares for every "
        "passenger, plus insurance and non-free bags)."
    )
    parameters = _parameters(
        user_id=USER_ID,
        origin=AIRPORT,
        destination=AIRPORT,
        flight_type=_string("One way or round trip.", FLIGHT_TYPES),
        cabin=CABIN,
        flights=_array("Every flight segment of the trip, in order.", FLIGHT_ITEM),
        passengers=_array("The travellers, each with name and date of birth.", PASSENGER_ITEM),
        payment_methods=_array("How the total is split over the user's payment methods.", PAYMENT_ITEM),
        total_baggages=_integer("Checked bags in total on the reservation."),
        nonfree_baggages=_integer("How many of those bags are paid for."),
        insurance=_string("Whether travel insurance is bought.", INSURANCE_CHOICES),
    )

    def run(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: str,
        cabin: str,
        flights: list[Any],
        passengers: list[Any],
        payment_methods: list[Any],
        total_baggages: Any,
        nonfree_baggages: Any,
        insurance: str,
    ) -> JSONDict:
        segments = [_flight_info(entry) for entry in flights]
        people = [_passenger(entry) for entry in passengers]
        payments = [_payment(entry) for entry in payment_methods]
        user = self._user(user_id)
        reservation_id = self._new_reservation_id()
        reservation: JSONDict = {
            "reservation_id": reservation_id,
            "user_id": user["user_id"],
            "origin": origin,
            "destination": destination,
            "flight_type": _as_choice(flight_type, FLIGHT_TYPES, "Reservation", "flight_type"),
            "cabin": _as_choice(cabin, CABINS, "Reservation", "cabin"),
            "flights": [],
            "passengers": people,
            "payment_history": [],
            "created_at": NOW,
            "total_baggages": _as_int(total_baggages, "Reservation", "total_baggages"),
            "nonfree_baggages": _as_int(nonfree_baggages, "Reservation", "nonfree_baggages"),
            "insurance": _as_choice(insurance, INSURANCE_CHOICES, "Reservation", "insurance"),
            "status": None,
        }
        days, total = self._price_itinerary(reservation, segments, cabin, len(people))
        if insurance == "yes":
            total += INSURANCE_FEE * len(people)
        total += BAG_FEE * nonfree_baggages
        keys = self._check_payments(user, payments)
        paid = sum(payment["amount"] for payment in payments)
        if paid != total:
            raise ToolError(f"Payment amount does not add up, total price is {total}, but paid {paid}")
        self._charge(user, keys, payments)
        for day in days:
            day["available_seats"][cabin] -= len(people)
        reservation["payment_history"].extend({**p, "payment_id": k} for k, p in zip(keys, payments, strict=True))
        self.db["reservations"][reservation_id] = reservation
        user["reservations"].append(reservation_id)
        return reservation

    def _new_reservation_id(self) -> str:
        for candidate in NEW_RESERVATION_IDS:
            if candidate not in self.db["reservations"]:
                return candidate
        raise ToolError("Too many reservations")

    def _price_itinerary(
        self, reservation: JSONDict, segments: list[JSONDict], cabin: str, passengers: int
    ) -> tuple[list[JSONDict], int]:
        """Check every segment, append it to ``reservation``; the date statuses and the fare total."""
        days = []
        total = 0
        for info in segments:
            flight, day = self._bookable(info["flight_number"], info["date"], cabin, passengers)
            price = day["prices"][cabin]
            reservation["flights"].append(_segment(flight, info["date"], price))
            days.append(day)
            total += price * passengers
        return days, total

    @staticmethod
    def _check_payments(user: JSONDict, payments: list[JSONDict]) -> list[str]:
        """The stored key of each payment's method; refuses unknown methods and short balances."""
        keys = []
        for payment in payments:
            payment_id = payment["payment_id"]
            key = find_key(user["payment_methods"], payment_id)
            if key is None:
                raise ToolError(f"Payment method {payment_id} not found")
            method = user["payment_methods"][key]
            if method["source"] in BALANCE_SOURCES and method["amount"] < payment["amount"]:
                raise ToolError(f"Not enough balance in payment method {payment_id}")
            keys.append(key)
        return keys

    @staticmethod
    def _charge(user: JSONDict, keys: list[str], payments: list[JSONDict]) -> None:
        """Debit gift cards; remove certificates whole (a second use of one fails like upstream)."""
        methods = user["payment_methods"]
        for key, payment in zip(keys, payments, strict=True):
            method = methods[key]
            if method["source"] == "gift_card":
                method["amount"] -= payment["amount"]
            elif method["source"] == "certificate":
                methods.pop(key)


class CalculateTool(CalculateMixin, AirlineTool):
    """Upstream's calculator (shared with retail)."""


class CancelReservationTool(AirlineTool):
    name = "cancel_reservation"
    action_name = "cancel_reservation"
    mutates_state = True
    description = (
        "Cancel a whole reservation: every payment on it is refunded to the method it came from "
        "and the reservation is marked cancelled."
    )
    parameters = _parameters(reservation_id=RESERVATION_ID)

    def run(self, reservation_id: str) -> JSONDict:
        reservation = self._reservation(reservation_id)
        history = reservation["payment_history"]
        refunds = [
            {"payment_id": p["payment_id"], "amount": _as_int(-p["amount"], "Payment", "amount")} for p in history
        ]
        history.extend(refunds)
        reservation["status"] = "cancelled"
        return reservation


class GetReservationDetailsTool(AirlineTool):
    name = "get_reservation_details"
    description = "Look up a reservation: flights, passengers, cabin, baggage, insurance, payments and status."
    parameters = _parameters(reservation_id=RESERVATION_ID)

    def run(self, reservation_id: str) -> JSONDict:
        return self._reservation(reservation_id)


class GetUserDetailsTool(AirlineTool):
    name = "get_user_details"
    description = (
        "Look up a user's profile: name, address, email, date of birth, payment methods (with "
        "gift card and certificate balances), saved passengers, membership and reservation ids."
    )
    parameters = _parameters(user_id=USER_ID)

    def run(self, user_id: str) -> JSONDict:
        return self._user(user_id)


class ListAllAirportsTool(AirlineTool):
    name = "list_all_airports"
    description = "List the airports served, as IATA code and city."
    parameters = _parameters()

    def run(self) -> list[JSONDict]:
        return [{"iata": iata, "city": city} for iata, city in AIRPORTS]


class SearchDirectFlightTool(AirlineTool):
    name = "search_direct_flight"
    description = (
        "Find nonstop flights between two airports that can still be booked on a given date, "
        "with seats left and prices per cabin."
    )
    parameters = _parameters(origin=AIRPORT, destination=AIRPORT, date=DATE)

    def run(self, origin: str, destination: str, date: str) -> list[JSONDict]:
        return self._direct_flights(date, origin=origin, destination=destination)


class SearchOnestopFlightTool(AirlineTool):
    name = "search_onestop_flight"
    description = (
        "Find connections with exactly one stop between two airports, leaving on a given date; "
        "each result is a pair [first flight, second flight] with seats left and prices per cabin."
    )
    parameters = _parameters(origin=AIRPORT, destination=AIRPORT, date=DATE)

    def run(self, origin: str, destination: str, date: str) -> list[list[JSONDict]]:
        pairs = []
        for first in self._direct_flights(date, origin=origin):
            first["date"] = date
            arrival = first["scheduled_arrival_time_est"]
            # Upstream's next-day rule: the day number plus one, without zero padding.
            second_date = f"2024-05-{int(date[-2:]) + 1}" if "+1" in arrival else date
            for second in self._direct_flights(
                second_date, origin=first["destination"], destination=destination, leave_after=arrival
            ):
                second["date"] = second_date
                pairs.append([first, second])
        return pairs


class SendCertificateTool(AirlineTool):
    name = "send_certificate"
    action_name = "send_certificate"
    mutates_state = True
    description = "Give a user a travel certificate of the given amount, as a goodwill gesture or compensation."
    parameters = _parameters(user_id=USER_ID, amount=_integer("The certificate's value in dollars."))

    def run(self, user_id: str, amount: Any) -> str:
        user = self._user(user_id)
        methods = user["payment_methods"]
        for certificate_id in NEW_CERTIFICATE_IDS:
            if certificate_id not in methods:
                value = _as_float(amount, "Certificate", "amount")
                methods[certificate_id] = {"source": "certificate", "id": certificate_id, "amount": value}
                return f"Certificate {certificate_id} added to user {user['user_id']} with amount {amount}."
        raise ToolError("Too many certificates")


class TransferToHumanAgentsTool(TransferMixin, AirlineTool):
    """Hand over to a human agent (shared with retail and telecom)."""


class UpdateReservationBaggagesTool(AirlineTool):
    name = "update_reservation_baggages"
    action_name = "update_reservation_baggages"
    mutates_state = True
    description = (
        "Set the number of checked bags on a reservation. Extra non-free bags are charged to the "
        "given payment method (a gift card or credit card; certificates cannot pay changes)."
    )
    parameters = _parameters(
        reservation_id=RESERVATION_ID,
        total_baggages=_integer("The new total number of checked bags."),
        nonfree_baggages=_integer("The new number of paid bags."),
        payment_id=PAYMENT_ID,
    )

    def run(self, reservation_id: str, total_baggages: Any, nonfree_baggages: Any, payment_id: str) -> JSONDict:
        reservation = self._reservation(reservation_id)
        user = self._user(reservation["user_id"])
        price = BAG_FEE * max(0, nonfree_baggages - reservation["nonfree_baggages"])
        payment = self._pay_update(user, payment_id, price)
        if payment is not None:
            reservation["payment_history"].append(payment)
        reservation["total_baggages"] = total_baggages
        reservation["nonfree_baggages"] = nonfree_baggages
        return reservation


class UpdateReservationFlightsTool(AirlineTool):
    name = "update_reservation_flights"
    action_name = "update_reservation_flights"
    mutates_state = True
    description = (
        "Replace a reservation's itinerary and/or cabin. Give the complete new list of segments, "
        "unchanged ones included. The fare difference for all passengers is charged to, or "
        "refunded on, the given payment method (certificates cannot pay changes)."
    )
    parameters = _parameters(
        reservation_id=RESERVATION_ID,
        cabin=CABIN,
        flights=_array("Every segment of the new itinerary, in order, including kept ones.", FLIGHT_ITEM),
        payment_id=PAYMENT_ID,
    )

    def run(self, reservation_id: str, cabin: str, flights: list[Any], payment_id: str) -> JSONDict:
        segments = [_flight_info(entry) for entry in flights]
        reservation = self._reservation(reservation_id)
        user = self._user(reservation["user_id"])
        passengers = len(reservation["passengers"])
        new_flights = [self._new_segment(reservation, info, cabin, passengers) for info in segments]
        total = sum(segment["price"] * passengers for segment in new_flights)
        total -= sum(segment["price"] for segment in reservation["flights"]) * passengers
        payment = self._pay_update(user, payment_id, total)
        if payment is not None:
            reservation["payment_history"].append(payment)
        reservation["flights"] = new_flights
        reservation["cabin"] = cabin
        return reservation

    def _new_segment(self, reservation: JSONDict, info: JSONDict, cabin: str, passengers: int) -> JSONDict:
        """A kept segment (same flight and date, cabin unchanged) at its old price, else a new one."""
        if cabin == reservation["cabin"]:
            for segment in reservation["flights"]:
                if same_id(segment["flight_number"], info["flight_number"]) and segment["date"] == info["date"]:
                    return dict(segment)
        flight, day = self._bookable(info["flight_number"], info["date"], cabin, passengers)
        return _segment(flight, info["date"], day["prices"][cabin])


class UpdateReservationPassengersTool(AirlineTool):
    name = "update_reservation_passengers"
    action_name = "update_reservation_passengers"
    mutates_state = True
    description = "Replace the passenger details of a reservation; the number of passengers cannot change."
    parameters = _parameters(
        reservation_id=RESERVATION_ID,
        passengers=_array("Every passenger of the reservation, in order, with the new details.", PASSENGER_ITEM),
    )

    def run(self, reservation_id: str, passengers: list[Any]) -> JSONDict:
        people = [_passenger(entry) for entry in passengers]
        reservation = self._reservation(reservation_id)
        if len(people) != len(reservation["passengers"]):
            raise ToolError("Number of passengers does not match")
        reservation["passengers"] = people
        return reservation


class GetFlightStatusTool(AirlineTool):
    name = "get_flight_status"
    description = "The status of a flight on a date: available, on time, delayed, flying, landed or cancelled."
    parameters = _parameters(flight_number=FLIGHT_NUMBER, date=DATE)

    def run(self, flight_number: str, date: str) -> str:
        _, day = self._flight_date(flight_number, date)
        status: str = day["status"]
        return status


TOOL_CLASSES: tuple[type[Tool], ...] = (
    BookReservationTool,
    CalculateTool,
    CancelReservationTool,
    GetReservationDetailsTool,
    GetUserDetailsTool,
    ListAllAirportsTool,
    SearchDirectFlightTool,
    SearchOnestopFlightTool,
    SendCertificateTool,
    TransferToHumanAgentsTool,
    UpdateReservationBaggagesTool,
    UpdateReservationFlightsTool,
    UpdateReservationPassengersTool,
    GetFlightStatusTool,
)
"""The agent's tools, in upstream definition order (the order the LLM sees them)."""

ACTION_NAME_TO_TOOL: dict[str, type[Tool]] = {cls.name: cls for cls in TOOL_CLASSES}
"""Tool name (= action name of the write tools) -> class, for gold replay."""
