"""Per-call overhead of the MCP path against the in-process path, medians side by side.

One conversation per path on ``tau2_retail__0`` (restaurant's menu with ``--restaurant``), in which
the agent calls one read tool ``--calls`` times, one call per step, then ends the call:

- **in process**: a Participant returns each call to the loop; a call's time is from one
  ``respond`` to the next (the loop runs the tool, records it, asks again);
- **MCP over streamable HTTP**: the agent is its own process (``--tau2-agent mcp:COMMAND``) with the
  SDK's ``Client`` on ``TAU2_MCP_URL``; a call's time is the client's ``call_tool`` round trip;
- **MCP over stdio**: the same through the bridge named in ``TAU2_MCP_CONFIG``.

Also measured: the scenario's set-up over MCP (from ``run_scenario``'s start to the agent's first
request: server start, agent process start, SDK import, connect) and the whole conversation's wall
time. Results in bench/results/mcp.json and mcp.md.

    TAU2_DATA_DIR=... python bench/bench_mcp.py [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TOOLS = {
    "tau2_retail__0": ("get_order_details", {"order_id": "#W2378156"}),
    "restaurant__menu_question": ("GetMenuTool", {}),
}
ENDING = {"tau2_retail__0": "transfer_to_human_agents", "restaurant__menu_question": "EndConversationTool"}


NOTE = [
    "",
    "Reading it: the in-process path costs a few hundredths of a ms a call (the loop's bookkeeping and the tool);",
    "over MCP a call is a round trip through the SDK on both ends (two processes, JSON-RPC, pydantic validation),",
    'in either protocol era of the SDK\'s client (`mode="auto"`, its default, negotiates the 2026-07-28 era with',
    'JSON responses; `mode="legacy"` the initialize handshake with SSE responses); through the stdio bridge one',
    "hop more. Before the fix recorded in pytest_tau2/mcp/http.py (the listening socket now names IPPROTO_TCP, so",
    "asyncio sets TCP_NODELAY on each connection) a JSON response waited ~40 ms on Nagle and the client's delayed",
    "ACK: 48 ms a call in the default mode. Beside a model call (hundreds of ms to seconds) each is small.",
]


class _Caller:
    """In process: calls the tool ``calls`` times (timing respond to respond), then ends the call."""

    def __init__(self, name: str, arguments: dict[str, Any], calls: int, ending: str) -> None:
        self.name, self.arguments, self.calls, self.ending = name, arguments, calls, ending
        self.times: list[float] = []
        self._last: float | None = None

    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        from pytest_tau2.conversation.protocol import Reply, ToolCall

        now = time.perf_counter()
        if self._last is not None:
            self.times.append(now - self._last)
        self._last = now
        if len(self.times) < self.calls:
            return Reply(tool_calls=[ToolCall(self.name, dict(self.arguments))])
        arguments = {"summary": "bench"} if self.ending == "transfer_to_human_agents" else {}
        return Reply(tool_calls=[ToolCall(self.ending, arguments)])


async def _agent(via: str, mode: str, name: str, arguments: dict[str, Any], calls: int, ending: str, out: str) -> None:
    """The MCP side's agent process: listen, call the tool ``calls`` times, end the call."""
    from mcp import Client, StdioServerParameters

    server: Any = os.environ["TAU2_MCP_URL"]
    if via == "stdio":
        entry = json.loads(Path(os.environ["TAU2_MCP_CONFIG"]).read_text("utf-8"))["mcpServers"]["tau2"]
        server = StdioServerParameters(command=entry["command"], args=entry["args"], env=dict(os.environ))
    times = []
    async with Client(server, mode=mode) as client:
        await client.call_tool("send_message_to_user", {"text": ""})
        for _ in range(calls):
            start = time.perf_counter()
            await client.call_tool(name, arguments)
            times.append(time.perf_counter() - start)
        await client.call_tool(ending, {"summary": "bench"} if ending == "transfer_to_human_agents" else {})
    Path(out).write_text(json.dumps(times), "utf-8")


def _settings(**overrides: Any) -> Any:
    from tests.e2e.conftest import make_settings

    return dataclasses.replace(make_settings(), max_turns=100_000, **overrides)


