"""The channel that seats a self-driving agent, and the scenario's MCP server on it (in-process SDK client)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pytest_tau2.conversation.channel import ENDED, AgentChannel, UserTurn
from pytest_tau2.environment.env import ToolResult


def _user(*texts: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": "policy"}] + [{"role": "user", "content": t} for t in texts]


def test_parallel_calls_are_one_step_and_each_gets_its_own_result() -> None:
    async def main() -> None:
        channel = AgentChannel(reply_timeout=2)
        channel.deliver(_user("hi"))
        first = asyncio.ensure_future(channel.call_tool("a", {"x": 1}))
        second = asyncio.ensure_future(channel.call_tool("b", '{"y": 2}'))
        await asyncio.sleep(0)
        reply = await channel.next_reply()
        assert [(c.name, c.arguments) for c in reply.tool_calls] == [("a", {"x": 1}), ("b", '{"y": 2}')]
        channel.record(ToolResult("A", False))
        channel.record(ToolResult("Error: bad", True))
        channel.deliver(_user("hi"))
        assert await first == ToolResult("A", False) and await second == ToolResult("Error: bad", True)

    asyncio.run(main())


def test_without_a_wrapped_environment_results_come_from_the_view_by_call_id() -> None:
    async def main() -> None:
        channel = AgentChannel(reply_timeout=2)
        pending = asyncio.ensure_future(channel.call_tool("a", {}))
        await asyncio.sleep(0)
        call = (await channel.next_reply()).tool_calls[0]
        channel.deliver([*_user("hi"), {"role": "tool", "tool_call_id": call.id, "content": "Error: no such order"}])
        assert await pending == ToolResult("Error: no such order", True)

    asyncio.run(main())


def test_listening_first_then_a_message_whose_answer_is_the_users_next_words() -> None:
    async def main() -> None:
        channel = AgentChannel(reply_timeout=2)
        channel.deliver(_user("I need help"))
        assert await channel.send_message("") == UserTurn("I need help")  # a listen: nothing said
        saying = asyncio.ensure_future(channel.send_message("Sure, what is your order id?"))
        await asyncio.sleep(0)
        assert (await channel.next_reply()).text == "Sure, what is your order id?"
        channel.deliver(_user("I need help", "It is #W1. ###STOP###"))
        assert await saying == UserTurn("It is #W1. ###STOP###", over=True)
        assert channel.user_left

    asyncio.run(main())


def test_listening_before_the_user_has_spoken_waits_for_their_opening_and_says_nothing() -> None:
    """An agent that connects before the user's model answered (a loaded machine): its empty first
    message is a listen, never an empty reply said to the customer."""

    async def main() -> None:
        channel = AgentChannel(reply_timeout=2)
        listening = asyncio.ensure_future(channel.send_message(""))
        await asyncio.sleep(0)
        assert not listening.done() and channel.saying is False
        channel.deliver(_user("Which drinks do you have?"))
        assert await listening == UserTurn("Which drinks do you have?")
        answer = asyncio.ensure_future(channel.send_message("Cola and water."))
        await asyncio.sleep(0)
        assert (await channel.next_reply()).text == "Cola and water."
        channel.deliver(_user("Which drinks do you have?", "Thanks. ###STOP###"))
        assert await answer == UserTurn("Thanks. ###STOP###", over=True)

    asyncio.run(main())


def test_a_message_written_before_hearing_the_user_is_not_said() -> None:
    async def main() -> None:
        channel = AgentChannel(reply_timeout=2)
        channel.deliver(_user("Where is my order?"))
        turn = await channel.send_message("Hello! How can I help?")
        assert turn == UserTurn("Where is my order?", sent=False)
        assert channel.saying is False

    asyncio.run(main())


def test_the_end_answers_everything_that_waits_and_refuses_what_comes_after() -> None:
    async def main() -> None:
        channel = AgentChannel(reply_timeout=2)
        channel.deliver(_user("hi"))
        await channel.listen()
        saying = asyncio.ensure_future(channel.send_message("Anything else?"))
        await asyncio.sleep(0)
        await channel.next_reply()
        await channel.aclose()
        assert await saying == UserTurn("", over=True)
        assert await channel.call_tool("a", {}) == ToolResult(ENDED, True)
        assert (await channel.send_message("bye")).over

    asyncio.run(main())


def test_a_silent_agent_is_an_infrastructure_error_naming_its_last_request() -> None:
    from pytest_tau2.errors import InfrastructureError

    async def main() -> None:
        channel = AgentChannel(reply_timeout=0.05, explain=lambda: "the agent process still running")
        channel.deliver(_user("hi"))
        with pytest.raises(
            InfrastructureError, match=r"no call within 0.05 s \(last request: nothing yet\); the agent"
        ):
            await channel.next_reply()

    asyncio.run(main())


def test_an_agent_gone_after_the_user_left_finishes_its_closing_turn_silently() -> None:
    async def main() -> None:
        channel = AgentChannel(reply_timeout=2)
        channel.deliver(_user("Bye ###STOP###"))
        await channel.listen()
        channel.fail(RuntimeError("exited"))
        assert (await channel.next_reply()).text == ""

    asyncio.run(main())


def test_the_mcp_server_serves_the_litellm_schemas_the_policy_and_the_user_channel() -> None:
    mcp = pytest.importorskip("mcp")
    from pytest_tau2.mcp.server import OVER_MARK, build_server

    schemas = [
        {
            "type": "function",
            "function": {
                "name": "get_order",
                "description": "Find an order.",
                "parameters": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
            },
        }
    ]

    async def main() -> None:
        channel = AgentChannel(reply_timeout=2)
        channel.deliver(_user("Where is #W1?"))
        server = build_server(channel, schemas, "Be kind.", greeting="Hi! How can I help?")

        async def loop_side() -> None:  # the conversation loop, as far as this test needs it
            reply = await channel.next_reply()
            assert reply.tool_calls[0].name == "get_order"
            channel.record(ToolResult('{"status": "shipped"}', False))
            channel.deliver(_user("Where is #W1?"))
            reply = await channel.next_reply()
            assert reply.text == "It has shipped."
            channel.deliver(_user("Where is #W1?", "Thanks! ###STOP###"))

        async with mcp.Client(server) as client:
            assert client.instructions == "Be kind."
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == ["get_order", "send_message_to_user"]
            assert listed[0].input_schema == schemas[0]["function"]["parameters"]
            opening = await client.get_prompt("conversation")
            assert [m.content.text for m in opening.messages] == ["Hi! How can I help?", "Where is #W1?"]
            again = await client.get_prompt("conversation")  # the same opening, not a wait for new words
            assert [m.content.text for m in again.messages] == ["Hi! How can I help?", "Where is #W1?"]
            loop = asyncio.ensure_future(loop_side())
            result = await client.call_tool("get_order", {"id": "#W1"})
            assert result.content[0].text == '{"status": "shipped"}' and not result.is_error
            said = await client.call_tool("send_message_to_user", {"text": "It has shipped."})
            assert said.structured_content == {"reply": "Thanks! ###STOP###", "conversation_over": True, "sent": True}
            assert said.content[0].text.endswith(OVER_MARK)
            await loop

    asyncio.run(main())


def test_the_mcp_kind_needs_a_command_and_skips_what_the_channel_cannot_carry(tmp_path: Any) -> None:
    import dataclasses

    from pytest_tau2.errors import ScenarioNotApplicable, SettingsError
    from pytest_tau2.run import participants
    from pytest_tau2.settings import Settings

    with pytest.raises(SettingsError, match="needs the command that starts the agent"):
        participants.validate_settings(Settings(agent="mcp: "))
    participants.validate_settings(Settings(agent='mcp:python -c "pass"'))
    assert participants.describe_agent(Settings(agent="mcp:python agent.py")) == "mcp:python agent.py"

    class WithHistory:
        name = "x__history"
        message_history = [{"role": "user", "content": "hi"}]

    ctx = participants.Context(WithHistory(), dataclasses.replace(Settings(), agent="mcp:true"), plan=None)  # type: ignore[arg-type]
    with pytest.raises(ScenarioNotApplicable, match="message history"):
        participants.make_agent(ctx)


def test_the_bridge_command_names_what_it_needs(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    from pytest_tau2.cli import main

    monkeypatch.delenv("TAU2_MCP_URL", raising=False)
    with pytest.raises(SystemExit) as stopped:
        main(["mcp-bridge"])
    assert stopped.value.code == 2
    assert "set TAU2_MCP_URL" in capsys.readouterr().err


def test_the_loopback_http_server_answers_without_waiting_on_nagle() -> None:
    """A JSON response is headers then body: without TCP_NODELAY on the connection the body waits
    ~40 ms for the client's delayed ACK (it did: 48 ms a call, bench/results/mcp.md)."""
    import socket
    import time

    mcp = pytest.importorskip("mcp")
    from pytest_tau2.mcp.http import LoopbackHTTP
    from pytest_tau2.mcp.server import build_server

    schema = {"type": "function", "function": {"name": "t", "description": "d", "parameters": {"type": "object"}}}

    async def main() -> None:
        channel = AgentChannel(reply_timeout=5)
        http = LoopbackHTTP(build_server(channel, [schema], "policy"))
        url = await http.start()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        assert http._socket is not None and http._socket.proto == socket.IPPROTO_TCP

        async def loop_side() -> None:
            while True:
                await channel.next_reply()
                channel.record(ToolResult("ok", False))
                channel.deliver([])

        serving = asyncio.ensure_future(loop_side())
        times = []
        async with mcp.Client(url) as client:  # the SDK's default mode: JSON responses
            for _ in range(9):
                start = time.perf_counter()
                assert (await client.call_tool("t", {})).content[0].text == "ok"
                times.append(time.perf_counter() - start)
        serving.cancel()
        await http.stop()
        # The Nagle wait (~40 ms) holds every call, so even the fastest would show it; load only adds
        # time to some calls (a median failed beside a CPU hog).
        assert min(times) < 0.035, times

    asyncio.run(main())
