"""The 16 tau2 retail tools, in upstream's definition order (the order the LLM sees them).

The classes live in :mod:`.read_tools` (lookups, calculator, transfer) and
:mod:`.write_tools` (the tools that change the DB), on the base in :mod:`.base`; importing this
module registers every one of them under the ``tau2_retail`` namespace.
"""

from __future__ import annotations

from pytest_tau2.domains.tau2_retail.read_tools import (
    CalculateTool,
    FindUserIdByEmailTool,
    FindUserIdByNameZipTool,
    GetItemDetailsTool,
    GetOrderDetailsTool,
    GetProductDetailsTool,
    GetUserDetailsTool,
    ListAllProductTypesTool,
    TransferToHumanAgentsTool,
)
from pytest_tau2.domains.tau2_retail.write_tools import (
    CancelPendingOrderTool,
    ExchangeDeliveredOrderItemsTool,
    ModifyPendingOrderAddressTool,
    ModifyPendingOrderItemsTool,
    ModifyPendingOrderPaymentTool,
    ModifyUserAddressTool,
    ReturnDeliveredOrderItemsTool,
)
from pytest_tau2.environment.tools import Tool

TOOL_CLASSES: tuple[type[Tool], ...] = (
    CalculateTool,
    CancelPendingOrderTool,
    ExchangeDeliveredOrderItemsTool,
    FindUserIdByNameZipTool,
    FindUserIdByEmailTool,
    GetOrderDetailsTool,
    GetProductDetailsTool,
    GetItemDetailsTool,
    GetUserDetailsTool,
    ListAllProductTypesTool,
    ModifyPendingOrderAddressTool,
    ModifyPendingOrderItemsTool,
    ModifyPendingOrderPaymentTool,
    ModifyUserAddressTool,
    ReturnDeliveredOrderItemsTool,
    TransferToHumanAgentsTool,
)
"""The agent tools in upstream definition order (the core appends EndConversationTool)."""

ACTION_NAME_TO_TOOL: dict[str, type[Tool]] = {cls.name: cls for cls in TOOL_CLASSES}
"""Upstream tool name -> class, for every tool (gold actions also name read tools)."""
