"""The cassette file: YAML with a fixed key order, literal blocks, and no repeated prefixes.

:mod:`pytest_tau2.llm.cassette` decides what to replay and record; this module turns its calls
into text and back. Requests are stored compressed (each repeats only what its side's previous
request did not hold) and read back whole, so matching always sees the request as sent.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pytest_tau2.errors import Tau2Error
from pytest_tau2.llm.secrets import redact
from pytest_tau2.storage.atomic import write_text_atomic

__all__ = [
    "FORMAT",
    "CassetteError",
    "Interaction",
    "load",
    "masked",
    "masked_data",
    "match_key",
    "ordered",
    "render_request",
    "write",
]

FORMAT = 1
SUFFIX = ".yaml"
HEADER = (
    "# pytest-tau2 cassette: the model calls of one scenario, replayed by --tau2-record-mode\n"
    "# (docs/recording.md). Credentials are masked; review and commit it like code.\n"
)


class CassetteError(Tau2Error):
    """A cassette file cannot be read: not YAML, another format, a malformed call."""


@dataclass
class Interaction:
    """One recorded call: the full request (as matched) and the reply."""

    side: str
    call: int
    request: dict[str, Any]
    reply: dict[str, Any]
    key: str


_LINE_END_BLANKS = re.compile(r"[ \t]+(?=\n|\Z)")


@functools.lru_cache(maxsize=8192)
def masked(text: str, secrets: frozenset[str] = frozenset()) -> str:
    """``text`` with credentials masked (:func:`~pytest_tau2.llm.secrets.redact`), cached.

    Every call of a conversation resends its system prompt, tool schemas and earlier messages;
    masking each text once instead of on every call is what keeps a replay near the cost of an
    offline run (bench/results/recording.md).
    """
    return redact(text, secrets)


@functools.lru_cache(maxsize=8192)
def _key_text(text: str, secrets: frozenset[str]) -> str:
    # Blanks at line ends do not count: editors and commit hooks strip them from literal blocks.
    text = masked(text, secrets)
    return _LINE_END_BLANKS.sub("", text) if " \n" in text or "\t" in text or text.endswith(" ") else text


def masked_data(value: Any, secrets: frozenset[str] = frozenset(), *, _text: Any = masked) -> Any:
    """``value`` with every string masked, walked as data (keys, numbers and structure untouched)."""
    if isinstance(value, str):
        return _text(value, secrets)
    if isinstance(value, Mapping):
        return {k: masked_data(v, secrets, _text=_text) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [masked_data(v, secrets, _text=_text) for v in value]
    return value


def match_key(request: Mapping[str, object], secrets: frozenset[str] = frozenset()) -> str:
    """The identity of a request: a hash of its canonical JSON, credentials masked.

    Masking here as well as in the file makes a live request and its recorded (masked) copy
    hash alike; so does ignoring blanks at line ends. The tools and each message are made
    canonical once per distinct text (cached): a call repeats most of the previous one.
    """
    head = {"model": request.get("model"), "args": request.get("args") or {}}
    parts = [_canonical(_dumps(head), secrets), _canonical(_dumps(request.get("tools")), secrets)]
    messages = cast("Sequence[object]", request.get("messages") or [])
    parts += [_canonical(_dumps(message), secrets) for message in messages]
    if "input" in request:  # an embedding call: the texts embedded
        parts.append(_canonical(_dumps(request["input"]), secrets))
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def _dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@functools.lru_cache(maxsize=8192)
def _canonical(text: str, secrets: frozenset[str]) -> str:
    return _dumps(masked_data(json.loads(text), secrets, _text=_key_text))


def ordered(value: Any) -> Any:
    """A copy with every mapping's keys sorted (``role`` first, so messages read naturally)."""
    if isinstance(value, Mapping):
        return {str(k): ordered(value[k]) for k in sorted(value, key=lambda k: (str(k) != "role", str(k)))}
    if isinstance(value, list | tuple):
        return [ordered(v) for v in value]
    return value


