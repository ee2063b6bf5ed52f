"""A pydantic-ai agent that takes the tau2 benchmark over MCP.

pytest-tau2 starts it once per scenario (``--tau2-agent mcp:"python examples/mcp_agent/agent.py"``)
with the scenario's MCP endpoint in ``TAU2_MCP_URL``. The agent reads the policy from the server's
instructions, hears the customer, and answers turn by turn: each turn is one ``agent.run`` in which
the model may call the domain tools; its final text is said to the customer through
``send_message_to_user``, whose result is the customer's next words. When the customer ends the
call, the model still takes its closing turn (docs/mcp.md): it may end the call itself then.

The model is any OpenAI-compatible endpoint: ``AGENT_MODEL`` (default gpt-4.1-mini),
``OPENAI_BASE_URL``, ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import anyio
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

SAY = "send_message_to_user"


def heard(result: Any) -> tuple[str, bool]:
    """The customer's words and whether the conversation is over, from send_message_to_user's result."""
    if isinstance(result, dict):
        return str(result.get("reply", "")), bool(result.get("conversation_over"))
    text = str(result)
    return text.removesuffix("\n[conversation over]"), text.endswith("[conversation over]")


async def main() -> None:
    tools = MCPToolset(os.environ["TAU2_MCP_URL"], tool_error_behavior="failed")  # errors go to the model
    provider = OpenAIProvider(base_url=os.environ.get("OPENAI_BASE_URL"), api_key=os.environ.get("OPENAI_API_KEY"))
    model = OpenAIChatModel(os.environ.get("AGENT_MODEL", "gpt-4.1-mini"), provider=provider)
    async with tools:
        # The model talks in its final text: send_message_to_user is this program's to call.
        domain_tools = tools.filtered(lambda ctx, tool: tool.name != SAY)
        agent = Agent(model, instructions=tools.instructions, toolsets=[domain_tools])
        # An empty text hears the customer's opening (the runner has said the greeting).
        words, over = heard(await tools.direct_call_tool(SAY, {"text": ""}))
        history = None
        while not over:
            result = await agent.run(words, message_history=history)
            history = result.all_messages()
            words, over = heard(await tools.direct_call_tool(SAY, {"text": result.output}))
        # The customer has left: one closing turn remains, in which the model hears their last
        # words and may still call tools (EndConversationTool ends the call: a clean exit).
        result = await agent.run(words, message_history=history)
        if result.output:
            with contextlib.suppress(Exception):  # the call may have ended in this turn: nothing to say then
                await tools.direct_call_tool(SAY, {"text": result.output})


if __name__ == "__main__":
    anyio.run(main)
