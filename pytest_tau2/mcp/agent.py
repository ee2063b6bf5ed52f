"""``--tau2-agent mcp:COMMAND``: an agent in its own process, given the scenario over MCP.

Per scenario, :class:`McpAgentSide` (the pipeline's :class:`~pytest_tau2.run.agent_side.AgentSide`):

1. builds the scenario's MCP server (:mod:`pytest_tau2.mcp.server`) on an
   :class:`~pytest_tau2.conversation.channel.AgentChannel` and serves it over streamable HTTP on
   loopback (:mod:`pytest_tau2.mcp.http`), one server and port per scenario;
2. writes a standard MCP client config (``{"mcpServers": {"tau2": {"command", "args"}}}``) whose
   entry is the stdio bridge (``python -m pytest_tau2.mcp.bridge URL``) to the same server;
3. starts ``COMMAND`` with ``TAU2_MCP_URL``, ``TAU2_MCP_CONFIG``, ``TAU2_SCENARIO`` and
   ``TAU2_SEED`` in its environment (:mod:`pytest_tau2.mcp.process`);
4. seats the channel in the conversation loop: the agent's tool calls run on the runner's seeded
   state exactly as an in-process agent's (through a
   :class:`~pytest_tau2.conversation.channel.ChannelEnvironment`), so the final state is the
   in-process one and every signal is scored as for any agent;
5. at the end, answers what still waits, lets the process end (then stops its process group),
   and stops the server.

A process started per scenario, not one serving every scenario: each gets its endpoint in its
environment with no protocol of ours to pick a scenario, a crash or leak ends with its scenario,
and ``--tau2-concurrency N`` and xdist workers run N agents side by side with nothing shared.
The cost, a process start per scenario, is measured in bench/results/mcp.md.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_tau2.conversation.channel import AgentChannel, ChannelEnvironment
from pytest_tau2.conversation.offline import plan_follower
from pytest_tau2.conversation.protocol import Participant, Reply
from pytest_tau2.environment.env import Environment, ToolResult
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.errors import InfrastructureError, ScenarioDefinitionError
from pytest_tau2.run.agent_side import InProcessAgentSide, Seat
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scoring.signals import FinalState

if TYPE_CHECKING:
    from pytest_tau2.conversation.loop import ConversationResult
    from pytest_tau2.mcp.http import LoopbackHTTP
    from pytest_tau2.mcp.process import AgentProcess
    from pytest_tau2.mcp.server import Activity
    from pytest_tau2.run.seeding import Prepared

SERVER_NAME = "tau2"
"""The server's name, and its key in the ``mcpServers`` of ``TAU2_MCP_CONFIG``."""


@dataclass(frozen=True)
class Endpoint:
    """Where one scenario's MCP server is: what the agent's process gets in its environment."""

    url: str
    config_path: str
    env: dict[str, str]


OnReady = Callable[[Endpoint], "Awaitable[None] | None"]


class McpAgent:
    """The agent under test behind MCP: started by ``command`` per scenario (or, with ``command``
    None, whatever ``on_ready`` starts: a client in this process, for tests and benchmarks)."""

    def __init__(
        self,
        command: str | None,
        scenario: Scenario,
        *,
        reply_timeout: float = 120.0,
        env: Mapping[str, str] | None = None,
        on_ready: OnReady | None = None,
        exit_grace_s: float = 1.0,
    ) -> None:
        self.command = command
        self.scenario = scenario
        self.reply_timeout = reply_timeout
        self.extra_env = dict(env or {})
        self.on_ready = on_ready
        self.exit_grace_s = exit_grace_s
        """Seconds the process may take to end by itself once the conversation is over."""

    def agent_side(self) -> McpAgentSide:
        return McpAgentSide(self)

    async def respond(self, messages: list[JSONObject], tools: list[JSONObject]) -> Reply:
        raise InfrastructureError("an MCP agent answers through its own side: run it with run_scenario")


