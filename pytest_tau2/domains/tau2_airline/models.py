"""The airline records upstream builds from tool arguments, as pydantic models.

Upstream converts an argument only when it builds one of these from it, so these models carry
the field types that decide what is accepted and what is stored: an ``int`` field takes
``"191"`` or ``191.0`` as 191 and refuses ``191.5``; a ``float`` field stores 50 as 50.0; a
``str`` field refuses a number; a choice refuses anything but its exact values. Unknown keys
are dropped, as upstream's nested models drop them. The tools use them through
:func:`pytest_tau2.domains.tau2_common.tools.upstream_model` and keep plain dicts in the DB.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

FlightType = Literal["round_trip", "one_way"]
CabinClass = Literal["business", "economy", "basic_economy"]
Insurance = Literal["yes", "no"]


class FlightInfo(BaseModel):
    """One segment of a requested itinerary."""

    flight_number: str
    date: str


class Passenger(BaseModel):
    first_name: str
    last_name: str
    dob: str


class Payment(BaseModel):
    """One line of a reservation's payment history (whole dollars; refunds negative)."""

    payment_id: str
    amount: int


class ReservationFlight(BaseModel):
    """A booked segment, at the price paid for it."""

    flight_number: str
    origin: str
    destination: str
    date: str
    price: int


class Reservation(BaseModel):
    """A reservation as ``book_reservation`` creates it (field order = the DB's key order)."""

    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: FlightType
    cabin: CabinClass
    flights: list[ReservationFlight]
    passengers: list[Passenger]
    payment_history: list[Payment]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: Insurance
    status: Literal["cancelled"] | None = None


class Certificate(BaseModel):
    """A travel certificate in a user's payment methods."""

    source: Literal["certificate"]
    id: str
    amount: float
