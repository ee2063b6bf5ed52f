"""tau2 banking_knowledge domain: a bank's transactional DB, 14 base agent tools, 45
discoverable agent tools, 6 customer tools and 4 discoverable customer tools, and the
retrieval configurations over its 698 documents."""

from __future__ import annotations

from pytest_tau2.domains.tau2_banking_knowledge import disc_accounts, disc_cards, disc_credit, disc_debit  # noqa: F401
from pytest_tau2.domains.tau2_banking_knowledge.agent_tools import BASE_AGENT_TOOLS
from pytest_tau2.domains.tau2_banking_knowledge.db import read_db
from pytest_tau2.domains.tau2_banking_knowledge.discoverable import AGENT_TOOLS, USER_TOOLS
from pytest_tau2.domains.tau2_banking_knowledge.user_tools import USER_TOOL_CLASSES

__all__ = ["AGENT_TOOLS", "BASE_AGENT_TOOLS", "USER_TOOLS", "USER_TOOL_CLASSES", "read_db"]