@functools.cache
def _yaml() -> tuple[Any, Any, Any]:
    """PyYAML, the dumper and the loader, made at the first cassette read or write: a run that
    records nothing never imports yaml (~12 ms; the banking domain's modules import this one)."""
    import yaml

    class _Dumper(yaml.SafeDumper):  # type: ignore[misc]
        """Safe YAML with every multi-line string as a literal block (a prompt diff is a line diff).

        PyYAML quotes a multi-line string that has blanks at a line end, which puts a whole prompt
        on one line (tau2's user-simulator guidelines have such lines). A literal block holds them
        exactly; only strings with characters a block cannot carry (control characters, other
        line separators, tabs) stay quoted. (The Python emitter: libyaml's takes no such hint.)
        """

        def ignore_aliases(self, data: object) -> bool:
            return True  # never anchors and aliases: a loaded cassette must be a plain tree (see _refuse_aliases)

        def analyze_scalar(self, scalar: str) -> Any:
            analysis = super().analyze_scalar(scalar)
            if not analysis.allow_block and "\n" in scalar and all(map(_block_safe, scalar)):
                analysis.allow_block = True
            return analysis

    def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
        # The emitter falls back to a quoted scalar where a block cannot hold the text exactly.
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)

    _Dumper.add_representer(str, _represent_str)
    return yaml, _Dumper, getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _block_safe(char: str) -> bool:
    return char == "\n" or (char.isprintable() and char not in "\x85\u2028\u2029\ufeff")


def _dump(data: object) -> str:
    yaml, dumper, _ = _yaml()
    return str(yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, width=2**20))


def render_request(request: Mapping[str, object]) -> str:
    """A request, whole, laid out as the cassette lays it out (YAML), for diffs."""
    keys = ("model", "args", "input") if "input" in request else ("model", "args", "tools", "messages")
    return _dump({key: ordered(request.get(key)) for key in keys})


def _compress(calls: list[Interaction]) -> list[dict[str, Any]]:
    """The file form: each request repeats only what its side's previous request did not hold.

    A conversation's requests grow by a few messages per call and resend the same tools, so
    storing each in full would grow quadratically with the conversation; ``base`` names the
    earlier call (``n``) whose first ``messages`` messages (and tools) this request starts with.
    """
    out: list[dict[str, Any]] = []
    last: dict[str, tuple[int, Interaction]] = {}
    for n, interaction in enumerate(calls, start=1):
        request = interaction.request
        stored: dict[str, Any] = {"model": request["model"]}
        if request.get("args"):
            stored["args"] = request["args"]
        if "input" in request:  # an embedding call: the texts, nothing to share with a conversation
            stored["input"] = request["input"]
            out.append({"n": n, "side": interaction.side, "call": interaction.call, "request": stored,
                        "reply": interaction.reply})  # fmt: skip
            continue
        messages = list(request["messages"])
        tools = request.get("tools")
        previous = last.get(interaction.side)
        if previous is not None:
            base_n, base = previous
            kept = _common_prefix(base.request["messages"], messages)
            same_tools = bool(tools) and tools == base.request.get("tools")
            if kept or same_tools:
                stored["base"] = {"n": base_n, "messages": kept, "tools": same_tools}
                messages = messages[kept:]
                if same_tools:
                    tools = None
        if tools:
            stored["tools"] = tools
        stored["messages"] = messages
        out.append(
            {"n": n, "side": interaction.side, "call": interaction.call, "request": stored, "reply": interaction.reply}
        )
        last[interaction.side] = (n, interaction)
    return out


def _common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def write(path: Path, name: str, calls: list[Interaction]) -> None:
    """Write ``calls`` atomically (a crash never leaves half a cassette)."""
    text = HEADER + _dump({"format": FORMAT, "scenario": name, "calls": _compress(calls)})
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, text)  # the umask's mode (mkstemp's 0600 would make a committed cassette private)


