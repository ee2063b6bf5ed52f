"""Base of the phone tools (namespace ``tau2_telecom_user``) and the bits their texts share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_tau2.domains.tau2_telecom import device as phone
from pytest_tau2.domains.tau2_telecom.records import DeviceState, TelecomUserDB
from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.environment.tools import EMPTY_PARAMETERS, Tool

USER_NAMESPACE = "tau2_telecom_user"
NO_ARGUMENTS: JSONObject = {**EMPTY_PARAMETERS, "additionalProperties": False}


def on_off(flag: object) -> str:
    return "ON" if flag else "OFF"


def yes_no(flag: object) -> str:
    return "Yes" if flag else "No"


class TelecomUserTool(Tool):
    """Base of the phone tools (``self.db`` is the phone DB dict)."""

    abstract = True
    namespace = USER_NAMESPACE
    parameters = NO_ARGUMENTS

    if TYPE_CHECKING:  # the state's DB is read_user_db's (a fresh_db copy of it); no runtime cost

        @property
        def db(self) -> TelecomUserDB: ...

    @property
    def device(self) -> DeviceState:
        return self.db["device"]

    def bar(self, text: str) -> str:
        return phone.with_status_bar(self.db, text)


def write_tool(cls: type[TelecomUserTool]) -> type[TelecomUserTool]:
    """Mark a phone tool as a write tool (recorded as an action, replayed)."""
    cls.action_name = cls.name
    cls.mutates_state = True
    return cls
