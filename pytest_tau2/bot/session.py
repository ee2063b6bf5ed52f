"""One bot session: the agent side of one scenario, driven by the runner's frames.

A :class:`BotSession` owns everything of one connection: the scenario instance, the seeded
agent state (its own copy: sessions never share state), the agent's Environment with its
recorded actions, the agent's own view of the conversation, and the agent itself. It turns
each received frame into the frames to send back; the server does the I/O.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_tau2.bot import audio_wire
from pytest_tau2.bot.protocol import PROTOCOL_VERSION, excerpt, wire_arguments
from pytest_tau2.bot.voice import BotVoice, VoiceEngines, spoken_turn
from pytest_tau2.conversation.protocol import Participant, Reply, ToolCall
from pytest_tau2.environment.db import canonical_json, db_hash
from pytest_tau2.environment.env import Environment
from pytest_tau2.errors import DataError, DataPathError
from pytest_tau2.run.seeding import MissingDataFile, build_environments, load_db_paths, seed_states
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.settings import Settings

AgentFactory = Callable[[Scenario, Settings], Participant]
"""Builds the agent of one session from the scenario and the bot's settings."""

_session_ids = itertools.count(1)


def _db_paths(init: Mapping[str, Any]) -> str:
    """The runner's db_path values, as it sent them (short)."""
    return excerpt({k: v for k, v in init.items() if k == "db_path" or k.endswith("_db_path")})


