"""The reference bot server: serves any registered scenario's agent side over WebSocket.

One :class:`~pytest_tau2.bot.session.BotSession` per connection (independent state), many
connections at once on one event loop. Frames over ``max_size`` bytes close the connection
(code 1009); a session with no frame from the runner for ``idle_timeout`` seconds gets an
``idle_timeout`` error frame and is closed. One log line per session says the scenario, the
duration and how it stopped.

Limits keep one client from taking the others down (docs/websocket.md, "Timeouts and limits"):
bytes and turns per session (``session_limit``), open connections (an HTTP 503 at the
handshake beyond ``max_connections``), at most ``MAX_QUEUE`` unread frames per connection, and a
``send_timeout`` for a runner that stops reading. A summary with the DB is built and encoded
off the event loop. Error frames name paths relative to the data root, never the root itself.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK
from websockets.http11 import Request, Response

from pytest_tau2.bot.audio_wire import kind
from pytest_tau2.bot.protocol import decode, encode, error_frame, excerpt
from pytest_tau2.bot.session import BotConfig, BotSession, SessionError
from pytest_tau2.errors import ProtocolError
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.scenario.registry import all_scenarios

log = logging.getLogger("pytest_tau2.bot")

DEFAULT_MAX_SIZE = 1 << 20
"""Largest frame the bot accepts from a runner (runner frames are small: text and init)."""
DEFAULT_IDLE_TIMEOUT = 300.0
DEFAULT_MAX_SESSION_BYTES = 16 << 20
"""Bytes one session may receive from its runner in all (a whole retail conversation is ~100 KB)."""
DEFAULT_MAX_TURNS = 1000
"""``user_message`` frames one session may receive (the runner's own default limit is 30 turns)."""
DEFAULT_MAX_CONNECTIONS = 1024
"""Connections open at once; the next is refused at the handshake (HTTP 503)."""
DEFAULT_SEND_TIMEOUT = 60.0
"""Seconds one frame may take to be sent: a runner that stops reading is disconnected after it."""
MAX_QUEUE = 4
"""Frames received but not yet handled, per connection (each up to ``max_size``)."""


class _SendTimeout(Exception):
    pass


@dataclass(frozen=True)
class SessionRecord:
    """What the session log line says, kept for tests and monitoring."""

    session_id: str
    scenario: str
    stop: str
    duration_s: float
    received: dict[str, int]
    """Valid frames received from the runner, by type."""


class BotServer:
    """The reference bot. ``await start()`` binds (port 0: any free port), ``await stop()`` closes."""

    def __init__(
        self,
        config: BotConfig,
        host: str = "127.0.0.1",
        port: int = 8765,
        *,
        max_size: int = DEFAULT_MAX_SIZE,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_session_bytes: int = DEFAULT_MAX_SESSION_BYTES,
        max_turns: int = DEFAULT_MAX_TURNS,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        send_timeout: float = DEFAULT_SEND_TIMEOUT,
        scenarios: Mapping[str, type[Scenario]] | None = None,
    ) -> None:
        self.config = config
        self.host = host
        self.port = port
        self.max_size = max_size
        self.idle_timeout = idle_timeout
        self.max_session_bytes = max_session_bytes
        self.max_turns = max_turns
        self.max_connections = max_connections
        self.send_timeout = send_timeout
        self.open_connections = 0
        self.refused_connections = 0
        self._roots = _roots(config)
        self._scenarios = dict(scenarios) if scenarios is not None else None
        self._server: Server | None = None
        self.sessions_started = 0
        self.finished: list[SessionRecord] = []
        """One record per finished session, in finishing order (for tests and monitoring)."""

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port}"

    def scenarios(self) -> Mapping[str, type[Scenario]]:
        """Registered scenarios by name (resolved once; a broken domain is logged and skipped)."""
        if self._scenarios is None:
            errors: list[tuple[str, Exception]] = []
            self._scenarios = all_scenarios(self.config.settings, errors)
            for domain, exc in errors:
                log.warning("scenario source %s unavailable: %s", domain, exc)
        return self._scenarios

    async def start(self) -> None:
        if not _is_loopback(self.host):
            log.warning("binding %s: the bot is reachable from other machines and has no authentication", self.host)
        self.scenarios()
        self._server = await serve(
            self._handle,
            self.host,
            self.port,
            max_size=self.max_size,
            max_queue=MAX_QUEUE,
            process_request=self._admit,
        )
        self.port = self._server.sockets[0].getsockname()[1]  # the real port when 0 was asked
        log.info("serving %d scenarios on %s", len(self.scenarios()), self.url)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def serve_forever(self) -> None:
        await self.start()
        assert self._server is not None
        await self._server.serve_forever()

    def _admit(self, connection: ServerConnection, request: Request) -> Response | None:
        """Refuse a connection beyond ``max_connections`` at the handshake (cheap: no session is built)."""
        if self.open_connections < self.max_connections:
            return None
        self.refused_connections += 1
        if self.refused_connections == 1 or self.refused_connections % 1000 == 0:
            log.warning(
                "refused %d connections: %d open (--max-connections)", self.refused_connections, self.max_connections
            )
        return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, f"the bot has {self.max_connections} sessions open\n")

    def public(self, message: str) -> str:
        """``message`` with the bot's data roots cut out: paths relative to the root, the root itself unnamed."""
        for root in self._roots:
            message = message.replace(root + os.sep, "").replace(root, "<data root>")
        return message

    async def _handle(self, ws: ServerConnection) -> None:
        self.sessions_started += 1
        self.open_connections += 1
        session = BotSession(self.config, self.scenarios())
        started = time.monotonic()
        stop = "disconnected"
        received: Counter[str] = Counter()
        try:
            stop = await self._converse(ws, session, received)
        except _SendTimeout:
            stop = "send_timeout"
            ws.transport.abort()  # the runner stopped reading: drop what is buffered for it
        except ConnectionClosedOK:
            stop = session.stop_reason()
        except ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd is not None else (exc.sent.code if exc.sent is not None else None)
            stop = "frame_too_large" if code == 1009 else f"disconnected({code})"
        except Exception as exc:  # an agent or bot failure must not take the server down
            log.exception("session %s (%s) failed", session.id, session.scenario_name)
            stop = "error:internal"
            message = self.public(f"the bot failed on the last frame: {type(exc).__name__}: {exc}")
            await _refuse(ws, "internal", message[:500])
        finally:
            self.open_connections -= 1
            duration = time.monotonic() - started
            self.finished.append(SessionRecord(session.id, session.scenario_name, stop, duration, dict(received)))
            log.info(
                "session=%s scenario=%s peer=%s duration=%.3fs stop=%s",
                session.id,
                session.scenario_name,
                _peer(ws),
                duration,
                stop,
            )

    async def _converse(self, ws: ServerConnection, session: BotSession, received: Counter[str]) -> str:
        """Serve frames until the runner closes; returns the session's stop reason."""
        total = 0
        while True:
            try:
                raw = await asyncio.wait_for(ws.recv(), self.idle_timeout)
            except TimeoutError:
                await _refuse(ws, "idle_timeout", f"no frame from the runner for {self.idle_timeout:g} s")
                return "idle_timeout"
            total += len(raw)
            if total > self.max_session_bytes:
                await _refuse(
                    ws,
                    "session_limit",
                    f"the session received {total} bytes from the runner, over the bot's {self.max_session_bytes}-byte "
                    "limit per session (--max-session-bytes)",
                )
                return "error:session_limit"
            try:
                frame = decode(raw, "runner")
                received[kind(frame)] += 1
                if received["user_message"] > self.max_turns:
                    raise SessionError(
                        "session_limit",
                        f"more than {self.max_turns} user_message frames in one session (--max-turns)",
                    )
                async for out in session.handle(frame):
                    await self._send(ws, out)
            except ProtocolError as exc:
                await _refuse(ws, "invalid_frame", str(exc))
                return "error:invalid_frame"
            except SessionError as exc:
                log.debug("session %s refused: %s (%s)", session.id, exc.message, excerpt(raw))
                if exc.code == "runner_error":  # the runner gave up and said why: nothing to answer
                    log.info("session %s: %s", session.id, exc.message)
                    await ws.close()
                else:
                    await _refuse(ws, exc.code, self.public(exc.message))
                return f"error:{exc.code}"

    async def _send(self, ws: ServerConnection, frame: dict[str, Any]) -> None:
        """Encode (a DB summary off the event loop: megabytes of JSON) and send within ``send_timeout``."""
        heavy = frame.get("type") == "scenario_summary" and "db" in frame  # (audio events have no type)
        text = await asyncio.to_thread(encode, frame, "bot") if heavy else encode(frame, "bot")
        try:
            await asyncio.wait_for(ws.send(text), self.send_timeout)
        except TimeoutError:
            raise _SendTimeout from None


