"""The scenario's MCP server over streamable HTTP on loopback, served on the conversation's own loop.

uvicorn (the ASGI server the MCP SDK itself depends on) serves the SDK's streamable-HTTP app on a
socket bound to ``127.0.0.1`` port 0 (the kernel picks a free port, so concurrent scenarios and
xdist workers never collide). It runs as tasks of the loop the conversation runs on, so the MCP
handlers and the conversation loop share one thread and hand each other plain futures.

Its ``startup``/``shutdown`` are called directly rather than ``serve()``: ``serve()`` would install
SIGINT/SIGTERM handlers over the runner's own (plugin/signals.py) and poll a flag every 0.1 s.
"""

from __future__ import annotations

import socket
from typing import Any

from pytest_tau2.errors import InfrastructureError

MCP_PATH = "/mcp"


class LoopbackHTTP:
    """``await start()`` -> the endpoint URL; ``await stop()`` ends every session and frees the port."""

    def __init__(self, server: Any, *, graceful_s: int = 1) -> None:
        self.mcp_server = server
        self.graceful_s = graceful_s  # uvicorn takes whole seconds
        self.url = ""
        self._uvicorn: Any = None
        self._socket: socket.socket | None = None

    async def start(self) -> str:
        import uvicorn

        app = self.mcp_server.streamable_http_app(streamable_http_path=MCP_PATH, host="127.0.0.1")
        # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and without it
        # a JSON response (headers, then body) waits ~40 ms on Nagle and the client's delayed ACK.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.set_inheritable(False)  # the agent's process must not hold the listening socket
        self._socket = sock
        config = uvicorn.Config(
            app, log_config=None, log_level="warning", access_log=False, lifespan="on",
            timeout_graceful_shutdown=self.graceful_s, ws="none",
        )  # fmt: skip
        config.load()
        server = uvicorn.Server(config)
        server.lifespan = config.lifespan_class(config)
        try:
            await server.startup(sockets=[sock])
        except SystemExit:  # uvicorn's answer to a failed lifespan (the SDK's session manager)
            sock.close()
            raise InfrastructureError("the scenario's MCP server did not start (its lifespan failed)") from None
        self._uvicorn = server
        port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}{MCP_PATH}"
        return self.url

    async def stop(self) -> None:
        server, self._uvicorn = self._uvicorn, None
        if server is None:
            return
        server.should_exit = True
        try:
            await server.shutdown(sockets=[self._socket] if self._socket is not None else None)
        finally:
            if self._socket is not None:
                self._socket.close()
