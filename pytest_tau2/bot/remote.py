"""The remote :class:`~pytest_tau2.run.agent_side.AgentSide`: the agent's tools and DB live in a bot.

The pipeline (:func:`pytest_tau2.run.pipeline.run_scenario`) is the same as in process; only
the agent's side of the world differs:

- the loop's agent Environment is a :class:`BotEnvironment`, which hands back the results the
  bot reported instead of running tools (so the transcript holds the bot's calls and results);
- the final state comes from the bot's ``scenario_summary``: its recorded actions (plus the
  runner-side user's, for dual-side domains) and its canonical DB hash; the DB itself is
  fetched only when needed (DB-state predicates, ``--tau2-save-db``, or a hash mismatch to diff).

CLEAN_EXIT comes from the bot's ``exit`` frame, which ends the loop as an exit tool does.

This side reaches the bot through :class:`BotConnection`, the few members of
:class:`~pytest_tau2.bot.client.WebSocketAgent` it uses, so it does not import the client (the
client imports this module to hand out its side: the dependency runs one way).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pytest_tau2.bot.protocol import excerpt, wire_arguments
from pytest_tau2.conversation.offline import plan_follower
from pytest_tau2.conversation.protocol import Participant, Reply
from pytest_tau2.environment.db import db_hash
from pytest_tau2.environment.env import Environment, ToolResult
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.errors import ProtocolError
from pytest_tau2.run.agent_side import Seat
from pytest_tau2.scoring.signals import FinalState

if TYPE_CHECKING:
    from pytest_tau2.conversation.loop import ConversationResult
    from pytest_tau2.run.seeding import Prepared

NO_SUMMARY = "no scenario summary from the bot (the session failed)"


class BotConnection(Protocol):
    """One scenario's session with a bot, as the remote side uses it (``WebSocketAgent`` is one)."""

    url: str
    ready: dict[str, Any] | None
    """The bot's ``ready`` frame (its session id), once the session started."""
    initialized: dict[str, Any] | None
    """The bot's ``initialized`` frame (its initial DB hash), once the session started."""
    exit: dict[str, Any] | None
    """The bot's ``exit`` frame, once it ended the conversation."""
    pending_user_tool_calls: list[dict[str, Any]]
    """The user's own tool calls not yet sent to the bot's replica."""

    async def start(self) -> dict[str, Any]: ...

    async def respond(self, messages: list[JSONObject], tools: list[JSONObject]) -> Reply: ...

    def take_result(self, name: str) -> ToolResult: ...

    async def summary(self, include_db: bool = False) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


class BotEnvironment(Environment):
    """The agent side as the loop sees it when the tools ran in the bot: results come from its reports.

    ``mirror`` (dual-side domains) is the runner's replica of the agent side: each reported
    call is replayed on it, so the cross-side sync gives the user's side (the phone) the
    effects of the agent's calls, as in-process. Its results are not used.
    """

    def __init__(
        self,
        agent: BotConnection,
        schemas: list[JSONObject],
        on_call: Callable[[str], None] | None = None,
        mirror: Environment | None = None,
    ) -> None:
        super().__init__("agent", {}, [])
        self.agent = agent
        self._schemas = schemas
        self._on_call = on_call
        self._mirror = mirror

    def schemas(self) -> list[JSONObject]:
        return self._schemas

    def call(self, name: str, arguments: Mapping[str, JSONValue] | str | None) -> ToolResult:
        result = self.agent.take_result(name)
        if result.error:
            self.tool_errors += 1
        elif self._mirror is not None:
            self._mirror.call(name, arguments)
        if self._on_call is not None:
            self._on_call(name)
        return result


class _ReportingEnvironment(Environment):
    """The user's side (dual-side domains), queueing each of its calls for the bot's replica."""

    def __init__(self, env: Environment, agent: BotConnection) -> None:
        super().__init__(env.side, env.state, env.tools, after_success=env.after_success)
        self.agent = agent

    def call(self, name: str, arguments: Mapping[str, JSONValue] | str | None) -> ToolResult:
        result = super().call(name, arguments)
        self.agent.pending_user_tool_calls.append(
            {"name": name, "arguments": wire_arguments(arguments), "result": result.content, "error": result.error}
        )
        return result


@dataclass
class _KeepOpen:
    """The agent without ``aclose``: the loop closes its participants, but the summary comes after."""

    agent: BotConnection

    async def respond(self, messages: list[JSONObject], tools: list[JSONObject]) -> Reply:
        return await self.agent.respond(messages, tools)


