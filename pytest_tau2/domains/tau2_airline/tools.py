"""The 14 tau2 airline tools, in upstream's definition order (the order the LLM sees them).

The classes live in :mod:`.read_tools` (lookups, search, calculator, transfer) and
:mod:`.write_tools` (the tools that change the DB), on the base in :mod:`.base`; importing
this module registers every one of them under the ``tau2_airline`` namespace.
"""

from __future__ import annotations

from pytest_tau2.domains.tau2_airline.read_tools import (
    CalculateTool,
    GetFlightStatusTool,
    GetReservationDetailsTool,
    GetUserDetailsTool,
    ListAllAirportsTool,
    SearchDirectFlightTool,
    SearchOnestopFlightTool,
    TransferToHumanAgentsTool,
)
from pytest_tau2.domains.tau2_airline.write_tools import (
    BookReservationTool,
    CancelReservationTool,
    SendCertificateTool,
    UpdateReservationBaggagesTool,
    UpdateReservationFlightsTool,
    UpdateReservationPassengersTool,
)
from pytest_tau2.environment.tools import Tool

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
