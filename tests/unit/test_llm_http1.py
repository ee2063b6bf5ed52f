"""The wire path's HTTP/1.1 client (llm/http1.py) against raw loopback servers: the reply framings
a server may use (Content-Length, chunked, to the end of the connection, after a 100 Continue),
gzip and deflate bodies, kept-alive connections reused and closed ones not, and the failures that
must be connection errors (a dropped connection, a reply that is not HTTP, a refused port)."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from pytest_tau2.llm import http1
from pytest_tau2.llm.faults import is_refused

Serve = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    request_line, *lines = head.strip().split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return request_line, headers, body


def _run(serve: Serve, client: Callable[[str], Awaitable[object]]) -> object:
    """Start ``serve`` on a loopback port, run ``client(base_url)``, close both."""

    async def main() -> object:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            return await client(f"http://127.0.0.1:{port}/v1/chat/completions")
        finally:
            await http1.aclose()
            server.close()

    return asyncio.run(main())


def _replies(
    *raw: bytes, seen: list[tuple[str, dict[str, str], bytes]] | None = None, connections: list[int] | None = None
) -> Serve:
    """A server answering its requests, in order over all connections, with ``raw`` replies."""
    left = list(raw)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if connections is not None:
            connections.append(1)
        try:
            while left:
                request = await _read_request(reader)
                if seen is not None:
                    seen.append(request)
                reply = left.pop(0)
                writer.write(reply)
                await writer.drain()
                if b"connection: close" in reply.lower() or b"HTTP/1.0" in reply[:8] or not reply:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    return serve


def _ok(body: bytes, *extra: str) -> bytes:
    head = ["HTTP/1.1 200 OK", "Content-Type: application/json", f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def test_a_post_sends_one_request_with_the_given_headers_and_reads_the_json_reply() -> None:
    seen: list[tuple[str, dict[str, str], bytes]] = []
    serve = _replies(_ok(b'{"id": "x"}'), seen=seen)
    headers = [("Content-Type", "application/json"), ("Authorization", "Bearer k"), ("X-Team", "evals")]
    reply = _run(serve, lambda url: http1.pool().post(url, headers, b'{"model": "m"}'))
    assert isinstance(reply, http1.Reply)
    assert (reply.status, json.loads(reply.text())) == (200, {"id": "x"})
    request_line, sent, body = seen[0]
    assert request_line == "POST /v1/chat/completions HTTP/1.1"
    assert sent["host"].startswith("127.0.0.1:") and sent["content-length"] == str(len(body))
    assert (sent["authorization"], sent["x-team"], sent["content-type"]) == ("Bearer k", "evals", "application/json")
    assert body == b'{"model": "m"}'


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'4;ext=1\r\n{"a"\r\n5\r\n: 1}\n\r\n0\r\nX-Trailer: t\r\n\r\n',
        b'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{"a": 1}\n',
        b'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"a": 1}\n',
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s",
        b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: %d\r\n\r\n%s",
    ],
    ids=["chunked", "after-100-continue", "to-the-end-of-the-connection", "gzip", "deflate"],
)
def test_every_reply_framing_gives_the_same_body(raw: bytes) -> None:
    if b"gzip" in raw:
        packed = gzip.compress(b'{"a": 1}\n')
        raw = raw % (len(packed), packed)
    elif b"deflate" in raw:
        packed = zlib.compress(b'{"a": 1}\n')
        raw = raw % (len(packed), packed)
    reply = _run(_replies(raw), lambda url: http1.pool().post(url, [], b"{}"))
    assert isinstance(reply, http1.Reply)
    assert (reply.status, reply.body) == (200, b'{"a": 1}\n')


def test_kept_alive_connections_are_reused_and_closed_ones_are_not() -> None:
    connections: list[int] = []
    serve = _replies(_ok(b"{}"), _ok(b"{}"), _ok(b"{}", "Connection: close"), _ok(b"{}"), connections=connections)

    async def four(url: str) -> object:
        return [(await http1.pool().post(url, [], b"{}")).status for _ in range(4)]

    assert _run(serve, four) == [200, 200, 200, 200]
    assert len(connections) == 2  # the third reply said close: the fourth call opened a new one


def test_a_connection_idle_past_the_limit_is_not_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http1, "KEEP_IDLE_S", -1.0)  # every idle connection is too old
    connections: list[int] = []
    serve = _replies(_ok(b"{}"), _ok(b"{}"), connections=connections)

    async def two(url: str) -> object:
        return [(await http1.pool().post(url, [], b"{}")).status for _ in range(2)]

    assert _run(serve, two) == [200, 200]
    assert len(connections) == 2


def test_a_reply_in_another_charset_is_decoded_by_it() -> None:
    body = '{"text": "Grüße"}'.encode("latin-1")
    raw = _ok(body).replace(b"application/json", b"application/json; charset=ISO-8859-1")
    reply = _run(_replies(raw), lambda url: http1.pool().post(url, [], b"{}"))
    assert isinstance(reply, http1.Reply) and json.loads(reply.text()) == {"text": "Grüße"}


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b'HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{"a"',
        b"SSH-2.0-OpenSSH\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
    ],
    ids=["dropped", "cut-short", "not-http", "malformed-header"],
)
def test_a_broken_reply_is_a_connection_failure(raw: bytes) -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(raw)
        await writer.drain()
        writer.close()

    with pytest.raises(http1.ConnectionFailed):
        _run(serve, lambda url: http1.pool().post(url, [], b"{}"))


def test_a_refused_connection_is_recognised_as_refused() -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    async def call() -> None:
        try:
            await http1.pool().post(f"http://127.0.0.1:{port}/v1/chat/completions", [], b"{}")
        finally:
            await http1.aclose()

    with pytest.raises(http1.ConnectionFailed) as caught:
        asyncio.run(call())
    assert is_refused(caught.value)


def test_a_header_with_a_line_break_is_refused_before_anything_is_sent() -> None:
    async def call() -> None:
        await http1.pool().post("http://127.0.0.1:9/v1/chat/completions", [("X-Bad", "a\r\nInjected: 1")], b"{}")

    with pytest.raises(ValueError, match="line break"):
        asyncio.run(call())


def test_https_goes_through_tls_with_the_host_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A loopback TLS server with a certificate made here (openssl), trusted by the client's context."""
    import shutil
    import ssl
    import subprocess

    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl command to make a test certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    made = subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        capture_output=True, check=False,
    )  # fmt: skip
    if made.returncode != 0:
        pytest.skip(f"openssl could not make a certificate: {made.stderr[-200:]!r}")
    trusting = ssl.create_default_context(cafile=str(cert))
    trusting.set_alpn_protocols(["http/1.1"])
    monkeypatch.setattr(http1, "_TLS", trusting)
    serving = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    serving.load_cert_chain(str(cert), str(key))
    seen: list[tuple[str, dict[str, str], bytes]] = []
    serve = _replies(_ok(b'{"a": 1}'), _ok(b'{"a": 2}'), seen=seen)

    async def main() -> object:
        server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=serving)
        port = server.sockets[0].getsockname()[1]
        url = f"https://127.0.0.1:{port}/v1/chat/completions"
        try:
            return [json.loads((await http1.pool().post(url, [], b"{}")).text()) for _ in range(2)]
        finally:
            await http1.aclose()
            server.close()

    assert asyncio.run(main()) == [{"a": 1}, {"a": 2}]
    assert len(seen) == 2