class RemoteAgentSide:
    """One scenario's agent side in an external bot, reached through a :class:`BotConnection`."""

    def __init__(self, agent: BotConnection) -> None:
        self.agent = agent
        self._bot_env: BotEnvironment | None = None
        self._user_env: Environment | None = None
        self._local_hash: str | None = None

    async def open(self, prepared: Prepared, user: Participant) -> Seat:
        # The runner keeps its own seeded state: the user side lives here (dual-side domains), and
        # the agent side's initial hash checks that runner and bot start from the same data.
        envs = prepared.envs
        local_db = prepared.states["agent"].get("db")
        self._local_hash = db_hash(local_db) if local_db is not None else None
        mirror = None
        if "user" in envs:  # dual-side: each side replays the other's calls on its replica
            self._user_env = _ReportingEnvironment(envs["user"], self.agent)
            mirror = envs["agent"]
        self._bot_env = BotEnvironment(self.agent, envs["agent"].schemas(), plan_follower(user), mirror=mirror)
        await self.agent.start()
        call = getattr(self.agent, "audio", None)  # the bot speaks audio in this call (voice_client.py)
        line = None
        if call is not None:
            from pytest_tau2.bot.voice_client import BotLine

            def line(phone: Any) -> BotLine:
                return BotLine(phone, call)

        return Seat(_KeepOpen(self.agent), self._bot_env, self._user_env, line=line)

    async def final_state(
        self,
        prepared: Prepared,
        conversation: ConversationResult,
        *,
        expected_hashes: dict[str, str | None] | None,
        need_dbs: bool,
    ) -> FinalState:
        local = {side: state.get("db") for side, state in prepared.states.items() if side != "agent"}
        user_env = self._user_env or prepared.envs.get("user")  # the loop ran the user's calls on the wrapper
        user_actions = list(user_env.actions) if user_env is not None else []
        user_errors = user_env.tool_errors if user_env is not None else 0
        bot_errors = self._bot_env.tool_errors if self._bot_env is not None else 0
        summary = None
        if conversation.error is None:
            expected = (expected_hashes or {}).get("agent")
            summary = await self._fetch_summary(prepared, expected, need_dbs)
        hashes = {side: db_hash(db) if db is not None else None for side, db in local.items()}
        hashes["agent"] = summary.get("db_hash") if summary else None
        details = {
            "url": self.agent.url,
            "session_id": (self.agent.ready or {}).get("session_id"),
            "db_hashes": hashes,
            "initial_db_hash": (self.agent.initialized or {}).get("db_hash"),
            "runner_initial_db_hash": self._local_hash,
            "exit": self.agent.exit,
        }
        return FinalState(
            actions=(list(summary["actions"]) if summary else []) + user_actions,
            dbs={"agent": summary.get("db") if summary else None, **local},
            hashes=hashes,
            tool_errors=bot_errors + user_errors,
            dbs_on_wire=True,
            missing=None if summary else NO_SUMMARY,
            notes=self._hash_notes(summary),
            details=details,
        )

    async def close(self) -> None:
        await self.agent.aclose()

    async def _fetch_summary(self, prepared: Prepared, expected: str | None, need_dbs: bool) -> dict[str, Any]:
        # The DB itself only when something reads it: predicates, --tau2-save-db, or a diff.
        summary = await self.agent.summary(include_db=need_dbs)
        if self._local_hash is not None and summary["db_hash"] is None:
            raise ProtocolError(
                f"the bot's scenario_summary has no db_hash, but {prepared.scenario.name} has an agent DB: "
                f"{excerpt(summary)}"
            )
        if "db" not in summary and expected is not None and summary["db_hash"] != expected:
            summary = await self.agent.summary(include_db=True)
        return summary

    def _hash_notes(self, summary: dict[str, Any] | None) -> list[str]:
        """Hints for a bot implementer when a DB mismatch may come from data or hashing, not the agent."""
        notes = []
        initial = (self.agent.initialized or {}).get("db_hash")
        if initial is not None and self._local_hash is not None and initial != self._local_hash:
            notes.append(
                f"note: the bot's initial DB hash {initial} differs from the runner's {self._local_hash}: "
                "runner and bot do not start from the same data"
            )
        if summary and summary.get("db") is not None and summary.get("db_hash"):
            recomputed = db_hash(summary["db"])
            if recomputed != summary["db_hash"]:
                notes.append(
                    f"note: the DB the bot sent hashes to {recomputed}, not its reported {summary['db_hash']}: "
                    "the bot's hash recipe differs from docs/websocket.md"
                )
        return notes