def _roots(config: BotConfig) -> list[str]:
    """The data roots as the bot may print them (given and resolved), longest first."""
    found: set[str] = set()
    for root in (config.settings.eval_data_root, config.settings.data_dir):
        if root:
            found.update({str(Path(root)), str(Path(root).resolve()), str(Path(root).absolute())})
    return sorted((r for r in found if len(r) > 1), key=len, reverse=True)


async def _refuse(ws: ServerConnection, code: str, message: str) -> None:
    """Send an error frame and close; the runner may already be gone."""
    try:
        await ws.send(encode(error_frame(code, message), "bot"))
        await ws.close(1008 if code != "internal" else 1011, code)
    except ConnectionClosed:
        pass


def _peer(ws: ServerConnection) -> str:
    address = ws.remote_address
    return f"{address[0]}:{address[1]}" if isinstance(address, tuple) and len(address) >= 2 else str(address)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class AsyncServer(Protocol):
    """Anything with ``async start()``, ``async stop()`` and a ``url`` (the bot, or a test double)."""

    url: Any

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class ServerThread:
    """Run a server in a background thread with its own event loop (tests, notebooks).

    ``with ServerThread(BotServer(config, port=0)) as url: ...`` starts it, yields its URL,
    and stops it (closing open sessions) on exit.
    """

    def __init__(self, server: AsyncServer, *, start_timeout: float = 30.0) -> None:
        self.server = server
        self.start_timeout = start_timeout
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="tau2-bot", daemon=True)

    def start(self) -> str:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self.server.start(), self._loop)
        try:
            future.result(self.start_timeout)
        except BaseException:
            self.stop()
            raise
        return str(self.server.url)

    def stop(self) -> None:
        if self._thread.is_alive():
            try:
                asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop).result(self.start_timeout)
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(self.start_timeout)
        self._loop.close()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
