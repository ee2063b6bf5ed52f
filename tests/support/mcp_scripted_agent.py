"""A scripted MCP agent: the oracle, driven over MCP by the SDK's own client.

Run by ``--tau2-agent mcp:"python -m tests.support.mcp_scripted_agent --via http|stdio --plans FILE"``:
it connects to ``TAU2_MCP_URL`` (streamable HTTP) or to the stdio bridge named in
``TAU2_MCP_CONFIG``, reads the scenario's gold plan from ``FILE`` (written by the test, keyed by
``TAU2_SCENARIO``: no registry to load in the agent's process) and plays the oracle through
:func:`drive`, which seats any ``Participant`` behind an MCP client.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from pytest_tau2.bot.agents import RemoteOracle
from pytest_tau2.conversation.offline import GoldPlan, OracleAgent
from pytest_tau2.conversation.protocol import Participant


def openai_tools(listed: Any) -> list[dict[str, Any]]:
    """The MCP tools as OpenAI function schemas (what an OpenAI-style agent is given)."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
        for t in listed.tools
        if t.name != "send_message_to_user"
    ]


async def say(client: Any, text: str) -> tuple[str, bool]:
    result = await client.call_tool("send_message_to_user", {"text": text})
    turn = result.structured_content or {}
    return str(turn.get("reply", "")), bool(turn.get("conversation_over"))


async def drive(client: Any, agent: Participant) -> None:
    """Run ``agent`` (``respond(messages, tools) -> Reply``) as an MCP agent until the user is done."""
    tools = openai_tools(await client.list_tools())
    messages: list[dict[str, Any]] = [{"role": "system", "content": client.instructions or ""}]
    heard, over = await say(client, "")  # listen: the user's opening
    messages.append({"role": "user", "content": heard})
    while True:
        reply = await agent.respond(list(messages), tools)
        if reply.text or not reply.tool_calls:
            messages.append({"role": "assistant", "content": reply.text or ""})
            if not over:  # words beside tool calls are said first: MCP has no text beside a call
                heard, over = await say(client, reply.text or "")
                messages.append({"role": "user", "content": heard})
            elif not reply.tool_calls:
                await say(client, reply.text or "")  # last words, after the user left: recorded, then done
                return
        if reply.tool_calls:
            messages.append(
                {"role": "assistant", "content": None, "tool_calls": [c.to_openai() for c in reply.tool_calls]}
            )
            for call in reply.tool_calls:
                arguments = call.arguments if isinstance(call.arguments, dict) else json.loads(call.arguments)
                result = await client.call_tool(call.name, arguments)
                text = "".join(getattr(c, "text", "") for c in result.content)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
            if over:
                return


def build_agent(plans_file: str, scenario: str) -> Participant:
    plans = json.loads(open(plans_file, encoding="utf-8").read())
    spec = plans[scenario]
    plan = GoldPlan(spec["actions"], frozenset(spec["ending_tools"]), tuple(spec["communicate"]))
    return RemoteOracle(OracleAgent(plan, min_turns=spec.get("min_turns", 1)))


async def main_async(via: str, plans: str) -> None:
    from mcp import Client, StdioServerParameters

    agent = build_agent(plans, os.environ["TAU2_SCENARIO"])
    if via == "http":
        server: Any = os.environ["TAU2_MCP_URL"]
    else:
        config = json.loads(open(os.environ["TAU2_MCP_CONFIG"], encoding="utf-8").read())
        entry = next(iter(config["mcpServers"].values()))
        server = StdioServerParameters(command=entry["command"], args=entry["args"], env=dict(os.environ))
    async with Client(server) as client:
        await drive(client, agent)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--via", choices=("http", "stdio"), default="http")
    parser.add_argument("--plans", required=True)
    args = parser.parse_args()
    import anyio

    anyio.run(main_async, args.via, args.plans)
    return 0


if __name__ == "__main__":
    sys.exit(main())
