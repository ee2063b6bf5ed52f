"""HTTP/1.1 POSTs on asyncio's own streams: the OpenAI wire path's client when no proxy applies.

A sweep's model calls are one kind of request: a JSON POST to one or a few endpoints, kept-alive
connections, a JSON reply. aiohttp did that at ~0.2 ms of CPU per call plus ~0.11 s to import (it
builds two TLS contexts, reading the system's certificate store, at import), on the way to every
run's first request; this module does it with what asyncio already has: one ``write`` per request
(head and body together, as aiohttp), the reply's head read in one ``readuntil``, its body by
``Content-Length`` or chunks (gzip and deflate decoded: they are what the request accepts), the
connection kept for the next call unless either side said ``close``. TLS (``https://``) uses
``ssl.create_default_context()`` (the system's store, as aiohttp's and the OpenAI SDK's verified
default), made once per process when the first ``https`` endpoint is reached.

Proxies (``HTTP(S)_PROXY``) are not handled here: :mod:`pytest_tau2.llm.openai_wire` sends those
calls through aiohttp as before. Failures raise :class:`ConnectionFailed` (the caller's connection
error, retried by the retry policy), chained to the ``OSError`` behind it, so that a refused
connection is still recognised as one (:func:`pytest_tau2.llm.faults.is_refused`). Timeouts are the
caller's (``asyncio.timeout`` around :meth:`Pool.post`); a cancelled or failed request's
connection is closed, never reused.
"""

from __future__ import annotations

import asyncio
import codecs
import sys
import time
import weakref
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import ssl

__all__ = ["ConnectionFailed", "Pool", "Reply", "pool"]

USER_AGENT = f"pytest-tau2 Python/{sys.version_info[0]}.{sys.version_info[1]}"
HEAD_LIMIT = 1 << 16
"""The longest reply head (status line and headers) read, as aiohttp's default line limits."""
KEEP_IDLE_S = 15.0
"""A kept-alive connection idle longer than this is closed, not reused (aiohttp's default): a
middlebox may have dropped it without telling either side, and a request sent on it would wait
for its timeout."""


class ConnectionFailed(Exception):
    """The request could not be sent or its reply could not be read as HTTP/1.x."""


class Reply(NamedTuple):
    status: int
    headers: dict[str, str]
    """Names in lower case; repeated headers joined with ``, ``."""
    body: bytes

    def text(self) -> str:
        """The body decoded by the ``charset`` of ``Content-Type``, else UTF-8 (as aiohttp's ``text()``)."""
        return self.body.decode(_charset(self.headers.get("content-type", "")))


def _charset(content_type: str) -> str:
    for param in content_type.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            try:
                return codecs.lookup(value.strip().strip('"')).name
            except LookupError:
                break
    return "utf-8"


_TLS: ssl.SSLContext | None = None


def _tls() -> ssl.SSLContext:
    global _TLS
    if _TLS is None:
        import ssl

        context = ssl.create_default_context()
        context.set_alpn_protocols(["http/1.1"])
        _TLS = context
    return _TLS


Key = tuple[str, str, int]
Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]
Idle = tuple[asyncio.StreamReader, asyncio.StreamWriter, float]


