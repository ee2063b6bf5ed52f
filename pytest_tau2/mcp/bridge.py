"""The stdio bridge: ``python -m pytest_tau2.mcp.bridge URL`` (``pytest-tau2 mcp-bridge URL``).

An MCP server on stdin/stdout that forwards everything to the scenario's streamable-HTTP server at
``URL`` (default: ``$TAU2_MCP_URL``), for agents configured with an MCP client config file (the
``TAU2_MCP_CONFIG`` the runner writes names this command). Both ends are the official SDK: a
``Client`` to the scenario, a low-level ``Server`` on stdio that serves the scenario's own
instructions, tools (schemas unchanged), prompts and results. Calls are forwarded as they come,
concurrently, with no timeout of the bridge's own: ``send_message_to_user`` waits as long as the
user takes, and the runner's limits end a conversation.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any


async def serve(url: str) -> None:
    """Bridge stdio to ``url`` until the stdio client (the agent) closes its end."""
    import mcp_types as types
    from mcp import Client
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    async with Client(url, mode="legacy", cache=None) as upstream:

        async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
            return await upstream.list_tools(cursor=params.cursor if params else None)

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            return await upstream.call_tool(params.name, dict(params.arguments or {}))

        async def list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
            return await upstream.list_prompts()

        async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
            return await upstream.get_prompt(params.name, dict(params.arguments or {}))

        info = upstream.server_info
        server: Server[Any] = Server(
            info.name if info is not None else "tau2",
            instructions=upstream.instructions,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_prompts=list_prompts,
            on_get_prompt=get_prompt,
        )
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


def main(argv: Sequence[str] | None = None, prog: str = "python -m pytest_tau2.mcp.bridge") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("url", nargs="?", default=os.environ.get("TAU2_MCP_URL"), help="the scenario's MCP endpoint")
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("give the scenario's MCP endpoint URL, or set TAU2_MCP_URL")
    import anyio

    try:
        anyio.run(serve, args.url)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the agent reads this on the bridge's stderr
        print(f"pytest-tau2 mcp-bridge: {type(exc).__name__}: {exc} (endpoint {args.url})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
