"""The examples run offline against the loopback model server: a framework agent over MCP
(examples/mcp_agent, pydantic-ai), and the two shapes of Python agents without MCP
(:class:`~pytest_tau2.conversation.tool_agent.ToolCallingAgent`): a plain function-calling loop
on the OpenAI SDK, and a pydantic-ai agent whose tools call ``call_tool``."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from typing import Any

import pytest

from pytest_tau2.conversation.tool_agent import ToolCallingAgent
from pytest_tau2.run import participants, run_scenario
from pytest_tau2.run.seeding import prepare
from pytest_tau2.settings import Settings
from tests.e2e.conftest import REPO, scenario_or_skip
from tests.support.fake_openai import FakeOpenAIServer, sequence, text, tool_calls

pytest.importorskip("mcp", reason="the MCP SDK is the optional 'mcp' extra (in the test extra)")
pytest.importorskip("pydantic_ai", reason="pydantic-ai-slim[openai,mcp] is in the test extra")

MENU = "restaurant__menu_question"


def _script(server: FakeOpenAIServer) -> None:
    server.add_handler(
        "agent",
        sequence(
            tool_calls([("GetMenuTool", {})]),
            text("We have lemonade and cola."),
            tool_calls([("EndConversationTool", {})]),
            text("Goodbye!"),
        ),
    )


def test_the_pydantic_ai_example_takes_a_scenario_over_mcp(
    registry: Any, bot_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAIServer() as server:
        _script(server)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("AGENT_MODEL", "agent")
        command = f"{sys.executable} {REPO / 'examples' / 'mcp_agent' / 'agent.py'}"
        settings = dataclasses.replace(bot_settings, agent="mcp:" + command, agent_timeout=60)
        scenario = scenario_or_skip(registry, MENU, settings)
        ctx = participants.Context.for_scenario(scenario, settings)
        outcome = asyncio.run(
            run_scenario(
                scenario, agent=participants.make_agent(ctx), user=participants.make_user(ctx), settings=settings
            )
        )
        requests = server.requests_for("agent")
    assert outcome.conversation.error is None, outcome.conversation.error
    assert outcome.conversation.stop_reason == "exit"
    names = [m.get("tool_calls", [{}])[0].get("name") for m in outcome.conversation.transcript if m.get("tool_calls")]
    assert names == ["GetMenuTool", "EndConversationTool"]
    said = [m["content"] for m in outcome.conversation.transcript if m["role"] == "assistant" and m.get("content")]
    assert said == ["We have lemonade and cola."]
    # The model was given the litellm agent's schemas (its own framing aside) and the policy.
    expected = {
        s["function"]["name"]: s["function"]["parameters"] for s in prepare(scenario, settings).envs["agent"].schemas()
    }
    given = {t["function"]["name"]: t["function"]["parameters"] for t in requests[0]["tools"]}
    for name, parameters in given.items():  # pydantic-ai's strict mode closes an object with no properties
        if not parameters.get("properties") and "additionalProperties" not in expected[name]:
            parameters.pop("additionalProperties", None)
    assert given == expected
    assert requests[0]["messages"][0]["content"] == scenario.get_agent_prompt()  # the server's instructions


def _plain_loop(base_url: str) -> Any:
    """Shape 1: a plain OpenAI function-calling loop (sync), handed OpenAI schemas and call_tool."""
    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key="sk-test")

    def turn(messages: list[dict[str, Any]], tools: list[dict[str, Any]], call_tool: Any) -> str:
        messages = list(messages)
        while True:
            reply = client.chat.completions.create(model="agent", messages=messages, tools=tools).choices[0].message
            if not reply.tool_calls:
                return reply.content or ""
            messages.append(reply.model_dump(exclude_none=True))
            for call in reply.tool_calls:
                result = call_tool(call.function.name, call.function.arguments)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

    return turn


def _framework_agent(base_url: str) -> Any:
    """Shape 2: a framework agent (pydantic-ai) whose tools are the scenario's, run via call_tool."""
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.tools import Tool

    model = OpenAIChatModel("agent", provider=OpenAIProvider(base_url=base_url, api_key="sk-test"))

    async def turn(messages: list[dict[str, Any]], tools: list[dict[str, Any]], call_tool: Any) -> str:
        def as_tool(schema: dict[str, Any]) -> Tool[None]:
            function = schema["function"]

            async def run(**arguments: Any) -> str:
                return str(await call_tool(function["name"], arguments))

            return Tool.from_schema(run, name=function["name"], description=function["description"],
                                    json_schema=function["parameters"])  # fmt: skip

        agent = Agent(model, instructions=str(messages[0]["content"]), tools=[as_tool(s) for s in tools])
        said = [m for m in messages if m["role"] == "user"]
        result = await agent.run(str(said[-1]["content"]))
        return str(result.output)

    return turn


