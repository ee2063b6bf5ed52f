"""The wire protocol between the runner and an agent bot: frame types, schemas, encode/decode.

Every frame is one WebSocket *text* message holding one JSON object with a ``type`` field.
Each type has its own JSON Schema in ``pytest_tau2/bot/schemas/<type>.schema.json``; both
sides validate every frame they receive (and this implementation validates what it sends,
so a bug shows up at the sender). Any violation raises :class:`ProtocolError` whose message
names the problem and quotes an excerpt of the frame. See docs/websocket.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any, Literal

import jsonschema

from pytest_tau2.bot.audio_wire import check_event, is_event
from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.errors import ProtocolError

PROTOCOL_VERSION = 1
"""The version this package speaks, sent in ``hello`` and ``ready``."""

RUNNER_FRAMES = ("hello", "apply_initialization", "user_message", "get_scenario_summary", "error")
"""Frame types the runner sends (the bot receives)."""
BOT_FRAMES = ("ready", "initialized", "tool_call", "agent_message", "exit", "scenario_summary", "error")
"""Frame types the bot sends (the runner receives)."""

Sender = Literal["runner", "bot"]
EXCERPT_CHARS = 300


@cache
def schema(frame_type: str) -> dict[str, Any]:
    """The JSON Schema of one frame type, as shipped in the package."""
    path = resources.files("pytest_tau2.bot").joinpath("schemas", f"{frame_type}.schema.json")
    return dict(json.loads(path.read_text("utf-8")))


@cache
def _validator(frame_type: str) -> jsonschema.protocols.Validator:
    # Built once per type: validation runs on every frame of every session.
    document = schema(frame_type)
    return jsonschema.validators.validator_for(document)(document)


def excerpt(raw: str | bytes | Mapping[str, object], limit: int = EXCERPT_CHARS) -> str:
    """A short, single-line quote of a frame for error messages."""
    if isinstance(raw, Mapping):
        text = json.dumps(raw, default=str)
    elif isinstance(raw, bytes):
        text = repr(raw[:limit])
    else:
        text = raw
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _allowed(sender: Sender) -> tuple[str, ...]:
    return RUNNER_FRAMES if sender == "runner" else BOT_FRAMES


def check_frame(frame: Any, sender: Sender, raw: str | bytes | None = None) -> dict[str, Any]:
    """Validate a decoded frame sent by ``sender``; returns it, or raises :class:`ProtocolError`."""
    quoted = excerpt(raw if raw is not None else (frame if isinstance(frame, dict) else repr(frame)))
    if not isinstance(frame, dict):
        raise ProtocolError(f"frame from the {sender} is not a JSON object: {quoted}")
    frame_type = frame.get("type")
    allowed = _allowed(sender)
    if frame_type not in allowed:
        raise ProtocolError(
            f"frame from the {sender} has type {frame_type!r}; expected one of {', '.join(allowed)}: {quoted}"
        )
    error = jsonschema.exceptions.best_match(_validator(frame_type).iter_errors(frame))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        at = f" (at '{where}')" if where else ""
        raise ProtocolError(f"{frame_type} frame from the {sender} fails its schema: {error.message}{at}: {quoted}")
    return frame


def decode(raw: str | bytes, sender: Sender) -> dict[str, Any]:
    """Parse and validate one received message (a frame, or an audio event: ``event`` instead of
    ``type``). Binary messages are refused."""
    if isinstance(raw, bytes):
        raise ProtocolError(f"binary message from the {sender}; frames are JSON text messages: {excerpt(raw)}")
    try:
        frame = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ProtocolError(
            f"frame from the {sender} is not valid JSON ({exc.msg} at {exc.pos}): {excerpt(raw)}"
        ) from None
    except RecursionError:  # json.loads recurses once per level of nesting
        raise ProtocolError(f"frame from the {sender} is nested too deeply to read: {excerpt(raw)}") from None
    if is_event(frame):  # a Media Streams event (audio_wire.py): checked by its own rules
        return check_event(frame, sender, excerpt(raw))
    try:
        return check_frame(frame, sender, raw)
    except RecursionError:  # a frame deep enough to pass the parser still breaks the schema check
        raise ProtocolError(f"frame from the {sender} is nested too deeply to check: {excerpt(raw)}") from None


def encode(frame: dict[str, Any], sender: Sender) -> str:
    """Validate and serialize one frame to send (``default=str`` turns dates into ISO text)."""
    text = json.dumps(frame, default=str)
    if is_event(frame):
        return text  # built by audio_wire.py's helpers
    # Validate what goes on the wire (dates already text), not the Python objects.
    check_frame(json.loads(text), sender, text)
    return text


def error_frame(code: str, message: str) -> JSONObject:
    """An ``error`` frame (the sender closes the connection after it)."""
    return {"type": "error", "code": code, "message": message}


def wire_arguments(arguments: Mapping[str, JSONValue] | str | None) -> JSONObject | str:
    """Tool-call arguments for a frame: a JSON object when they are one (a raw string is parsed), else the text."""
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, Mapping):
        return dict(arguments)
    text = arguments or ""
    try:
        parsed = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return text
    return parsed if isinstance(parsed, dict) else text


def close_text(exc: Exception) -> str:
    """How a WebSocket connection was closed, for messages: its close code and reason."""
    rcvd = getattr(exc, "rcvd", None)
    if rcvd is None:
        return "no close frame"
    return f"code {rcvd.code}" + (f", reason {rcvd.reason!r}" if rcvd.reason else "")
