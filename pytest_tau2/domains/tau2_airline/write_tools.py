"""The airline tools that change the DB (upstream's WRITE tools; a gold replay re-executes
them): booking, cancelling, certificates, and changes to baggage, flights and passengers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from pytest_tau2.domains.tau2_airline.base import (
    AIRPORT,
    BAG_FEE,
    BALANCE_SOURCES,
    CABIN,
    FLIGHT_ITEM,
    FLIGHT_TYPES,
    INSURANCE_CHOICES,
    INSURANCE_FEE,
    NEW_CERTIFICATE_IDS,
    NEW_RESERVATION_IDS,
    NOW,
    PASSENGER_ITEM,
    PAYMENT_ID,
    PAYMENT_ITEM,
    RESERVATION_ID,
    USER_ID,
    AirlineTool,
    arguments,
    array,
    integer,
    reservation_flight,
    string,
)
from pytest_tau2.domains.tau2_airline.db import (
    FlightDate,
    PaymentMethod,
    PaymentRecord,
    Reservation,
    ReservationFlight,
    Segment,
    User,
)
from pytest_tau2.domains.tau2_airline.models import Certificate, FlightInfo, Passenger, Payment
from pytest_tau2.domains.tau2_airline.models import Reservation as ReservationModel
from pytest_tau2.domains.tau2_common.tools import models_if_all_dicts, no_attribute, upstream_model
from pytest_tau2.environment.ids import find_key, same_id
from pytest_tau2.environment.jsontypes import JSONValue
from pytest_tau2.errors import ToolError


class BookReservationTool(AirlineTool):
    name = "book_reservation"
    action_name = "book_reservation"
    mutates_state = True
    description = (
        "Create a new reservation for a user: itinerary, cabin, passengers, baggage, insurance "
        "and payment. The payments must add up exactly to the total price (fares for every "
        "passenger, plus insurance and non-free bags)."
    )
    parameters = arguments(
        user_id=USER_ID,
        origin=AIRPORT,
        destination=AIRPORT,
        flight_type=string("One way or round trip.", FLIGHT_TYPES),
        cabin=CABIN,
        flights=array("Every flight segment of the trip, in order.", FLIGHT_ITEM),
        passengers=array("The travellers, each with name and date of birth.", PASSENGER_ITEM),
        payment_methods=array("How the total is split over the user's payment methods.", PAYMENT_ITEM),
        total_baggages=integer("Checked bags in total on the reservation."),
        nonfree_baggages=integer("How many of those bags are paid for."),
        insurance=string("Whether travel insurance is bought.", INSURANCE_CHOICES),
    )

    def run(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: str,
        cabin: str,
        flights: JSONValue,
        passengers: JSONValue,
        payment_methods: JSONValue,
        total_baggages: JSONValue,
        nonfree_baggages: JSONValue,
        insurance: str,
    ) -> Reservation:
        segments = cast("list[Segment] | None", models_if_all_dicts(flights, FlightInfo))
        people = models_if_all_dicts(passengers, Passenger)
        payments = models_if_all_dicts(payment_methods, Payment)
        user = self._user(user_id)
        reservation_id = self._new_reservation_id()
        # The model converts the counts and checks the choices; the lists it is given are
        # all converted once it accepts them (a list that was not all objects never passes).
        # The model's dump (it accepts the lists only once each is converted): a Reservation record.
        reservation = upstream_model(
            ReservationModel,
            {
                "reservation_id": reservation_id,
                "user_id": user["user_id"],
                "origin": origin,
                "destination": destination,
                "flight_type": flight_type,
                "cabin": cabin,
                "flights": [],
                "passengers": passengers if people is None else people,
                "payment_history": payment_methods if payments is None else payments,
                "created_at": NOW,
                "total_baggages": total_baggages,
                "nonfree_baggages": nonfree_baggages,
                "insurance": insurance,
            },
        )
        booked = cast(Reservation, reservation)
        travellers = len(booked["passengers"])
        if segments is None:
            raise no_attribute(next(iter(cast("Iterable[JSONValue]", flights))), "flight_number")
        days, total = self._price_itinerary(booked, segments, cabin, travellers)
        if insurance == "yes":
            total += INSURANCE_FEE * travellers
        bags: Any = nonfree_baggages  # the argument as given, as upstream adds it (a string refuses the call)
        total += BAG_FEE * bags
        history = booked["payment_history"]
        keys = self._check_payments(user, history)
        paid = sum(payment["amount"] for payment in history)
        if paid != total:
            raise ToolError(f"Payment amount does not add up, total price is {total}, but paid {paid}")
        self._charge(user, keys, history)
        for day in days:
            day["available_seats"][cabin] -= travellers
        booked["payment_history"] = [{**p, "payment_id": k} for k, p in zip(keys, history, strict=True)]
        self.db["reservations"][reservation_id] = booked
        user["reservations"].append(reservation_id)
        return booked

    def _new_reservation_id(self) -> str:
        for candidate in NEW_RESERVATION_IDS:
            if candidate not in self.db["reservations"]:
                return candidate
        raise ToolError("Too many reservations")

    def _price_itinerary(
        self, reservation: Reservation, segments: list[Segment], cabin: str, passengers: int
    ) -> tuple[list[FlightDate], int]:
        """Check every segment, append it to ``reservation``; the date statuses and the fare total."""
        days = []
        total = 0
        for info in segments:
            flight, day = self._bookable(info["flight_number"], info["date"], cabin, passengers)
            price = day["prices"][cabin]
            reservation["flights"].append(reservation_flight(flight, info["date"], price))
            days.append(day)
            total += price * passengers
        return days, total

    @staticmethod
    def _check_payments(user: User, payments: list[PaymentRecord]) -> list[str]:
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
    def _charge(user: User, keys: list[str], payments: list[PaymentRecord]) -> None:
        """Debit gift cards; remove certificates whole (a second use of one fails like upstream)."""
        methods = user["payment_methods"]
        for key, payment in zip(keys, payments, strict=True):
            method = methods[key]
            if method["source"] == "gift_card":
                method["amount"] -= payment["amount"]
            elif method["source"] == "certificate":
                methods.pop(key)


class CancelReservationTool(AirlineTool):
    name = "cancel_reservation"
    action_name = "cancel_reservation"
    mutates_state = True
    description = (
        "Cancel a whole reservation: every payment on it is refunded to the method it came from "
        "and the reservation is marked cancelled."
    )
    parameters = arguments(reservation_id=RESERVATION_ID)

    def run(self, reservation_id: str) -> Reservation:
        reservation = self._reservation(reservation_id)
        history = reservation["payment_history"]
        refunds = [
            cast(PaymentRecord, upstream_model(Payment, {"payment_id": p["payment_id"], "amount": -p["amount"]}))
            for p in history
        ]
        history.extend(refunds)
        reservation["status"] = "cancelled"
        return reservation


class SendCertificateTool(AirlineTool):
    name = "send_certificate"
    action_name = "send_certificate"
    mutates_state = True
    description = "Give a user a travel certificate of the given amount, as a goodwill gesture or compensation."
    parameters = arguments(user_id=USER_ID, amount=integer("The certificate's value in dollars."))

    def run(self, user_id: str, amount: JSONValue) -> str:
        user = self._user(user_id)
        methods = user["payment_methods"]
        for certificate_id in NEW_CERTIFICATE_IDS:
            if certificate_id not in methods:
                certificate = {"source": "certificate", "id": certificate_id, "amount": amount}
                methods[certificate_id] = cast(PaymentMethod, upstream_model(Certificate, certificate))
                return f"Certificate {certificate_id} added to user {user['user_id']} with amount {amount}."
        raise ToolError("Too many certificates")


class UpdateReservationBaggagesTool(AirlineTool):
    name = "update_reservation_baggages"
    action_name = "update_reservation_baggages"
    mutates_state = True
    description = (
        "Set the number of checked bags on a reservation. Extra non-free bags are charged to the "
        "given payment method (a gift card or credit card; certificates cannot pay changes)."
    )
    parameters = arguments(
        reservation_id=RESERVATION_ID,
        total_baggages=integer("The new total number of checked bags."),
        nonfree_baggages=integer("The new number of paid bags."),
        payment_id=PAYMENT_ID,
    )

    def run(
        self, reservation_id: str, total_baggages: JSONValue, nonfree_baggages: JSONValue, payment_id: str
    ) -> Reservation:
        reservation = self._reservation(reservation_id)
        user = self._user(reservation["user_id"])
        # The counts are used and stored as given, as upstream does (a string refuses the call here).
        total: Any = total_baggages
        nonfree: Any = nonfree_baggages
        price = BAG_FEE * max(0, nonfree - reservation["nonfree_baggages"])
        payment = self._pay_update(user, payment_id, price)
        if payment is not None:
            reservation["payment_history"].append(payment)
        reservation["total_baggages"] = total
        reservation["nonfree_baggages"] = nonfree
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
    parameters = arguments(
        reservation_id=RESERVATION_ID,
        cabin=CABIN,
        flights=array("Every segment of the new itinerary, in order, including kept ones.", FLIGHT_ITEM),
        payment_id=PAYMENT_ID,
    )

    def run(self, reservation_id: str, cabin: JSONValue, flights: JSONValue, payment_id: JSONValue) -> Reservation:
        segments = cast("list[Segment] | None", models_if_all_dicts(flights, FlightInfo))
        reservation = self._reservation(reservation_id)
        user = self._user(reservation["user_id"])
        passengers = len(reservation["passengers"])
        if segments is None:
            raise no_attribute(next(iter(cast("Iterable[JSONValue]", flights))), "flight_number")
        new_flights = [self._new_segment(reservation, info, cabin, passengers) for info in segments]
        total = sum(segment["price"] * passengers for segment in new_flights)
        total -= sum(segment["price"] for segment in reservation["flights"]) * passengers
        payment = self._pay_update(user, payment_id, total)
        if payment is not None:
            reservation["payment_history"].append(payment)
        reservation["flights"] = new_flights
        stored: Any = cabin  # as given, as upstream stores it (a non-string passes only with no segments)
        reservation["cabin"] = stored
        return reservation

    def _new_segment(
        self, reservation: Reservation, info: Segment, cabin: JSONValue, passengers: int
    ) -> ReservationFlight:
        """A kept segment (same flight and date, cabin unchanged) at its old price, else a new one."""
        if cabin == reservation["cabin"]:
            for segment in reservation["flights"]:
                if same_id(segment["flight_number"], info["flight_number"]) and segment["date"] == info["date"]:
                    return segment.copy()  # a plain shallow copy, like dict()
        flight, day = self._bookable(info["flight_number"], info["date"], cabin, passengers)
        return reservation_flight(flight, info["date"], day["prices"][cast(str, cabin)])


class UpdateReservationPassengersTool(AirlineTool):
    name = "update_reservation_passengers"
    action_name = "update_reservation_passengers"
    mutates_state = True
    description = "Replace the passenger details of a reservation; the number of passengers cannot change."
    parameters = arguments(
        reservation_id=RESERVATION_ID,
        passengers=array("Every passenger of the reservation, in order, with the new details.", PASSENGER_ITEM),
    )

    def run(self, reservation_id: str, passengers: JSONValue) -> Reservation:
        people = models_if_all_dicts(passengers, Passenger)
        reservation = self._reservation(reservation_id)
        # A list that is not all objects is stored as given, as upstream assigns it unconverted.
        new_passengers: Any = passengers if people is None else people
        if len(new_passengers) != len(reservation["passengers"]):
            raise ToolError("Number of passengers does not match")
        reservation["passengers"] = new_passengers
        return reservation
