"""One exception hierarchy for the whole plugin.

Every message says what was expected, what was found, and how to fix it.
"""

from __future__ import annotations


class Tau2Error(Exception):
    """Base class of every error raised by pytest-tau2."""


class ScenarioDefinitionError(Tau2Error, TypeError):
    """A scenario class is malformed (missing name, no success signals, duplicate name...)."""


class ToolDefinitionError(Tau2Error, TypeError):
    """A tool class is malformed or registered twice."""


class DataError(Tau2Error):
    """The tau2 data folder is missing, incomplete, or does not match the pinned manifest."""


class DataPathError(DataError, ValueError):
    """A scenario asked for a data path that escapes the data root."""


class ToolError(Tau2Error):
    """A tool refused a call (domain rule, lookup failure). Shown to the caller as ``Error: <message>``."""


class InfrastructureError(Tau2Error):
    """Something outside the agent under test failed (LLM transport, WebSocket, ...).

    The test item ends as a pytest *error*, not a failure, and the run summary
    counts it separately from agent failures. ``fatal`` marks failures that every later
    scenario would repeat (missing or rejected credentials): the run stops after this item.
    """

    def __init__(self, message: str, *, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


class ResultNotSaved(Tau2Error):
    """A scenario ran and was scored, but its result could not be written (a full disk): the item
    is an error, never a pass, and the run stops starting conversations."""


class ProtocolError(InfrastructureError):
    """An external agent bot sent a frame that breaks the protocol."""


class SettingsError(Tau2Error, ValueError):
    """A ``--tau2-*`` option or combination is invalid; the pytest adapter shows it as a usage error."""


class ScenarioNotApplicable(Tau2Error):
    """This run cannot evaluate this scenario (e.g. it is not in the replay file): the item is skipped."""


class UnknownUsageWarning(UserWarning):
    """A model reported a ``usage`` count that is not a token count (negative, a string, ...).

    The completion is kept; the count is recorded as unknown (``token_usage.<side>.unknown_usage``).
    """
