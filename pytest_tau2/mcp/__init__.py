"""MCP: any agent that speaks the Model Context Protocol, evaluated like every other agent.

- :mod:`.server`: one scenario's MCP server (the official SDK's low-level ``Server``): the agent
  tools with the litellm agent's schemas, ``send_message_to_user``, the policy as instructions;
- :mod:`.http`: that server over streamable HTTP on loopback, on the conversation's event loop;
- :mod:`.process`: the agent's own process, started per scenario, its stderr tail kept;
- :mod:`.agent`: ``--tau2-agent mcp:COMMAND`` (:class:`~.agent.McpAgent`) and its
  :class:`~pytest_tau2.run.agent_side.AgentSide`;
- :mod:`.bridge`: the stdio bridge named in ``TAU2_MCP_CONFIG`` (``python -m pytest_tau2.mcp.bridge``).

Nothing here is imported unless an MCP agent runs (the SDK is the optional ``mcp`` extra).
See docs/mcp.md.
"""
