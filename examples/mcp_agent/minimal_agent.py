"""The smallest MCP agent: it hears the customer and answers until the conversation is over.

    pytest --tau2-agent mcp:"python examples/mcp_agent/minimal_agent.py" -k restaurant           # HTTP
    pytest --tau2-agent mcp:"python examples/mcp_agent/minimal_agent.py --stdio" -k restaurant   # stdio

Put your model where the comment says: it reads the policy, the customer's words and the tools,
calls tools with ``client.call_tool(name, arguments)``, and returns what to say.
"""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters


def endpoint() -> str | StdioServerParameters:
    if "--stdio" not in sys.argv:
        return os.environ["TAU2_MCP_URL"]
    # A standard MCP client config: its server "tau2" is the stdio bridge to the same scenario.
    with open(os.environ["TAU2_MCP_CONFIG"], encoding="utf-8") as config:
        bridge = json.load(config)["mcpServers"]["tau2"]
    return StdioServerParameters(command=bridge["command"], args=bridge["args"])


async def main() -> None:
    async with Client(endpoint()) as client:
        policy = client.instructions
        tools = [t for t in (await client.list_tools()).tools if t.name != "send_message_to_user"]
        turn = (await client.call_tool("send_message_to_user", {"text": ""})).structured_content or {}
        while not turn["conversation_over"]:
            # Your model here: policy, turn["reply"] and tools in; client.call_tool(...) as it needs.
            answer = f"I have read our policy ({len(policy or '')} characters) and have {len(tools)} tools."
            turn = (await client.call_tool("send_message_to_user", {"text": answer})).structured_content or {}


if __name__ == "__main__":
    anyio.run(main)