def load(path: Path) -> list[Interaction]:
    """Read a cassette back into full requests; a malformed file raises :class:`CassetteError`."""
    yaml, _, loader = _yaml()
    try:
        data = yaml.load(path.read_text("utf-8"), Loader=loader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CassetteError(f"cassette {path} cannot be read: {exc}") from None
    _refuse_aliases(data, path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise CassetteError(f"cassette {path}: expected 'format: {FORMAT}' at the top, found {found!r}")
    calls = data.get("calls")
    if not isinstance(calls, list):
        raise CassetteError(f"cassette {path}: 'calls' must be a list, found {type(calls).__name__}")
    out: list[Interaction] = []
    for position, entry in enumerate(calls, start=1):
        try:
            out.append(_interaction(entry, position, out))
        except (KeyError, TypeError, ValueError) as exc:
            problem = f"{type(exc).__name__}: {exc}"
            raise CassetteError(f"cassette {path}: call n={position} is malformed ({problem})") from None
    return out


def _refuse_aliases(data: object, path: Path) -> None:
    """Refuse a document in which a mapping or list is reached twice: a YAML alias (``*name``).

    Loading shares an aliased node instead of copying it, so a few hundred bytes of nested
    aliases ("billion laughs") load at once but unfold into billions of strings when walked
    (matched, masked, replayed). pytest-tau2 never writes aliases; one in a cassette is refused,
    whole, before anything walks it. The check visits each node once.
    """
    seen: set[int] = set()
    stack = [data]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict | list):
            continue
        if id(node) in seen:
            raise CassetteError(
                f"cassette {path}: uses YAML aliases (a '&anchor' reused as '*alias'); cassettes are plain "
                "trees (pytest-tau2 never writes aliases), so this file was edited or crafted: re-record it"
            )
        seen.add(id(node))
        stack.extend(node.values() if isinstance(node, dict) else node)


def _interaction(entry: object, position: int, earlier: list[Interaction]) -> Interaction:
    if not isinstance(entry, dict):
        raise TypeError(f"expected a mapping, found {type(entry).__name__}")
    if entry.get("n") != position:
        raise ValueError(f"'n' is {entry.get('n')!r}, expected {position} (calls are numbered in file order)")
    stored = entry["request"]
    reply = entry["reply"]
    if not isinstance(stored, dict) or not isinstance(reply, dict):
        raise TypeError("'request' and 'reply' must be mappings")
    if "input" in stored:  # an embedding call
        inputs = stored["input"]
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            raise TypeError("an embedding call's 'input' must be a list of strings")
        embeddings = reply.get("embeddings")
        if not isinstance(embeddings, list) or not all(isinstance(t, str) for t in embeddings):
            raise TypeError("an embedding reply's 'embeddings' must be a list of base64 strings")
        request: dict[str, Any] = {"model": str(stored["model"]), "args": dict(stored.get("args") or {})}
        request["input"] = list(inputs)
        return Interaction(str(entry["side"]), int(entry["call"]), request, reply, match_key(request))
    messages = list(stored.get("messages") or [])
    tools = stored.get("tools")
    base = stored.get("base")
    if base is not None:
        base_n = int(base["n"])
        if not 1 <= base_n < position:
            raise ValueError(f"base n={base_n} is not an earlier call")
        origin = earlier[base_n - 1].request
        messages = list(origin["messages"][: int(base["messages"])]) + messages
        if base.get("tools"):
            tools = origin.get("tools")
    request = {"model": str(stored["model"]), "args": dict(stored.get("args") or {}), "tools": tools or None}
    request["messages"] = messages
    side = str(entry["side"])
    _check_reply(reply)
    return Interaction(side, int(entry["call"]), request, reply, match_key(request))


def _check_reply(reply: Mapping[str, object]) -> None:
    """A recorded reply holds what a replay reads, of the types it reads (a tampered file says where)."""
    content = reply.get("content")
    if content is not None and not isinstance(content, str):
        raise TypeError(f"reply 'content' must be a string or null, found {type(content).__name__}")
    for name in ("model", "note"):
        if reply.get(name) is not None and not isinstance(reply.get(name), str):
            raise TypeError(f"reply {name!r} must be a string, found {type(reply.get(name)).__name__}")
    usage = reply.get("usage")
    if usage is not None and not isinstance(usage, Mapping):
        raise TypeError(f"reply 'usage' must be a mapping of token counts, found {type(usage).__name__}")
    for name, count in (usage or {}).items():
        # null: the provider sent a count that was not one (recorded as unknown, docs/recording.md)
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
            raise ValueError(f"reply usage {name!r} must be a whole number of tokens or null, found {count!r}")
    cost = reply.get("cost_usd")
    if cost is not None and (
        isinstance(cost, bool) or not isinstance(cost, int | float) or not 0 <= cost < float("inf")
    ):
        raise ValueError(f"reply 'cost_usd' must be a number or null, found {cost!r}")
    calls = reply.get("tool_calls")
    if calls is None:
        return
    if not isinstance(calls, list):
        raise TypeError(f"reply 'tool_calls' must be a list, found {type(calls).__name__}")
    for index, call in enumerate(calls, start=1):
        if not isinstance(call, Mapping):
            raise TypeError(f"tool call {index} must be a mapping, found {type(call).__name__}")
        for key in ("id", "name", "arguments"):
            if not isinstance(call.get(key), str):
                found = "nothing" if key not in call else type(call[key]).__name__
                raise ValueError(f"tool call {index} needs a string {key!r}, found {found}")