def _scenario(name: str, settings: Any) -> Any:
    import scenarios  # noqa: F401  # registers the restaurant scenarios
    from pytest_tau2.scenario.registry import all_scenarios

    return all_scenarios(settings, [])[name]().bind(settings)


def _run(name: str, agent: Any, settings: Any) -> tuple[Any, float]:
    from pytest_tau2.run import participants, run_scenario

    scenario = _scenario(name, settings)
    user = participants.make_user(participants.Context.for_scenario(scenario, settings))
    start = time.perf_counter()
    outcome = asyncio.run(run_scenario(scenario, agent=agent, user=user, settings=settings))
    return outcome, time.perf_counter() - start


def measure(name: str, calls: int) -> dict[str, Any]:
    from pytest_tau2.mcp.agent import McpAgent

    tool, arguments = TOOLS[name]
    rows: dict[str, Any] = {}
    caller = _Caller(tool, arguments, calls, ENDING[name])
    outcome, wall = _run(name, caller, _settings())
    assert outcome.conversation.error is None, outcome.conversation.error
    rows["in process"] = {
        "median_ms": 1000 * statistics.median(caller.times),
        "calls": len(caller.times),
        "wall_s": wall,
    }
    for via, mode in (("http", "auto"), ("http", "legacy"), ("stdio", "auto")):
        out = tempfile.mktemp(suffix=".json")
        command = (
            f"cd {REPO} && {sys.executable} bench/bench_mcp.py agent --via {via} --mode {mode} --scenario {name} "
            f"--calls {calls} --out {out}"
        )
        settings = _settings()
        scenario = _scenario(name, settings)
        agent = McpAgent(command, scenario, reply_timeout=120)
        outcome, wall = _run(name, agent, settings)
        assert outcome.conversation.error is None, outcome.conversation.error
        times = json.loads(Path(out).read_text("utf-8"))
        first = next(m for m in outcome.conversation.transcript if m.get("tool_calls"))
        rows[f"MCP {via}, Client(mode={mode!r})"] = {
            "median_ms": 1000 * statistics.median(times),
            "p90_ms": 1000 * statistics.quantiles(times, n=10)[-1],
            "calls": len(times),
            "wall_s": wall,
            "first_call_turn": first["turn_idx"],
        }
        os.unlink(out)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    agent = sub.add_parser("agent")
    agent.add_argument("--via", choices=("http", "stdio"))
    agent.add_argument("--mode", default="auto")
    agent.add_argument("--scenario")
    agent.add_argument("--calls", type=int)
    agent.add_argument("--out")
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    if args.command == "agent":
        import anyio

        tool, arguments = TOOLS[args.scenario]
        anyio.run(_agent, args.via, args.mode, tool, arguments, args.calls, ENDING[args.scenario], args.out)
        return
    results = {name: measure(name, args.calls) for name in TOOLS}
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    (REPO / "bench" / "results" / "mcp.json").write_text(
        json.dumps({"machine": machine, "results": results}, indent=1) + "\n"
    )
    lines = [
        "# MCP path against the in-process path: per tool call",
        "",
        f"`python bench/bench_mcp.py --calls {args.calls}` on {machine}, shared with other work (medians of one run;",
        "every path measured in the same run). A call's time in process: from one `respond` to the next (the loop",
        "runs the tool and records it); over MCP: the agent's `call_tool` round trip with the SDK's `Client`.",
        "`wall` is the whole scenario (over MCP: the MCP server, the agent's process start, its SDK import and",
        "connection, the calls, the stop).",
        "",
        "| scenario (tool) | path | median ms/call | p90 ms | calls | wall s |",
        "|---|---|---|---|---|---|",
    ]
    for name, rows in results.items():
        for path, row in rows.items():
            p90 = f"{row['p90_ms']:.2f}" if "p90_ms" in row else ""
            cells = [f"{name} ({TOOLS[name][0]})", path, f"{row['median_ms']:.3f}", p90, str(row["calls"])]
            lines.append("| " + " | ".join([*cells, f"{row['wall_s']:.2f}"]) + " |")
    lines += NOTE
    (REPO / "bench" / "results" / "mcp.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