class McpAgentSide:
    """One scenario's agent side behind MCP (see the module's docstring)."""

    def __init__(self, agent: McpAgent) -> None:
        self.agent = agent
        self.channel = AgentChannel(reply_timeout=agent.reply_timeout, explain=self._explain)
        self.endpoint: Endpoint | None = None
        self.activity: Activity | None = None
        self.process: AgentProcess | None = None
        self._http: LoopbackHTTP | None = None
        self._folder: str | None = None

    async def open(self, prepared: Prepared, user: Participant) -> Seat:
        from pytest_tau2.mcp.http import LoopbackHTTP
        from pytest_tau2.mcp.server import SEND_MESSAGE, Activity, build_server

        scenario = self.agent.scenario
        env = _FollowingEnvironment(prepared.envs["agent"], self.channel, plan_follower(user))
        schemas = env.schemas()
        if any(s.get("function", {}).get("name") == SEND_MESSAGE for s in schemas):  # type: ignore[union-attr]
            raise ScenarioDefinitionError(
                f"{scenario.name}: an agent tool is named {SEND_MESSAGE!r}, the MCP user channel"
            )
        self.activity = Activity()
        server = build_server(
            self.channel, schemas, scenario.get_agent_prompt(), greeting=scenario.agent_greeting,
            name=SERVER_NAME, activity=self.activity,
        )  # fmt: skip
        self._http = LoopbackHTTP(server)
        url = await self._http.start()
        self._folder = tempfile.mkdtemp(prefix="tau2-mcp-")
        config = Path(self._folder, "mcp.json")
        config.write_text(json.dumps(client_config(url), indent=2), "utf-8")
        self.endpoint = Endpoint(url, str(config), self._environment(url, str(config)))
        if self.agent.command:
            from pytest_tau2.mcp.process import AgentProcess

            self.process = AgentProcess(self.agent.command, self.endpoint.env, on_exit=self._exited)
            await self.process.start()
        if self.agent.on_ready is not None:
            started = self.agent.on_ready(self.endpoint)
            if started is not None:
                await started
        return Seat(self.channel, env, prepared.envs.get("user"), {"mcp_url": url})

    async def final_state(
        self,
        prepared: Prepared,
        conversation: ConversationResult,
        *,
        expected_hashes: dict[str, str | None] | None,
        need_dbs: bool,
    ) -> FinalState:
        if conversation.error is None and conversation.stop_reason == "max_duration" and self.channel.waiting:
            # The deadline passed while the loop waited on the agent: its hang, the scenario's error.
            raise InfrastructureError(
                self.channel.describe("the agent made no call before the scenario's max_duration")
            )
        final = await InProcessAgentSide(self.channel).final_state(
            prepared, conversation, expected_hashes=expected_hashes, need_dbs=need_dbs
        )
        final.details = {"mcp_url": self.endpoint.url if self.endpoint else None, "mcp_requests": self._requests()}
        return final

    async def close(self) -> None:
        await self.channel.aclose()  # whatever still waits gets its answer: the agent sees the end
        process, self.process = self.process, None
        try:
            if process is not None:
                await _let_end(process, self.agent.exit_grace_s)
                await process.stop()
        finally:
            http, self._http = self._http, None
            if http is not None:
                await http.stop()
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)

    # ---- helpers -------------------------------------------------------------------------------

    def _environment(self, url: str, config: str) -> dict[str, str]:
        env = {**os.environ, **self.agent.extra_env, "TAU2_MCP_URL": url, "TAU2_MCP_CONFIG": config}
        env["TAU2_SCENARIO"] = self.agent.scenario.name
        for key in ("NO_PROXY", "no_proxy"):  # the endpoint is on loopback, never behind a proxy
            env[key] = ",".join(filter(None, [env.get(key, ""), "127.0.0.1", "localhost"]))
        return env

    def _exited(self, code: int) -> None:
        if self.channel.ended is None:
            what = self._explain() or f"the agent process exited with code {code}"
            self.channel.fail(InfrastructureError(f"the MCP agent ended before the conversation did: {what}"))

    def _explain(self) -> str:
        parts = [self.activity.describe()] if self.activity is not None else []
        if self.process is not None:
            parts.append(self.process.describe())
        return "; ".join(parts)

    def _requests(self) -> int:
        return self.activity.requests if self.activity is not None else 0


def client_config(url: str) -> dict[str, Any]:
    """A standard MCP client config whose one server is the stdio bridge to ``url``."""
    bridge = {"command": sys.executable, "args": ["-m", "pytest_tau2.mcp.bridge", url]}
    return {"mcpServers": {SERVER_NAME: bridge}}


class _FollowingEnvironment(ChannelEnvironment):
    """The channel's environment, also moving a scripted user's gold plan past the agent's calls."""

    def __init__(self, inner: Environment, channel: AgentChannel, follow: Callable[[str], None] | None) -> None:
        super().__init__(inner, channel)
        self.follow = follow

    def call(self, name: str, arguments: Mapping[str, JSONValue] | str | None) -> ToolResult:
        result = super().call(name, arguments)
        if self.follow is not None:
            self.follow(name)
        return result


async def _let_end(process: AgentProcess, grace_s: float) -> None:
    """Give the process ``grace_s`` to end by itself (it has just been told the conversation is over)."""
    waited = 0.0
    while process.returncode is None and waited < grace_s:
        await asyncio.sleep(0.05)
        waited += 0.05
