"""The airline tools that never change the DB: lookups, flight search, the calculator and
the transfer (upstream types them READ or GENERIC; a gold replay re-executes none of them).
"""

from __future__ import annotations

from pytest_tau2.domains.tau2_airline.base import (
    AIRPORT,
    AIRPORTS,
    DATE,
    FLIGHT_NUMBER,
    RESERVATION_ID,
    USER_ID,
    AirlineTool,
    DirectFlight,
    arguments,
)
from pytest_tau2.domains.tau2_airline.db import Reservation, User
from pytest_tau2.domains.tau2_common.tools import CalculateMixin, TransferMixin


class CalculateTool(CalculateMixin, AirlineTool):
    """Upstream's calculator (shared with retail)."""


class GetReservationDetailsTool(AirlineTool):
    name = "get_reservation_details"
    description = "Look up a reservation: flights, passengers, cabin, baggage, insurance, payments and status."
    parameters = arguments(reservation_id=RESERVATION_ID)

    def run(self, reservation_id: str) -> Reservation:
        return self._reservation(reservation_id, writable=False)


class GetUserDetailsTool(AirlineTool):
    name = "get_user_details"
    description = (
        "Look up a user's profile: name, address, email, date of birth, payment methods (with "
        "gift card and certificate balances), saved passengers, membership and reservation ids."
    )
    parameters = arguments(user_id=USER_ID)

    def run(self, user_id: str) -> User:
        return self._user(user_id, writable=False)


class ListAllAirportsTool(AirlineTool):
    name = "list_all_airports"
    description = "List the airports served, as IATA code and city."
    parameters = arguments()

    def run(self) -> list[dict[str, str]]:
        return [{"iata": iata, "city": city} for iata, city in AIRPORTS]


class SearchDirectFlightTool(AirlineTool):
    name = "search_direct_flight"
    description = (
        "Find nonstop flights between two airports that can still be booked on a given date, "
        "with seats left and prices per cabin."
    )
    parameters = arguments(origin=AIRPORT, destination=AIRPORT, date=DATE)

    def run(self, origin: str, destination: str, date: str) -> list[DirectFlight]:
        return self._direct_flights(date, origin=origin, destination=destination)


class SearchOnestopFlightTool(AirlineTool):
    name = "search_onestop_flight"
    description = (
        "Find connections with exactly one stop between two airports, leaving on a given date; "
        "each result is a pair [first flight, second flight] with seats left and prices per cabin."
    )
    parameters = arguments(origin=AIRPORT, destination=AIRPORT, date=DATE)

    def run(self, origin: str, destination: str, date: str) -> list[list[DirectFlight]]:
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


class TransferToHumanAgentsTool(TransferMixin, AirlineTool):
    """Hand over to a human agent (shared with retail and telecom)."""


class GetFlightStatusTool(AirlineTool):
    name = "get_flight_status"
    description = "The status of a flight on a date: available, on time, delayed, flying, landed or cancelled."
    parameters = arguments(flight_number=FLIGHT_NUMBER, date=DATE)

    def run(self, flight_number: str, date: str) -> str:
        _, day = self._flight_date(flight_number, date)
        status: str = day["status"]
        return status
