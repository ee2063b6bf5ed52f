"""A loopback OpenAI-compatible chat-completions server owned by the tests.

Tests script it per model name::

    with FakeOpenAIServer() as server:
        server.add_handler("agent", sequence(tool_calls([("get_order", {"id": 1})]), text("Done.")))
        ...  # litellm.acompletion(model="openai/agent", api_base=server.base_url, ...)
        assert len(server.requests_for("agent")) == 2

It can answer as real models do, not only as the oracle would: tool arguments as JSON strings
(as OpenAI-compatible APIs send them), several tool calls in one message with text beside them,
ids that repeat or are missing (:func:`tool_calls` with ``ids=``), a judge that answers in this
project's format or badly (:func:`judge_reply`, :func:`judge_answer`), and usage blocks of every
shape (``usage=``: missing, null, negative, non-numeric counts; :data:`NO_USAGE`).

``POST /v1/chat/completions`` (non-streaming) is served as scripted, ``POST /v1/audio/speech``
and ``/v1/audio/transcriptions`` as tests/support/fake_audio.py says, and ``POST
/v1/embeddings`` with deterministic vectors (:func:`bag_of_words`: a hashed bag of words, so
texts that share words are near and a retrieval order is meaningful).  Every response
goes out in a single ``sendall`` on a ``TCP_NODELAY`` socket: the stock
``http.server`` writes headers and body separately, and on a keep-alive
connection Nagle's algorithm plus the client's delayed ACK then add ~40 ms to
every reply, which would dominate the concurrency benchmark.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import re
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support import fake_audio

__all__ = [
    "EMBEDDING_DIMENSIONS",
    "MISSING_ID",
    "NO_USAGE",
    "FakeOpenAIServer",
    "Handler",
    "Reply",
    "bag_of_words",
    "drop",
    "error",
    "hang",
    "judge_answer",
    "judge_assertions",
    "judge_reply",
    "raw",
    "sequence",
    "text",
    "tool_calls",
    "with_usage",
]

MISSING_ID = "<no id>"
"""In ``tool_calls(ids=...)``: the call is sent without an ``id`` key at all."""
NO_USAGE = "<no usage>"
"""As ``usage=``: the reply has no ``usage`` key at all."""


@dataclass(frozen=True)
class Reply:
    """What the server does for one request.

    Build replies with the helpers (:func:`text`, :func:`tool_calls`,
    :func:`error`, :func:`hang`, :func:`drop`) rather than by hand.
    """

    status: int = 200
    content: str | None = None
    # (name, raw JSON arguments string) pairs, in the order the model "called" them.
    tool_calls: tuple[tuple[str, str], ...] = ()
    error_message: str | None = None
    delay_s: float = 0.0
    drop: bool = False
    headers: tuple[tuple[str, str], ...] = ()
    body: str | None = None
    """Sent verbatim as the response body (see :func:`raw`)."""
    ids: tuple[str | None, ...] | None = None
    """The tool calls' ids, one per call: a string (repeats allowed), None (``"id": null``) or
    :data:`MISSING_ID` (no ``id`` key); None here: ``call_<n>``, unique per server."""
    usage: Any = None
    """The ``usage`` block sent as is (any JSON value, :data:`NO_USAGE` for none); None here:
    counts estimated from the request and reply."""


Handler = Callable[[dict[str, Any]], Reply]
Matcher = Callable[[dict[str, Any]], bool]


def text(content: str) -> Reply:
    """A plain assistant message."""
    return Reply(content=content)


def tool_calls(
    calls: Iterable[tuple[str, Any]], content: str | None = None, *, ids: Sequence[str | None] | None = None
) -> Reply:
    """An assistant message calling tools; ids are ``call_<n>``, unique per server, unless ``ids``.

    Arguments may be a dict (serialised as JSON, as real APIs send it: a string) or a raw string
    sent verbatim, which lets a test send malformed JSON such as ``'{"a": '``. ``ids`` gives each
    call its id as a model might: the same one twice, ``None`` (sent as ``null``) or
    :data:`MISSING_ID` (no ``id`` key).
    """
    pairs = tuple((name, args if isinstance(args, str) else json.dumps(args)) for name, args in calls)
    if ids is not None and len(ids) != len(pairs):
        raise ValueError(f"tool_calls(): {len(ids)} ids for {len(pairs)} calls")
    return Reply(content=content, tool_calls=pairs, ids=tuple(ids) if ids is not None else None)


def with_usage(reply: Reply, usage: Any) -> Reply:
    """``reply`` with this ``usage`` block (a dict of any shape, ``None`` for ``"usage": null``,
    :data:`NO_USAGE` for no usage key)."""
    return replace(reply, usage=_NULL_USAGE if usage is None else usage)


_NULL_USAGE = "<usage: null>"


# ---- the judge, in this project's format and badly ---------------------------------------------------

_NL_SECTION = re.compile(r"## nl_assertions\n(.*)\Z", re.DOTALL)
_NUMBERED = re.compile(r"^(\d+)\. (.*)$")


def judge_assertions(request: dict[str, Any]) -> list[str]:
    """The numbered assertions a judge request asks about (its ``## nl_assertions`` section)."""
    for message in request.get("messages", []):
        found = _NL_SECTION.search(str(message.get("content") or "")) if message.get("role") == "user" else None
        if found:
            return [m.group(2) for line in found.group(1).splitlines() if (m := _NUMBERED.match(line))]
    return []


def judge_reply(entries: Sequence[dict[str, Any]] | Any, *, fenced: bool = False) -> Reply:
    """A judge's text reply: ``{"verdicts": entries}`` (a list), or any JSON value as given."""
    body = json.dumps({"verdicts": list(entries)} if isinstance(entries, (list, tuple)) else entries)
    return text(f"```json\n{body}\n```" if fenced else body)


JUDGE_SHAPES = (
    "ok",
    "fenced",
    "unindexed",
    "empty",
    "not_json",
    "no_list",
    "missing",
    "not_boolean",
    "duplicate_index",
    "stray_entry",
    "extra_entry",
)


def judge_answer(request: dict[str, Any], shape: str = "ok", *, passed: bool = True) -> Reply:
    """What a judge answers to ``request``, in one of :data:`JUDGE_SHAPES`.

    ``ok``: one ``{index, passed, reason}`` per assertion (this project's format); ``fenced``:
    the same in a code fence; ``unindexed``: the entries without ``index``, in order; then the
    bad ones: an empty reply, text that is not JSON, an object without a list, the last verdict
    missing, ``passed: "yes"``, the first index given twice (contradicting verdicts), a stray
    entry without index ahead of unindexed verdicts (every one shifted by one), and one verdict
    more than there are assertions.
    """
    n = len(judge_assertions(request))
    good = [{"index": i, "passed": passed, "reason": "the transcript shows it"} for i in range(n)]
    if shape == "ok":
        return judge_reply(good)
    if shape == "fenced":
        return judge_reply(good, fenced=True)
    if shape == "unindexed":
        return judge_reply([{k: v for k, v in e.items() if k != "index"} for e in good])
    if shape == "empty":
        return text("")
    if shape == "not_json":
        return text("All assertions hold." if passed else "The agent failed.")
    if shape == "no_list":
        return judge_reply({"verdict": passed})
    if shape == "missing":
        return judge_reply(good[:-1])
    if shape == "not_boolean":
        return judge_reply([{**e, "passed": "yes"} for e in good])
    if shape == "duplicate_index":
        return judge_reply([*good, {"index": 0, "passed": not passed, "reason": "on second thought"}])
    if shape == "stray_entry":
        stray = {"passed": not passed, "reason": "a note, not a verdict"}
        return judge_reply([stray, *({k: v for k, v in e.items() if k != "index"} for e in good)])
    if shape == "extra_entry":
        return judge_reply([*good, {"index": n, "passed": passed, "reason": "an assertion nobody asked about"}])
    raise ValueError(f"judge_answer(): unknown shape {shape!r}; known: {', '.join(JUDGE_SHAPES)}")


def error(status: int, message: str, *, headers: Iterable[tuple[str, str]] = ()) -> Reply:
    """An OpenAI-shaped error body with the given HTTP status."""
    return Reply(status=status, error_message=message, headers=tuple(headers))


def raw(body: str | dict[str, Any], status: int = 200) -> Reply:
    """A response body sent as is: a dict as JSON (``{"choices": []}``), a string verbatim (``"<html>"``)."""
    return Reply(status=status, body=body if isinstance(body, str) else json.dumps(body))


def hang(seconds: float, then: Reply | None = None) -> Reply:
    """Sleep ``seconds`` before answering (with ``then``, default a text reply).

    The sleep is cut short when the server stops, so a hanging test never
    delays teardown.
    """
    base = then if then is not None else text("(late reply)")
    return Reply(
        status=base.status,
        content=base.content,
        tool_calls=base.tool_calls,
        error_message=base.error_message,
        delay_s=base.delay_s + seconds,
        drop=base.drop,
        headers=base.headers,
        body=base.body,
        ids=base.ids,
        usage=base.usage,
    )


def drop() -> Reply:
    """Close the connection without sending anything."""
    return Reply(drop=True)


class SequenceExhaustedError(RuntimeError):
    """A ``sequence(..., repeat_last=False)`` handler was called once too often."""


def sequence(*replies: Reply, repeat_last: bool = True) -> Handler:
    """A handler serving ``replies`` in order, one per request.

    After the last one it keeps repeating it, or raises when
    ``repeat_last=False`` (the server then answers HTTP 500 and records the
    exception in :attr:`FakeOpenAIServer.handler_errors`).
    """
    if not replies:
        raise ValueError("sequence() needs at least one reply")
    lock = threading.Lock()
    served = itertools.count()

    def handler(request: dict[str, Any]) -> Reply:
        with lock:
            index = next(served)
        if index < len(replies):
            return replies[index]
        if repeat_last:
            return replies[-1]
        raise SequenceExhaustedError(
            f"sequence of {len(replies)} replies exhausted: request #{index + 1} for model {request.get('model')!r}"
        )

    return handler


EMBEDDING_DIMENSIONS = 256


def bag_of_words(text_: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """A unit vector: each lower-cased word adds 1 at a position hashed from it (sha256)."""
    vector = [0.0] * dimensions
    for word in re.findall(r"[a-z0-9]+", text_.lower()):
        vector[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little") % dimensions] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def _embedding_body(request: dict[str, Any]) -> dict[str, Any]:
    inputs = request.get("input")
    texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
    dimensions = int(request.get("dimensions") or EMBEDDING_DIMENSIONS)
    data = []
    for index, item in enumerate(texts):
        vector = bag_of_words(str(item), dimensions)
        if request.get("encoding_format") == "base64":  # the OpenAI SDK's default: float32, little-endian
            encoded: Any = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
        else:
            encoded = vector
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    tokens = sum(_approx_tokens(str(t)) for t in texts)
    return {
        "object": "list",
        "data": data,
        "model": request.get("model"),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def _strip_provider(model: str) -> str:
    # litellm strips "openai/" before sending; tolerate callers that did not.
    return model.removeprefix("openai/")


@dataclass
class _Route:
    matcher: Matcher
    handler: Handler
    label: str


@dataclass
class _State:
    """Everything the request-handler threads share, guarded by ``lock``."""

    latency_s: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    routes: list[_Route] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    embedding_requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    handler_errors: list[BaseException] = field(default_factory=list)
    call_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    limiter: _RateLimiter | None = None
    refused: int = 0
    audio: fake_audio.FakeAudio = field(default_factory=fake_audio.FakeAudio)

    def next_call_id(self) -> str:
        with self.lock:
            return f"call_{next(self.call_ids)}"


class _RateLimiter:
    """A token bucket: ``rate`` requests a second, at most ``burst`` at once; beyond that a 429 that
    says when the next request would be admitted (``Retry-After`` in whole seconds, rounded up,
    and, with ``retry_after_ms``, the exact ``retry-after-ms``)."""

    def __init__(self, rate: float, burst: float, retry_after_ms: bool) -> None:
        self.rate, self.burst, self.retry_after_ms = rate, burst, retry_after_ms
        self.level = burst
        self.stamp = time.monotonic()
        self.lock = threading.Lock()

    def admit(self) -> float | None:
        """None when admitted, else the seconds until a request would be."""
        with self.lock:
            now = time.monotonic()
            self.level = min(self.burst, self.level + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.level >= 1.0:
                self.level -= 1.0
                return None
            return (1.0 - self.level) / self.rate if self.rate > 0 else 60.0

    def refusal(self, wait: float) -> Reply:
        headers = [("Retry-After", str(max(1, math.ceil(wait))))]
        if self.retry_after_ms:
            headers.append(("retry-after-ms", f"{wait * 1000:.0f}"))
        return error(429, f"fake_openai: rate limit of {self.rate:g} requests per second reached", headers=headers)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # listen() backlog: socketserver's default of 5 drops the SYNs of a client that opens dozens of
    # connections at once (high --tau2-concurrency), which then wait out TCP's 1-2-4-8-16 s retries.
    request_queue_size = 1024
    # Hanging handler threads must not block stop(); they are daemons anyway.
    block_on_close = False

    def __init__(self, state: _State) -> None:
        self.state = state
        self.open_sockets: set[socket.socket] = set()
        self._sockets_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _RequestHandler)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, addr = super().get_request()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._sockets_lock:
            self.open_sockets.add(sock)
        return sock, addr

    def shutdown_request(self, request: Any) -> None:
        with self._sockets_lock:
            self.open_sockets.discard(request)
        super().shutdown_request(request)

    def close_open_connections(self) -> None:
        """Wake threads parked on idle keep-alive connections so they exit."""
        with self._sockets_lock:
            sockets = list(self.open_sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        # Silence per-request stderr lines; tests assert on server.requests instead.
        pass

    def do_POST(self) -> None:
        path = self.path.rstrip("/")
        if path.endswith(("/audio/speech", "/audio/transcriptions")):  # tests/support/fake_audio.py
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            fake_audio.send(self, *self.server.state.audio.answer(path, body))
            return
        if path not in ("/v1/chat/completions", "/chat/completions", "/v1/embeddings", "/embeddings"):
            self._send_json(404, _error_body(404, f"fake_openai: no route for POST {self.path}"))
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length) or b"{}")
        except (ValueError, json.JSONDecodeError) as exc:
            self._send_json(400, _error_body(400, f"fake_openai: request body is not JSON: {exc}"))
            return
        state = self.server.state
        if path.endswith("/embeddings"):
            with state.lock:
                state.embedding_requests.append(request)
            self._send_json(200, _embedding_body(request))
            return
        limiter = state.limiter
        wait = limiter.admit() if limiter is not None else None
        if limiter is not None and wait is not None:
            with state.lock:
                state.refused += 1
            self._deliver(request, limiter.refusal(wait), latency=False)
            return
        with state.lock:
            state.requests.append(request)
            state.headers.append({name.lower(): value for name, value in self.headers.items()})
        reply = self._resolve(request)
        if reply is None:
            return
        self._deliver(request, reply)

    def _resolve(self, request: dict[str, Any]) -> Reply | None:
        state = self.server.state
        try:
            return _pick_handler(state, request)(request)
        # A scripting bug in the test: answer 500 and keep it for assertions.
        except Exception as exc:
            with state.lock:
                state.handler_errors.append(exc)
            self._send_json(500, _error_body(500, f"fake_openai handler raised {exc!r}"))
            return None

    def _deliver(self, request: dict[str, Any], reply: Reply, *, latency: bool = True) -> None:
        state = self.server.state
        delay = (state.latency_s if latency else 0.0) + reply.delay_s
        if delay > 0 and state.stopping.wait(delay):
            self.close_connection = True
            return
        if reply.drop:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:  # the client already hung up
                pass
            return
        if reply.body is not None:
            self._send_json(reply.status, reply.body, reply.headers)
            return
        if reply.error_message is not None or reply.status >= 400:
            body = _error_body(reply.status, reply.error_message or "error")
        else:
            body = _completion_body(request, reply, state.next_call_id)
        self._send_json(reply.status, body, reply.headers)

    def _send_json(
        self,
        status: int,
        body: dict[str, Any] | str,
        extra_headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        payload = (body if isinstance(body, str) else json.dumps(body)).encode()
        try:
            reason = HTTPStatus(status).phrase
        except ValueError:
            reason = "Unknown"
        keep_alive = not self.close_connection
        lines = [
            f"HTTP/1.1 {status} {reason}",
            "Content-Type: application/json",
            f"Content-Length: {len(payload)}",
            f"Connection: {'keep-alive' if keep_alive else 'close'}",
            *(f"{name}: {value}" for name, value in extra_headers),
        ]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        try:
            # One write per response: see the module docstring (Nagle + delayed ACK).
            self.connection.sendall(head + payload)
        except OSError:
            # The client gave up (timeout) and closed the socket: nothing to tell it.
            self.close_connection = True


def _pick_handler(state: _State, request: dict[str, Any]) -> Handler:
    with state.lock:
        routes = list(state.routes)
    # Latest registration wins, so a test can override a fixture's default route.
    for route in reversed(routes):
        if route.matcher(request):
            return route.handler
    labels = [route.label for route in routes]
    model = request.get("model")

    def unmatched(_: dict[str, Any]) -> Reply:
        return error(
            400,
            f"fake_openai: no handler registered for model {model!r}; "
            f"registered: {labels}. Call server.add_handler({model!r}, ...).",
        )

    return unmatched


def _approx_tokens(text_: str) -> int:
    return max(1, len(text_) // 4)


def _completion_body(request: dict[str, Any], reply: Reply, next_call_id: Callable[[], str]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        ids: Sequence[str | None] = reply.ids if reply.ids is not None else [next_call_id() for _ in reply.tool_calls]
        message["tool_calls"] = []
        for (name, arguments), call_id in zip(reply.tool_calls, ids, strict=True):
            call: dict[str, Any] = {"id": call_id} if call_id != MISSING_ID else {}
            call.update({"type": "function", "function": {"name": name, "arguments": arguments}})
            message["tool_calls"].append(call)
    prompt_tokens = _approx_tokens(json.dumps(request.get("messages", [])))
    completion_tokens = _approx_tokens((reply.content or "") + "".join(name + args for name, args in reply.tool_calls))
    usage: Any = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if reply.usage is not None:
        usage = None if reply.usage == _NULL_USAGE else reply.usage
    body = {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(request.get("model", "")),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": usage,
    }
    if reply.usage == NO_USAGE:
        del body["usage"]
    return body


def _error_body(status: int, message: str) -> dict[str, Any]:
    kind = "invalid_request_error" if status < 500 else "server_error"
    if status == 429:
        kind = "rate_limit_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": str(status)}}


class FakeOpenAIServer:
    """An OpenAI-compatible ``/v1/chat/completions`` server on 127.0.0.1.

    ``latency_s`` is slept before every reply (simulates model think time).
    Use as a context manager or call :meth:`start` / :meth:`stop`.
    """

    def __init__(self, latency_s: float = 0.0) -> None:
        self._state = _State(latency_s=latency_s)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        """Bind a free port and serve in a background thread."""
        if self._server is not None:
            return self
        self._state.stopping.clear()
        self._server = _Server(self._state)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut short hanging replies and close idle connections."""
        server, self._server = self._server, None
        if server is None:
            return
        self._state.stopping.set()
        server.shutdown()
        server.close_open_connections()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addressing --------------------------------------------------------
    @property
    def port(self) -> int:
        """The bound TCP port (server must be started)."""
        if self._server is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return int(self._server.server_address[1])

    @property
    def audio(self) -> fake_audio.FakeAudio:
        """The audio endpoints' state (tests/support/fake_audio.py)."""
        return self._state.audio

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``: pass as litellm's ``api_base``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ---------------------------------------------------------
    def add_handler(self, model: str | Matcher, handler: Handler | Reply) -> None:
        """Route requests for ``model`` (a name, or a predicate over the request JSON).

        ``handler`` receives the parsed request and returns a :class:`Reply`;
        a bare :class:`Reply` is served for every matching request.  The most
        recently added matching route wins.
        """
        if isinstance(handler, Reply):
            handler = _constant(handler)
        if isinstance(model, str):
            name = _strip_provider(model)
            matcher = _model_matcher(name)
            label = name
        else:
            matcher, label = model, getattr(model, "__name__", repr(model))
        with self._state.lock:
            self._state.routes.append(_Route(matcher, handler, label))

    def rate_limit(self, per_second: float | None, *, burst: float | None = None, retry_after_ms: bool = True) -> None:
        """Admit ``per_second`` chat-completion requests a second (a token bucket holding ``burst``,
        default a tenth of a second's worth, at least 1) and answer the rest at once with 429 and
        ``Retry-After`` (plus ``retry-after-ms`` unless told not to); refused requests are not in
        :attr:`requests` (see :attr:`refused`). ``None`` lifts the limit; ``0`` refuses everything."""
        if per_second is None:
            self._state.limiter = None
            return
        size = burst if burst is not None else max(1.0, per_second / 10)
        self._state.limiter = _RateLimiter(per_second, size, retry_after_ms)

    @property
    def refused(self) -> int:
        """How many chat-completion requests the rate limit refused (:meth:`rate_limit`)."""
        with self._state.lock:
            return self._state.refused

    # -- inspection --------------------------------------------------------
    @property
    def requests(self) -> list[dict[str, Any]]:
        """A snapshot of every request body received, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        """A snapshot of every ``/v1/embeddings`` request body, in arrival order (not in :attr:`requests`)."""
        with self._state.lock:
            return list(self._state.embedding_requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """The HTTP headers of every request, names lower-cased, in the order of :attr:`requests`."""
        with self._state.lock:
            return list(self._state.headers)

    def requests_for(self, model: str) -> list[dict[str, Any]]:
        """The received requests whose ``model`` is ``model`` (``openai/`` prefix ignored)."""
        name = _strip_provider(model)
        return [r for r in self.requests if _strip_provider(str(r.get("model", ""))) == name]

    @property
    def handler_errors(self) -> list[BaseException]:
        """Exceptions raised by handlers (each was answered with HTTP 500)."""
        with self._state.lock:
            return list(self._state.handler_errors)


def _model_matcher(name: str) -> Matcher:
    def matches(request: dict[str, Any]) -> bool:
        return _strip_provider(str(request.get("model", ""))) == name

    return matches


def _constant(reply: Reply) -> Handler:
    return lambda _request: reply
