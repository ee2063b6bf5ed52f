"""Record and replay model calls: one cassette file per scenario (and trial).

A cassette holds every model call of one scenario run (agent, user simulator and judge, in
the order they were made): the request as sent (model, the arguments that change the reply,
tools, messages) and the reply (content, tool calls, usage, cost). Calls are matched on that
request content, never on their position, so a replay gives the same replies under any
concurrency or xdist distribution. The file is YAML with a fixed key order and multi-line
strings as literal blocks, so a re-recording reads as a plain diff; credentials are masked
before anything is written.

The record modes are pytest-recording's (docs/recording.md):

- ``none``: replay only; a call that is not in the cassette raises :class:`CassetteMissError`;
- ``once``: record when the scenario has no cassette yet, else behave as ``none``;
- ``new_episodes``: replay what matches, call the model for the rest and add it;
- ``all``: call the model every time and write a fresh cassette.

Nothing here imports litellm: a replayed call never pays its import.
"""

from __future__ import annotations

import base64
import difflib
import struct
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_tau2.errors import InfrastructureError
from pytest_tau2.llm.cassette_file import (
    SUFFIX,
    CassetteError,
    Interaction,
    load,
    masked_data,
    match_key,
    ordered,
    render_request,
    write,
)
from pytest_tau2.llm.completion import Completion, ToolCallRequest
from pytest_tau2.llm.config import ModelConfig
from pytest_tau2.llm.secrets import is_secret_name

__all__ = [
    "RECORD_MODES",
    "Cassette",
    "CassetteError",
    "CassetteMissError",
    "Lookup",
    "cassette_path",
    "decode_vectors",
    "describe_mode",
    "encode_vectors",
    "reply_changing_args",
]

RECORD_MODES = ("none", "once", "new_episodes", "all")
#: An explicit "no recording", e.g. to override an ini file's mode on the command line.
OFF = "off"

#: Arguments that change how a call travels or is billed, not what the model answers. They stay
#: out of the match (and the file): a cassette recorded against one endpoint replays against any
#: other, or none. Credential-named arguments are always left out as well.
TRANSPORT_ARGS = frozenset(
    {
        "api_base",
        "base_url",
        "api_version",
        "organization",
        "timeout",
        "stream_timeout",
        "num_retries",
        "max_retries",
        "drop_params",
        "extra_headers",
        "headers",
        "metadata",
        "input_cost_per_token",
        "output_cost_per_token",
    }
)
_MAX_DIFF_LINES = 40
_MAX_DIFF_LINE = 1000  # a policy paragraph is one line; its end may be what changed


class CassetteMissError(CassetteError, InfrastructureError):
    """A model call that the cassette does not hold, in a mode that may not record it.

    An infrastructure error: the item ends as an *error* (the recording is stale, the agent
    is not at fault) and the rest of the run goes on.
    """


MODE_TEXT = {
    "none": "replay only",
    "once": "record scenarios without a cassette, replay the others",
    "new_episodes": "replay what matches, record the rest",
    "all": "call the models and re-record every cassette",
}


def describe_mode(mode: str, directory: str | Path | None, uses_models: bool = True) -> str:
    """The run header's line: ``record mode none (replay only) cassettes=DIR``."""
    if not uses_models:
        return f"record mode {mode}: no model is configured, nothing to record or replay"
    return f"record mode {mode} ({MODE_TEXT.get(mode, mode)}) cassettes={directory}"


def cassette_path(directory: str | Path, name: str) -> Path:
    """``<directory>/<domain>/<name>.yaml``; ``name`` is the scenario name (plus ``-t<k>`` for a trial)."""
    domain = name.split("__", 1)[0] if "__" in name else "other"
    return Path(directory) / domain / f"{name}{SUFFIX}"