class Pool:
    """One event loop's kept-alive connections, per (scheme, host, port); no cap on their number
    (``--tau2-concurrency`` and the rate limiter are the caps)."""

    def __init__(self) -> None:
        self._idle: dict[Key, list[Idle]] = {}
        self._open: set[asyncio.StreamWriter] = set()

    async def post(self, url: str, headers: Sequence[tuple[str, str]], body: bytes) -> Reply:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        host = parts.hostname
        if scheme not in ("http", "https") or not host:
            raise ConnectionFailed(f"cannot send to {url!r}: not an http:// or https:// URL with a host")
        default_port = 443 if scheme == "https" else 80
        port = parts.port or default_port
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        named = f"[{host}]" if ":" in host else host
        lines = [f"POST {target} HTTP/1.1", f"Host: {named if port == default_port else f'{named}:{port}'}"]
        given = {name.lower() for name, _ in headers}
        for name, value in headers:
            if "\r" in name or "\n" in name or "\r" in value or "\n" in value:
                raise ValueError(f"header {name!r}: a line break in a header name or value")
            lines.append(f"{name}: {value}")
        if "accept" not in given:
            lines.append("Accept: */*")
        if "accept-encoding" not in given:
            lines.append("Accept-Encoding: gzip, deflate")
        if "user-agent" not in given:
            lines.append(f"User-Agent: {USER_AGENT}")
        lines.append(f"Content-Length: {len(body)}")
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + body
        key = (scheme, host, port)
        reader, writer = await self._connection(key)
        try:
            writer.write(request)
            await writer.drain()
            reply, reusable = await _read_reply(reader)
        except BaseException as exc:
            self._discard(writer)
            if isinstance(exc, (OSError, EOFError, ValueError, zlib.error, asyncio.LimitOverrunError)):
                raise ConnectionFailed(_failure(exc)) from exc
            raise
        if reusable:
            self._idle.setdefault(key, []).append((reader, writer, time.monotonic()))
        else:
            self._discard(writer)
        return reply

    async def _connection(self, key: Key) -> Connection:
        idle = self._idle.get(key)
        while idle:
            reader, writer, since = idle.pop()
            if not writer.is_closing() and not reader.at_eof() and time.monotonic() - since <= KEEP_IDLE_S:
                return reader, writer
            self._discard(writer)  # the server closed it while it was idle, or it idled too long
        scheme, host, port = key
        try:
            if scheme == "https":
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=_tls(), server_hostname=host, limit=HEAD_LIMIT
                )
            else:
                reader, writer = await asyncio.open_connection(host, port, limit=HEAD_LIMIT)
        except OSError as exc:
            raise ConnectionFailed(f"Cannot connect to host {host}:{port} ssl:{scheme == 'https'} [{exc}]") from exc
        self._open.add(writer)
        return reader, writer

    def _discard(self, writer: asyncio.StreamWriter) -> None:
        self._open.discard(writer)
        writer.close()

    async def close(self) -> None:
        """Close every connection this pool opened (idle or not)."""
        writers, self._open, self._idle = list(self._open), set(), {}
        for writer in writers:
            writer.close()
        for writer in writers:
            try:
                await writer.wait_closed()
            except (OSError, asyncio.CancelledError):
                pass


def _failure(exc: BaseException) -> str:
    if isinstance(exc, asyncio.IncompleteReadError):
        return "Server disconnected" if not exc.partial else "Server disconnected before the reply was complete"
    if isinstance(exc, asyncio.LimitOverrunError):
        return f"reply head longer than {HEAD_LIMIT} bytes"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


async def _read_reply(reader: asyncio.StreamReader) -> tuple[Reply, bool]:
    """The reply's status, headers and decoded body; whether the connection can carry another request."""
    while True:
        head = (await reader.readuntil(b"\r\n\r\n"))[:-4].decode("latin-1")
        status_line, _, rest = head.partition("\r\n")
        version, _, tail = status_line.partition(" ")
        code = tail[:3]
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise ValueError(f"not an HTTP/1.x reply: {status_line[:100]!r}")
        status = int(code)
        if not (100 <= status < 200) or status == 101:
            break  # 1xx (100 Continue, 103 Early Hints) come before the reply itself
    headers: dict[str, str] = {}
    for line in rest.split("\r\n") if rest else ():
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"malformed header line {line[:100]!r}")
        name, value = name.strip().lower(), value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
    reusable = "keep-alive" in tokens if version == "HTTP/1.0" else "close" not in tokens
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _chunked(reader)
    elif "content-length" in headers:
        length = int(headers["content-length"])
        if length < 0:
            raise ValueError(f"Content-Length {length}")
        body = await reader.readexactly(length)
    elif status in (204, 304):
        body = b""
    else:
        body = await reader.read()  # to the end of the connection
        reusable = False
    encoding = headers.get("content-encoding", "").strip().lower()
    if encoding in ("gzip", "x-gzip"):
        body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        try:
            body = zlib.decompress(body)
        except zlib.error:
            body = zlib.decompress(body, -zlib.MAX_WBITS)  # raw deflate, as some servers send it
    elif encoding not in ("", "identity"):
        raise ValueError(f"Content-Encoding {encoding!r} was not asked for")
    return Reply(status, headers, body), reusable


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    while True:
        line = await reader.readuntil(b"\r\n")
        size = int(line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers, then the empty line
                pass
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise ValueError("a chunk not followed by CRLF")


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pool] = weakref.WeakKeyDictionary()


def pool() -> Pool:
    """The running event loop's pool."""
    loop = asyncio.get_running_loop()
    found = _pools.get(loop)
    if found is None:
        found = _pools[loop] = Pool()
    return found


async def aclose() -> None:
    """Close the running event loop's pool, if it has one."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    found = _pools.pop(loop, None)
    if found is not None:
        await found.close()