@pytest.mark.parametrize("shape", ["plain_loop", "framework_agent"])
def test_a_python_agent_with_call_tool_is_seated_by_the_adapter(
    shape: str, registry: Any, bot_settings: Settings
) -> None:
    if shape == "framework_agent":
        pytest.importorskip("pydantic_ai")
    with FakeOpenAIServer() as server:
        _script(server)
        turn = (_plain_loop if shape == "plain_loop" else _framework_agent)(server.base_url)
        scenario = scenario_or_skip(registry, MENU, bot_settings)
        user = participants.make_user(participants.Context.for_scenario(scenario, bot_settings))
        outcome = asyncio.run(run_scenario(scenario, agent=ToolCallingAgent(turn), user=user, settings=bot_settings))
        requests = server.requests_for("agent")
    assert outcome.conversation.error is None, outcome.conversation.error
    assert outcome.conversation.stop_reason == "exit"
    calls = [m for m in outcome.conversation.transcript if m.get("tool_calls")]
    assert [c["tool_calls"][0]["name"] for c in calls] == ["GetMenuTool", "EndConversationTool"]
    menu = next(m for m in outcome.conversation.transcript if m["role"] == "tool")
    assert "Margherita" in menu["content"] and menu["error"] is False
    assert any("Margherita" in json.dumps(r["messages"]) for r in requests)  # the result reached the model


@pytest.mark.parametrize("stdio", [False, True], ids=["http", "stdio"])
def test_the_minimal_agent_of_the_docs_runs_over_both_connection_modes(
    stdio: bool, registry: Any, bot_settings: Settings
) -> None:
    command = f"{sys.executable} {REPO / 'examples' / 'mcp_agent' / 'minimal_agent.py'}" + (" --stdio" if stdio else "")
    settings = dataclasses.replace(bot_settings, agent="mcp:" + command, agent_timeout=60)
    scenario = scenario_or_skip(registry, MENU, settings)
    ctx = participants.Context.for_scenario(scenario, settings)
    outcome = asyncio.run(
        run_scenario(scenario, agent=participants.make_agent(ctx), user=participants.make_user(ctx), settings=settings)
    )
    assert outcome.conversation.error is None, outcome.conversation.error
    assert outcome.conversation.stop_reason == "user_stop"  # it never ends the call itself: the customer does
    said = [m["content"] for m in outcome.conversation.transcript if m["role"] == "assistant" and m.get("content")]
    assert said and all("have 3 tools" in text for text in said)  # GetMenuTool, PlaceOrderTool, EndConversationTool


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_an_mcp_agent_with_a_model_played_user_on_both_transports(transport: str, tmp_path: Any) -> None:
    """The user's words reach the agent over MCP and the agent's reach the user's model, whichever
    way the runner's model calls travel (the OpenAI wire path or litellm)."""
    from tests.e2e.llm_scripts import model_options, node, run_pytest

    with FakeOpenAIServer() as server:
        server.add_handler("user", sequence(text("Which drinks do you have?"), text("Thanks, bye. ###STOP###")))
        command = f"{sys.executable} {REPO / 'examples' / 'mcp_agent' / 'minimal_agent.py'}"
        run = run_pytest(
            [node(MENU), "--tau2-agent", "mcp:" + command, "--tau2-user", "litellm",
             *model_options(server, sides=("user",)), "--tau2-llm-transport", transport],
            tmp_path,
        )  # fmt: skip
        user_requests = server.requests_for("user")
    assert run.returncode in (0, 1), run.output[-3000:]  # the agent never ends the call: a verdict, not an error
    metrics = run.metrics(MENU)
    assert metrics["stop_reason"] == "user_stop" and metrics["agent"] == "mcp:" + command
    transcript = run.transcript(MENU)
    assert [m["content"] for m in transcript if m["role"] == "user"] == [
        "Which drinks do you have?",
        "Thanks, bye. ###STOP###",
    ]
    assert "have 3 tools" in json.dumps(user_requests[-1]["messages"])  # the agent's answer reached the user


def test_the_pydantic_ai_example_takes_its_closing_turn_after_the_customer_ends_the_call(tmp_path: Any) -> None:
    """A model that does the task, a customer (model-played) who ends the call: the example hears
    the customer's last words and takes its closing turn, in which the model ends the call: a
    clean exit, and the scenario passes (issue 38 point 6)."""
    from tests.e2e.llm_scripts import model_options, node, run_pytest, subprocess_env

    with FakeOpenAIServer() as server:
        server.add_handler("user", sequence(text("Which drinks do you have?"), text("Thanks, bye. ###STOP###")))
        _script(server)  # the menu, the answer; then (the closing turn) EndConversationTool, goodbye
        command = f"{sys.executable} {REPO / 'examples' / 'mcp_agent' / 'agent.py'}"
        env = subprocess_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test", AGENT_MODEL="agent")
        run = run_pytest(
            [node(MENU), "--tau2-agent", "mcp:" + command, "--tau2-user", "litellm",
             *model_options(server, sides=("user",)), "--tau2-min-agent-turns", "0"],  # a two-line call
            tmp_path,
            env=env,
        )  # fmt: skip
    assert run.returncode == 0, run.output[-3000:]
    metrics = run.metrics(MENU)
    assert metrics["stop_reason"] == "exit", metrics["stop_reason"]
    checks = {c["id"]: c for c in metrics["checks"]}
    assert checks["clean_exit"]["passed"] is True
    transcript = run.transcript(MENU)
    assert [m["content"] for m in transcript if m["role"] == "user"][-1] == "Thanks, bye. ###STOP###"
    calls = [m["tool_calls"][0]["name"] for m in transcript if m.get("tool_calls")]
    assert calls == ["GetMenuTool", "EndConversationTool"]  # the second in the closing turn