def reply_changing_args(config: ModelConfig, response_format: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The model arguments that are part of a call's identity (temperature, seed, ...), credentials removed."""
    args = {k: v for k, v in config.args.items() if k not in TRANSPORT_ARGS}
    if response_format is not None:
        args["response_format"] = dict(response_format)
    return dict(_without_secrets(args))


def _without_secrets(value: Any) -> Any:
    """``value`` without credential arguments: strings under names such as ``api_key`` (``max_tokens`` stays)."""
    if isinstance(value, Mapping):
        return {
            str(k): _without_secrets(v) for k, v in value.items() if not (isinstance(v, str) and is_secret_name(str(k)))
        }
    if isinstance(value, list | tuple):
        return [_without_secrets(v) for v in value]
    return value


# ---- requests and replies as data ---------------------------------------------------------------


def encode_vectors(vectors: list[list[float]]) -> list[str]:
    """Each vector as base64 of little-endian float32 (what ``encoding_format=base64`` sends)."""
    return [base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode("ascii") for v in vectors]


def decode_vectors(encoded: list[str]) -> list[list[float]]:
    out = []
    for text in encoded:
        raw = base64.b64decode(text)
        out.append(list(struct.unpack(f"<{len(raw) // 4}f", raw)))
    return out


def _reply_data(completion: Completion) -> dict[str, Any]:
    reply: dict[str, Any] = {"content": completion.text}
    if completion.tool_calls:
        reply["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in completion.tool_calls]
    reply["model"] = completion.model
    counts = {"prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens}
    reply["usage"] = {name: None if name in completion.unknown_usage else n for name, n in counts.items()}
    reply["cost_usd"] = completion.cost
    if completion.note:
        reply["note"] = completion.note
    return reply


def _completion(reply: Mapping[str, Any]) -> Completion:
    usage = reply.get("usage") or {}
    cost = reply.get("cost_usd")
    return Completion(
        text=reply.get("content"),
        tool_calls=[
            ToolCallRequest(id=str(c["id"]), name=str(c["name"]), arguments=str(c["arguments"]))
            for c in reply.get("tool_calls") or []
        ],
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cost=None if cost is None else float(cost),
        model=str(reply.get("model") or ""),
        raw={},
        replayed=True,
        note=reply.get("note"),
        unknown_usage={name: None for name in ("prompt_tokens", "completion_tokens") if usage.get(name, 0) is None},
    )


@dataclass
class Lookup:
    """One call as :meth:`Cassette.lookup` saw it; ``completion`` is set when it was replayed."""

    side: str
    call: int
    request: dict[str, Any]
    key: str
    secrets: frozenset[str] = field(repr=False)  # a traceback's locals (pytest -l) must not show them
    completion: Completion | None = None
    vectors: list[list[float]] | None = None
    """The recorded vectors of an embedding call (:meth:`Cassette.lookup_embedding`)."""


# ---- the cassette ---------------------------------------------------------------------------------


@dataclass
class Cassette:
    """The recorded calls of one scenario run, and the calls this run makes.

    Open with :meth:`open` when the scenario starts, pass to every model call
    (:func:`pytest_tau2.llm.client.acomplete`), :meth:`save` when it ends.
    """

    path: Path
    mode: str
    name: str
    existed: bool = False
    recorded: list[Interaction] = field(default_factory=list)
    """What the file held when it was opened (empty in ``all`` mode)."""
    played: list[Interaction] = field(default_factory=list)
    """This run's calls in order, replayed or new."""
    new_calls: int = 0
    replayed_calls: int = 0
    _by_key: dict[str, list[int]] = field(default_factory=dict, repr=False)
    _used: set[int] = field(default_factory=set, repr=False)
    _calls: dict[str, int] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def open(cls, directory: str | Path, name: str, mode: str) -> Cassette:
        """The cassette of scenario ``name`` under ``directory``, read unless ``mode`` is ``all``."""
        if mode not in RECORD_MODES:
            raise CassetteError(f"record mode {mode!r} is not one of {', '.join(RECORD_MODES)}")
        path = cassette_path(directory, name)
        cassette = cls(path, mode, name, existed=path.is_file())
        if cassette.existed and mode != "all":
            cassette.recorded = load(path)
            for index, interaction in enumerate(cassette.recorded):
                cassette._by_key.setdefault(interaction.key, []).append(index)
        return cassette

    @property
    def replay_only(self) -> bool:
        """Whether a miss is an error (``none``, and ``once`` with an existing cassette)."""
        return self.mode == "none" or (self.mode == "once" and self.existed)

    def lookup(
        self,
        side: str,
        config: ModelConfig,
        messages: Sequence[Mapping[str, object]],
        tools: Sequence[Mapping[str, object]] | None,
        response_format: Mapping[str, object] | None = None,
    ) -> Lookup:
        """Find this call; ``Lookup.completion`` is the recorded reply, or None when it must be made.

        Raises :class:`CassetteMissError` for a miss in a replay-only mode.
        """
        request: dict[str, Any] = {"model": config.model, "args": reply_changing_args(config, response_format)}
        request["tools"] = list(tools) if tools else None
        request["messages"] = list(messages)
        found, recorded = self._find(side, request, frozenset(config.secrets()))
        if recorded is not None:
            found.completion = _completion(recorded.reply)
        return found

    def lookup_embedding(self, side: str, config: ModelConfig, inputs: list[str]) -> Lookup:
        """Find this embedding call; ``Lookup.vectors`` holds the recorded vectors, or None.

        Matched on the model, its reply-changing arguments and the texts, as a completion is.
        """
        request: dict[str, Any] = {"model": config.model, "args": reply_changing_args(config), "input": list(inputs)}
        found, recorded = self._find(side, request, frozenset(config.secrets()))
        if recorded is not None:
            found.vectors = decode_vectors(recorded.reply.get("embeddings") or [])
            found.completion = _completion({"model": recorded.reply.get("model"), "usage": recorded.reply.get("usage")})
        return found

    def _find(self, side: str, request: dict[str, Any], secrets: frozenset[str]) -> tuple[Lookup, Interaction | None]:
        with self._lock:
            call = self._calls[side] = self._calls.get(side, 0) + 1
        found = Lookup(side, call, request, match_key(request, secrets), secrets)
        if self.mode == "all":
            return found, None
        with self._lock:
            index = self._take(found.key)
            if index is not None:
                recorded = self.recorded[index]
                self.played.append(recorded)
                self.replayed_calls += 1
                return found, recorded
        if self.replay_only:
            raise CassetteMissError(self._miss_message(found))
        return found, None

    def _take(self, key: str) -> int | None:
        """The first unused recorded call with this key; the last one again once all are used."""
        indexes = self._by_key.get(key)
        if not indexes:
            return None
        for index in indexes:
            if index not in self._used:
                self._used.add(index)
                return index
        return indexes[-1]

    def record(self, lookup: Lookup, completion: Completion) -> None:
        """Add a call the model has just answered (credentials masked)."""
        request = masked_data(ordered(lookup.request), lookup.secrets)
        reply = masked_data(_reply_data(completion), lookup.secrets)
        with self._lock:
            self.played.append(Interaction(lookup.side, lookup.call, request, reply, lookup.key))
            self.new_calls += 1

    def record_embedding(self, lookup: Lookup, vectors: list[list[float]], model: str, prompt_tokens: int) -> None:
        """Add an embedding call just made: the vectors as base64 float32 (the API's own encoding)."""
        request = masked_data(ordered(lookup.request), lookup.secrets)
        reply = {"model": model, "usage": {"prompt_tokens": prompt_tokens}, "embeddings": encode_vectors(vectors)}
        with self._lock:
            self.played.append(Interaction(lookup.side, lookup.call, request, reply, lookup.key))
            self.new_calls += 1

    def save(self) -> Path | None:
        """Write the cassette if this run recorded anything; returns the path written, else None.

        ``new_episodes`` keeps every earlier call (this run's calls first, in order); ``all``
        and a first ``once`` write exactly this run's calls.
        """
        with self._lock:
            if not self.new_calls:
                return None
            calls = list(self.played)
            if self.mode == "new_episodes":
                played = {id(i) for i in calls}
                calls += [i for i in self.recorded if id(i) not in played]
        write(self.path, self.name, calls)
        return self.path

    def stats(self) -> dict[str, Any]:
        """What metrics.json says about this cassette."""
        return {
            "mode": self.mode,
            "cassette": str(self.path),
            "replayed_calls": self.replayed_calls,
            "recorded_calls": self.new_calls,
        }

    # ---- a miss, explained ------------------------------------------------------------------------

    def _miss_message(self, lookup: Lookup) -> str:
        what = f"{lookup.side} call #{lookup.call} of {self.name}"
        mode = f"record mode {self.mode!r}"
        if not self.existed:
            return (
                f"{what}: there is no cassette {self.path} ({mode} only replays); record it with "
                f"--tau2-record-mode once (or new_episodes)"
            )
        head = f"{what} is not in the cassette {self.path} ({mode})"
        fix = (
            "If the change is intended, record the missing calls with --tau2-record-mode new_episodes, "
            "or re-record the scenario with --tau2-record-mode all."
        )
        nearest = self._nearest(lookup)
        if nearest is None:
            sides = sorted({i.side for i in self.recorded}) or ["none"]
            return f"{head}: the cassette has no {lookup.side} calls (sides recorded: {', '.join(sides)}). {fix}"
        live = masked_data(ordered(lookup.request), lookup.secrets)
        diff = _diff(render_request(nearest.request), render_request(live), nearest, lookup)
        return f"{head}. Nearest recorded request: {nearest.side} call #{nearest.call}; differences:\n{diff}\n{fix}"

    def _nearest(self, lookup: Lookup) -> Interaction | None:
        candidates = [i for i in self.recorded if i.side == lookup.side]
        if not candidates:
            return None
        live = render_request(masked_data(ordered(lookup.request), lookup.secrets)).splitlines()

        def score(interaction: Interaction) -> tuple[float, bool]:
            lines = render_request(interaction.request).splitlines()
            return difflib.SequenceMatcher(None, lines, live, autojunk=False).ratio(), interaction.call == lookup.call

        return max(candidates, key=score)


def _diff(recorded: str, live: str, nearest: Interaction, lookup: Lookup) -> str:
    lines = list(
        difflib.unified_diff(
            recorded.splitlines(),
            live.splitlines(),
            f"recorded {nearest.side} call #{nearest.call}",
            f"this run's {lookup.side} call #{lookup.call}",
            n=2,
            lineterm="",
        )
    )
    shown = [line if len(line) <= _MAX_DIFF_LINE else line[: _MAX_DIFF_LINE - 3] + "..." for line in lines]
    if len(shown) > _MAX_DIFF_LINES:
        shown = [*shown[:_MAX_DIFF_LINES], f"... ({len(lines) - _MAX_DIFF_LINES} more diff lines)"]
    return "\n".join(shown)
