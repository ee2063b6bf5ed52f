"""tau2 banking_knowledge domain: a bank's transactional DB, 14 base agent tools, 45
discoverable agent tools, 6 customer tools and 4 discoverable customer tools, and the
retrieval configurations over its 698 documents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_tau2.environment.imports import lazy_exports

if TYPE_CHECKING:
    from pytest_tau2.domains.tau2_banking_knowledge.agent_tools import BASE_AGENT_TOOLS
    from pytest_tau2.domains.tau2_banking_knowledge.db import read_db
    from pytest_tau2.domains.tau2_banking_knowledge.discoverable import AGENT_TOOLS, USER_TOOLS
    from pytest_tau2.domains.tau2_banking_knowledge.user_tools import USER_TOOL_CLASSES

_EXPORTS = {
    "BASE_AGENT_TOOLS": "pytest_tau2.domains.tau2_banking_knowledge.agent_tools",
    "read_db": "pytest_tau2.domains.tau2_banking_knowledge.db",
    "AGENT_TOOLS": "pytest_tau2.domains.tau2_banking_knowledge.discoverable",
    "USER_TOOLS": "pytest_tau2.domains.tau2_banking_knowledge.discoverable",
    "USER_TOOL_CLASSES": "pytest_tau2.domains.tau2_banking_knowledge.user_tools",
}
"""What the package exports, by the module that defines it: imported on first use, so that
importing a light module of the package (its ``options``, read at every pytest start) stays cheap."""


_lazy = lazy_exports(
    __name__,
    _EXPORTS,
    globals(),
    first=[f"{__name__}.{side}" for side in ("disc_accounts", "disc_cards", "disc_credit", "disc_debit")],
)  # the discoverable tools register themselves before any export is read


def __getattr__(name: str) -> Any:  # the module's own (PEP 562): type checkers read it
    return _lazy(name)


__all__ = ["AGENT_TOOLS", "BASE_AGENT_TOOLS", "USER_TOOLS", "USER_TOOL_CLASSES", "read_db"]
