"""tau2 telecom: a carrier's support agent and a customer holding a simulated phone.

Two DBs: the carrier's (``db.toml``: plans, customers, lines, bills, devices), which the
agent's tools read and change, and the phone's (``user_db.toml`` plus ``surroundings``),
which the user's tools read and change. :func:`sync_state` couples them after every
successful call. Modules:

- :mod:`.db`: ``read_db``, ``read_user_db`` (plain dicts hashing like upstream's dumps);
- :mod:`.tools`: the 13 agent tools; :mod:`.user_tools`: the 30 phone tools;
- :mod:`.device`: the phone's logic (network search, mobile data, speed test, MMS);
- :mod:`.functions`: the set-up functions of the task files and :func:`run_function`;
- :mod:`.sync`: :func:`sync_state`; :mod:`.predicates`: the db-state predicates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_tau2.environment.imports import lazy_exports

if TYPE_CHECKING:
    from pytest_tau2.domains.tau2_telecom.db import read_db, read_user_db
    from pytest_tau2.domains.tau2_telecom.functions import (
        AGENT_FUNCTIONS,
        USER_FUNCTIONS,
        UnknownFunctionError,
        run_function,
    )
    from pytest_tau2.domains.tau2_telecom.predicates import DOMAIN
    from pytest_tau2.domains.tau2_telecom.sync import sync_state
    from pytest_tau2.domains.tau2_telecom.tools import (
        ACTION_NAME_TO_TOOL,
        AGENT_TOOL_CLASSES,
        NAMESPACE,
        TOOL_CLASSES,
        TelecomTool,
    )
    from pytest_tau2.domains.tau2_telecom.user_tools import (
        USER_ACTION_NAME_TO_TOOL,
        USER_NAMESPACE,
        USER_TOOL_CLASSES,
        TelecomUserTool,
    )

_EXPORTS = {
    "read_db": "pytest_tau2.domains.tau2_telecom.db",
    "read_user_db": "pytest_tau2.domains.tau2_telecom.db",
    "AGENT_FUNCTIONS": "pytest_tau2.domains.tau2_telecom.functions",
    "USER_FUNCTIONS": "pytest_tau2.domains.tau2_telecom.functions",
    "UnknownFunctionError": "pytest_tau2.domains.tau2_telecom.functions",
    "run_function": "pytest_tau2.domains.tau2_telecom.functions",
    "DOMAIN": "pytest_tau2.domains.tau2_telecom.predicates",
    "sync_state": "pytest_tau2.domains.tau2_telecom.sync",
    "ACTION_NAME_TO_TOOL": "pytest_tau2.domains.tau2_telecom.tools",
    "AGENT_TOOL_CLASSES": "pytest_tau2.domains.tau2_telecom.tools",
    "NAMESPACE": "pytest_tau2.domains.tau2_telecom.tools",
    "TOOL_CLASSES": "pytest_tau2.domains.tau2_telecom.tools",
    "TelecomTool": "pytest_tau2.domains.tau2_telecom.tools",
    "USER_ACTION_NAME_TO_TOOL": "pytest_tau2.domains.tau2_telecom.user_tools",
    "USER_NAMESPACE": "pytest_tau2.domains.tau2_telecom.user_tools",
    "USER_TOOL_CLASSES": "pytest_tau2.domains.tau2_telecom.user_tools",
    "TelecomUserTool": "pytest_tau2.domains.tau2_telecom.user_tools",
}
"""What the package exports, by the module that defines it: imported on first use, so that
importing a light module of the package (its ``options``, read at every pytest start) stays cheap."""


_lazy = lazy_exports(__name__, _EXPORTS, globals())


def __getattr__(name: str) -> Any:  # the module's own (PEP 562): type checkers read it
    return _lazy(name)


__all__ = [
    "ACTION_NAME_TO_TOOL",
    "AGENT_FUNCTIONS",
    "AGENT_TOOL_CLASSES",
    "DOMAIN",
    "NAMESPACE",
    "TOOL_CLASSES",
    "USER_ACTION_NAME_TO_TOOL",
    "USER_FUNCTIONS",
    "USER_NAMESPACE",
    "USER_TOOL_CLASSES",
    "TelecomTool",
    "TelecomUserTool",
    "UnknownFunctionError",
    "read_db",
    "read_user_db",
    "run_function",
    "sync_state",
]