class SessionError(Exception):
    """A refusal sent to the runner as an ``error`` frame with ``code`` (then the bot closes)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class BotConfig:
    """What every session of one bot server shares."""

    settings: Settings
    """Data roots: ``eval_data_root`` (in-repo domains) and ``data_dir`` (tau2)."""
    agent_factory: AgentFactory
    max_steps_per_turn: int = 30
    """Agent steps (LLM calls) per user message before the bot passes the turn with empty text."""
    server_name: str = "pytest-tau2-reference-bot"
    voice: VoiceEngines | None = None
    """Engines of a bot that speaks audio (``--voice``, voice.py); None: a text bot."""


class BotSession:
    """State machine: ``hello`` -> ``apply_initialization`` -> ``user_message``* -> ``get_scenario_summary``*."""

    def __init__(self, config: BotConfig, scenarios: Mapping[str, type[Scenario]]) -> None:
        self.config = config
        self.scenarios = scenarios
        self.id = f"s{next(_session_ids)}"
        self.phase = "new"  # new -> ready -> active -> ended
        self.scenario: Scenario | None = None
        self.exit_reason: str | None = None
        self._env: Environment | None = None
        self._user_env: Environment | None = None
        """Replica of the user's side (dual-side domains): the runner's user tool calls are replayed on it."""
        self._agent: Participant | None = None
        self._view: list[dict[str, Any]] = []
        self._tools: list[dict[str, Any]] = []
        self._calls = itertools.count(1)
        self.voice = BotVoice(config.voice) if config.voice is not None else None

    @property
    def scenario_name(self) -> str:
        return self.scenario.name if self.scenario is not None else "-"

    async def handle(self, frame: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The frames answering one received (already validated) frame, in order."""
        kind = audio_wire.kind(frame)
        if "event" in frame and self.voice is not None and self.phase in ("active", "ended"):
            if self.voice.on_event(frame) and self.phase == "active":  # the user's utterance ended
                text = await self.voice.recognize()
                async for out in spoken_turn(self.voice, self._agent_turn(text)):
                    yield out
        elif kind == "hello" and self.phase == "new":
            yield self._hello(frame)
        elif kind == "apply_initialization" and self.phase == "ready":
            yield self._initialize(frame)
        elif kind == "user_message" and self.phase == "active":
            self._replay_user_calls(frame.get("user_tool_calls") or [])
            async for out in self._agent_turn(frame["text"]):
                yield out
        elif kind == "get_scenario_summary" and self.phase in ("active", "ended"):
            if frame["include_db"]:  # the whole DB as a tree: tens of ms for retail, not on the event loop
                yield await asyncio.to_thread(self._summary, True)
            else:
                yield self._summary(False)
        elif kind == "error":
            raise SessionError("runner_error", f"the runner reported {frame['code']}: {frame['message']}")
        elif kind == "user_message" and self.phase == "ended":
            raise SessionError("conversation_ended", "user_message after the agent ended the conversation")
        else:
            raise SessionError("unexpected_message", f"{kind} frame is not allowed in phase {self.phase!r}")

    # ---- handshake ----------------------------------------------------------------------------

    def _hello(self, frame: dict[str, Any]) -> dict[str, Any]:
        if frame["protocol_version"] != PROTOCOL_VERSION:
            raise SessionError(
                "unsupported_version",
                f"protocol_version {frame['protocol_version']} is not supported; this bot speaks {PROTOCOL_VERSION}",
            )
        self.scenario = self._scenario(frame["scenario"])
        self.phase = "ready"
        ready = {
            "type": "ready",
            "protocol_version": PROTOCOL_VERSION,
            "session_id": self.id,
            "server": self.config.server_name,
        }
        if self.voice is not None:
            ready["audio"] = {**audio_wire.AUDIO_OFFER, "ends_turns": True}
        return ready

    def _scenario(self, name: str) -> Scenario:
        cls = self.scenarios.get(name)
        if cls is None:
            raise SessionError("unknown_scenario", f"no registered scenario named {name!r} on this bot")
        try:
            return cls().bind(self.config.settings)
        except Exception as exc:  # e.g. its data folder is missing on the bot's machine
            raise SessionError("scenario_unavailable", f"{name}: {type(exc).__name__}: {exc}") from exc

    def _initialize(self, frame: dict[str, Any]) -> dict[str, Any]:
        scenario = self.scenario
        assert scenario is not None  # phase "ready" implies it
        if frame["scenario"] != scenario.name:
            raise SessionError(
                "unknown_scenario", f"apply_initialization names {frame['scenario']!r}, hello named {scenario.name!r}"
            )
        states = self._seed(scenario, frame["shared_state_init"])
        for index, action in enumerate(frame["initialization_actions"]):
            try:
                scenario.run_initialization_action(action, states)
            except Exception as exc:
                raise SessionError(
                    "initialization_failed", f"initialization action {index} {json.dumps(action)[:200]}: {exc}"
                ) from exc
        envs = build_environments(scenario, states)
        self._env = envs["agent"]
        self._user_env = envs.get("user")
        self._tools = self._env.schemas()
        self._agent = self.config.agent_factory(scenario, self.config.settings)
        self._view = [{"role": "system", "content": scenario.get_agent_prompt()}]
        if frame.get("greeting"):
            self._view.append({"role": "assistant", "content": frame["greeting"]})
        self.phase = "active"
        db = self._env.state.get("db")
        return {
            "type": "initialized",
            "db_hash": db_hash(db) if db is not None else None,
            "tools": [tool.name for tool in self._env.tools],
        }

    def _seed(self, scenario: Scenario, init: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """States for every side: the agent's from the frame, the user's (if any) seeded locally.

        The user side is only a scratch copy so initialization actions and cross-side syncing
        behave as in-process; the runner holds the real one.
        """
        settings = self.config.settings
        root = scenario.data_root(settings)
        agent: dict[str, Any] = dict(init)
        try:
            load_db_paths(scenario, agent, "agent", root)
        except MissingDataFile as exc:
            raise SessionError(
                "bad_db_path", f"shared_state_init.{exc.key} {exc.relative!r}: no such file under the data root"
            ) from None
        except DataPathError:  # its message names the absolute root and a symlink's target: not for the runner
            raise SessionError(
                "bad_db_path",
                f"shared_state_init {_db_paths(init)}: escapes the data root (an absolute path, '..', or a "
                "symlink leading out of it); give a path relative to the data root",
            ) from None
        except DataError:  # not a string, or a file that is no database of this scenario (its paths stay here)
            strings = all(isinstance(v, str) for k, v in init.items() if k == "db_path" or k.endswith("_db_path"))
            why = (
                "the file is not a database this scenario can read (not JSON, or not its domain's shape)"
                if strings
                else "a db_path must be a string"
            )
            raise SessionError("bad_db_path", f"shared_state_init {_db_paths(init)}: {why}") from None
        except (ValueError, OSError) as exc:  # a NUL byte in the path, a name too long, a folder...
            raise SessionError(
                "bad_db_path", f"shared_state_init {_db_paths(init)}: not a readable path ({type(exc).__name__})"
            ) from None
        states = {"agent": agent}
        if "user" in scenario.sides:
            states["user"] = seed_states(scenario, settings, sides=("user",))["user"]
        return states

    # ---- the conversation -----------------------------------------------------------------------

    def _replay_user_calls(self, calls: list[dict[str, Any]]) -> None:
        """Apply the user's own tool calls to the replica, so cross-side syncing reaches this agent DB."""
        if self._user_env is None:
            return  # a single-side scenario: the user has no state that touches the agent's
        for call in calls:
            self._user_env.call(call["name"], call["arguments"])

    async def _agent_turn(self, text: str) -> AsyncIterator[dict[str, Any]]:
        assert self._agent is not None and self._env is not None
        self._view.append({"role": "user", "content": text})
        for _ in range(self.config.max_steps_per_turn):
            reply = await self._agent.respond(list(self._view), self._tools)
            reply = reply if isinstance(reply, Reply) else Reply(text=str(reply))
            said = reply.text if reply.text and reply.text.strip() else None
            if not reply.tool_calls:
                self._view.append({"role": "assistant", "content": said or ""})
                yield {"type": "agent_message", "text": said or ""}
                return
            self._view.append(
                {"role": "assistant", "content": said, "tool_calls": [call.to_openai() for call in reply.tool_calls]}
            )
            ending: tuple[str, str] | None = None
            for index, call in enumerate(reply.tool_calls):
                frame = self._run_tool(call, said if index == 0 else None)
                yield frame
                if self.exit_reason is not None and ending is None:
                    ending = (self.exit_reason, frame["id"])
            if ending is not None:
                self.phase = "ended"
                yield {"type": "exit", "reason": ending[0], "tool_call_id": ending[1]}
                return
        # A looping agent passes the turn with empty text, as the in-process loop does for a
        # mute one; the runner's turn and time limits then end the conversation.
        self._view.append({"role": "assistant", "content": ""})
        yield {"type": "agent_message", "text": ""}

    def _run_tool(self, call: ToolCall, text: str | None) -> dict[str, Any]:
        assert self._env is not None
        call_id = call.id or f"call_{next(self._calls)}"
        result = self._env.call(call.name, call.arguments)
        self._view.append({"role": "tool", "tool_call_id": call_id, "content": result.content})
        if result.ends_conversation and self.exit_reason is None:
            self.exit_reason = result.ends_conversation
        return {
            "type": "tool_call",
            "id": call_id,
            "name": call.name,
            "arguments": wire_arguments(call.arguments),
            "result": result.content,
            "error": result.error,
            "text": text,
        }

    def _summary(self, include_db: bool) -> dict[str, Any]:
        assert self._env is not None
        db = self._env.state.get("db")
        frame: dict[str, Any] = {
            "type": "scenario_summary",
            "actions": list(self._env.actions),
            "db_hash": db_hash(db) if db is not None else None,
        }
        if include_db and db is not None:
            # The canonical text is cached per untouched entity (cheap); parsing it gives a
            # plain tree whose serialization hashes the same on the runner's side.
            frame["db"] = json.loads(canonical_json(db))
        return frame

    def stop_reason(self) -> str:
        """How the conversation ended as the bot saw it (for the session log line)."""
        if self.exit_reason is not None:
            return self.exit_reason
        return {"new": "closed_before_hello", "ready": "closed_before_init"}.get(self.phase, "closed")
