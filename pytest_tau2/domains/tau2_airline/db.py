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

import json
from pathlib import Path
from typing import Any

JSONDict = dict[str, Any]

BALANCE_SOURCES: frozenset[str] = frozenset({"gift_card", "certificate"})
"""Payment-method sources whose ``amount`` the model stores as a float."""


def read_db(path: str | Path) -> JSONDict:
    """Parse the airline ``db.json`` at ``path`` (no caching: the core caches)."""
    with open(path, encoding="utf-8") as handle:
        db: JSONDict = json.load(handle)
    flights = db.get("flights", {})
    for number, flight in flights.items():
        flights[number] = flight_number_first(flight)
    for user in db.get("users", {}).values():
        complete_user(user)
    for reservation in db.get("reservations", {}).values():
        complete_reservation(reservation)
    return db


def flight_number_first(entry: JSONDict) -> JSONDict:
    """A copy of ``entry`` with ``flight_number`` as its first key (the dump's field order)."""
    if "flight_number" not in entry or next(iter(entry)) == "flight_number":
        return entry
    return {"flight_number": entry["flight_number"], **entry}


def complete_user(user: JSONDict) -> JSONDict:
    """Add ``address2: None`` where absent and make balances floats (in place); returns ``user``."""
    address = user.get("address")
    if isinstance(address, dict) and "address2" not in address:
        user["address"] = {
            "address1": address.get("address1"),
            "address2": None,
            **{k: v for k, v in address.items() if k != "address1"},
        }
    for method in user.get("payment_methods", {}).values():
        if method.get("source") in BALANCE_SOURCES and isinstance(method.get("amount"), int):
            method["amount"] = float(method["amount"])
    return user


def complete_reservation(reservation: JSONDict) -> JSONDict:
    """Add ``status: None`` where absent, order segment keys (in place); returns ``reservation``."""
    reservation.setdefault("status", None)
    segments = reservation.get("flights")
    if isinstance(segments, list):
        reservation["flights"] = [flight_number_first(s) for s in segments]
    return reservation
