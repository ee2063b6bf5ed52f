"""One scenario's MCP server, on the official SDK's low-level ``Server``.

It serves what the litellm agent is given, over MCP:

- **tools**: the agent side's tools with the very schemas the litellm agent is sent
  (``Environment.schemas()``: name, description and ``parameters`` as the ``inputSchema``), plus
  ``send_message_to_user(text)``, whose result is the user's next words and whose structured
  result says ``conversation_over`` (text results end with :data:`OVER_MARK` then);
- **instructions**: the scenario's agent prompt (the domain policy), also the prompt ``policy``;
  the prompt ``conversation`` gives what was said before the agent's first step (the runner's
  greeting on the agent's behalf, then the user's opening), waiting for the user if need be.

Tool calls go through the scenario's :class:`~pytest_tau2.conversation.channel.AgentChannel`: the
conversation loop runs them on the seeded state, records and limits them as for any agent. The
low-level server is used (not ``MCPServer``'s decorators) because the tools are data, known only
per scenario, and their schemas must be served as given, not derived from Python signatures.
Arguments are not validated here: the tool refuses bad ones itself, as in process, and the refusal
is part of the conversation (a tool error the agent reads).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from pytest_tau2.conversation.channel import AgentChannel, UserTurn
from pytest_tau2.environment.jsontypes import JSONObject

SEND_MESSAGE = "send_message_to_user"
OVER_MARK = "[conversation over]"
"""Appended on its own line to ``send_message_to_user``'s text result once nothing more will come."""

NOT_SENT_MARK = "[not said: the user had spoken since you last heard them; answer this]"
"""Opens the text result of a message that was not said (the user's unheard words follow)."""

SEND_MESSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "What to say to the user."}},
    "required": ["text"],
}
TURN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reply": {"type": "string", "description": "The user's words (all of them since you last heard them)."},
        "conversation_over": {"type": "boolean", "description": "True: nothing more will come; stop."},
        "sent": {"type": "boolean", "description": "False: your text was not said (the user spoke first)."},
    },
    "required": ["reply", "conversation_over", "sent"],
}
SEND_MESSAGE_HELP = (
    "Say something to the user (the customer) and wait for their answer, which is this tool's result. "
    "This is the only way to talk to the user. Call it with an empty text first to hear what the user "
    "has said. When conversation_over is true the user has left: stop."
)


@dataclass
class Activity:
    """What the agent did on the server, for the error of an agent that never connected or fell silent."""

    requests: int = 0
    last: str = ""
    last_at: float = field(default=0.0)

    def note(self, what: str) -> None:
        self.requests += 1
        self.last = what
        self.last_at = time.monotonic()

    def describe(self) -> str:
        if not self.requests:
            return "the agent never sent an MCP request"
        return f"its last MCP request ({self.last}) came {time.monotonic() - self.last_at:.1f} s ago"


def build_server(
    channel: AgentChannel,
    schemas: list[JSONObject],
    instructions: str,
    *,
    greeting: str | None = None,
    name: str = "tau2",
    activity: Activity | None = None,
) -> Server[Any]:
    """The MCP server of one scenario, whose tools act through ``channel``."""
    seen = activity if activity is not None else Activity()
    tools = [_tool(schema) for schema in schemas]
    tools.append(
        types.Tool(
            name=SEND_MESSAGE,
            description=SEND_MESSAGE_HELP,
            input_schema=SEND_MESSAGE_SCHEMA,
            output_schema=TURN_SCHEMA,
        )
    )

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        seen.note("tools/list")
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        seen.note(f"tools/call {params.name}")
        arguments = dict(params.arguments or {})
        if params.name == SEND_MESSAGE:
            text = arguments.get("text", "")
            return turn_result(await channel.send_message(text if isinstance(text, str) else str(text)))
        result = await channel.call_tool(params.name, arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.content)], is_error=result.error
        )

    async def list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        seen.note("prompts/list")
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(name="policy", description="The agent's instructions: the domain policy."),
                types.Prompt(name="conversation", description="What was said before your first step."),
            ]
        )

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        seen.note(f"prompts/get {params.name}")
        if params.name == "policy":
            messages = [_message("user", instructions)]
        elif params.name == "conversation":
            opening = await channel.opening()
            messages = ([_message("assistant", greeting)] if greeting else []) + [_message("user", opening)]
        else:
            raise ValueError(f"unknown prompt {params.name!r}: this server has 'policy' and 'conversation'")
        return types.GetPromptResult(messages=messages)

    return Server(
        name,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def turn_result(turn: UserTurn) -> types.CallToolResult:
    """``send_message_to_user``'s result: the user's words as text, and the turn as structured content."""
    text = turn.text + (f"\n{OVER_MARK}" if turn.over else "")
    if not turn.sent and turn.text:
        text = f"{NOT_SENT_MARK}\n{text}"
    structured = {"reply": turn.text, "conversation_over": turn.over, "sent": turn.sent}
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


def _tool(schema: JSONObject) -> types.Tool:
    function = schema["function"]
    assert isinstance(function, dict)  # Tool.openai_schema() always builds this shape
    parameters = function.get("parameters")
    if not isinstance(parameters, dict):
        parameters = {"type": "object", "properties": {}}
    return types.Tool(
        name=str(function["name"]), description=str(function.get("description") or ""), input_schema=parameters
    )


def _message(role: str, text: str) -> types.PromptMessage:
    return types.PromptMessage(role=role, content=types.TextContent(type="text", text=text))  # type: ignore[arg-type]
