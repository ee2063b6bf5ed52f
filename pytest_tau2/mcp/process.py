"""The agent's own process: started per scenario with the scenario's endpoint, watched, stopped.

The command runs through the shell (``--tau2-agent mcp:"cd agent && uv run agent.py"`` works as
typed) in a process group of its own, so stopping it stops whatever it started. Its stderr and
stdout are read as they come (a full pipe would block the agent) and their last lines kept: an
agent that exits, hangs or never connects is its scenario's error with the stderr tail in the
message.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Mapping

from pytest_tau2.errors import InfrastructureError

TAIL_LINES = 20
TAIL_CHARS = 2000
WATCH_S = 0.05
"""How often the agent's process (not its pipes) is looked at for its exit."""


class Tail:
    """The last lines of a stream."""

    def __init__(self, lines: int = TAIL_LINES) -> None:
        self.lines: deque[str] = deque(maxlen=lines)

    def add(self, line: str) -> None:
        self.lines.append(line.rstrip("\n"))

    def text(self) -> str:
        joined = "\n".join(self.lines)
        return joined if len(joined) <= TAIL_CHARS else "..." + joined[-TAIL_CHARS:]


class AgentProcess:
    """One run of the agent's command; ``on_exit(code)`` is called if it ends before :meth:`stop`."""

    def __init__(self, command: str, env: Mapping[str, str], on_exit: Callable[[int], None] | None = None) -> None:
        self.command = command
        self.env = dict(env)
        self.on_exit = on_exit
        self.stderr = Tail()
        self.stdout = Tail()
        self.returncode: int | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False

    async def start(self) -> None:
        try:
            self._process = await asyncio.create_subprocess_shell(
                self.command,
                env=self.env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=sys.platform != "win32",  # its own group: stop() reaches its children
            )
        except OSError as exc:
            raise InfrastructureError(f"cannot start the MCP agent's command {self.command!r}: {exc}") from None
        process = self._process
        assert process.stdout is not None and process.stderr is not None
        self._tasks = [
            asyncio.ensure_future(_read(process.stdout, self.stdout)),
            asyncio.ensure_future(_read(process.stderr, self.stderr)),
            asyncio.ensure_future(self._watch()),
        ]

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def describe(self) -> str:
        """Its state and stderr tail, for an error message."""
        state = "still running" if self.returncode is None else f"exited with code {self.returncode}"
        tail = self.stderr.text()
        return f"the agent process ({self.command!r}) {state}; " + (
            f"its stderr ends:\n{tail}" if tail else "it wrote nothing to stderr"
        )

    async def _watch(self) -> None:
        # The process, not its pipes: on Python 3.11 ``Process.wait()`` returns only once the pipes
        # close, and a child the agent left (a helper, ``sleep 300 &``, an npx/uv shim) holds them.
        # ``returncode`` is set by the child watcher as soon as the agent itself has exited.
        assert self._process is not None
        while self._process.returncode is None:
            await asyncio.sleep(WATCH_S)
        code = self._process.returncode
        for task in self._tasks[:2]:  # the last output, read before anyone reports the exit
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(task), 1.0)
        self.returncode = code
        if not self._stopping and self.on_exit is not None:
            self.on_exit(code)

    async def stop(self, grace_s: float = 2.0) -> None:
        """Ask its whole process group to end (SIGTERM), then kill what is left after ``grace_s``.

        The group, even when the agent itself has exited: what it started may still run."""
        self._stopping = True
        process = self._process
        if process is None:
            return
        self._signal(signal.SIGTERM)
        if not await self._ended(process, grace_s):
            self._signal(signal.SIGKILL if sys.platform != "win32" else signal.SIGTERM)
            await self._ended(process, grace_s)
        with contextlib.suppress(TimeoutError):  # the pipes close with the group: the transport finishes
            await asyncio.wait_for(process.wait(), grace_s)
        self.returncode = process.returncode
        for task in self._tasks:
            if not task.done():
                task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _ended(self, process: asyncio.subprocess.Process, within_s: float) -> bool:
        """Whether the agent and every process of its group ended within ``within_s``."""
        waited = 0.0
        while process.returncode is None or self._group_alive(process.pid):
            if waited >= within_s:
                return False
            await asyncio.sleep(WATCH_S)
            waited += WATCH_S
        return True

    @staticmethod
    def _group_alive(pgid: int) -> bool:
        if sys.platform == "win32":
            return False
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def _signal(self, sig: int) -> None:
        process = self._process
        if process is None:
            return
        try:
            if sys.platform == "win32":
                process.terminate()
            else:
                os.killpg(process.pid, sig)  # the group it leads (start_new_session)
        except (ProcessLookupError, PermissionError):
            pass  # already gone


async def _read(stream: asyncio.StreamReader, tail: Tail) -> None:
    while True:
        try:
            line = await stream.readline()
        except ValueError:  # a line over the reader's limit: keep going with what follows
            continue
        if not line:
            return
        tail.add(line.decode("utf-8", "replace"))
