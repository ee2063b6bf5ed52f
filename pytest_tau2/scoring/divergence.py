"""Where a failed conversation first left the gold trajectory: the *first divergence*.

A failed scenario says *what* ended wrong (a DB diff, a missing action). This module says *where*
the conversation went wrong, deterministically and without a model call: it walks the tool calls
of the transcript in order against the scenario's gold actions and stops at the first step that no
gold path explains. Only state-changing calls (writes) can take a conversation off every gold path,
since the final DB is what is compared; a read matters when it fed a wrong write. The kinds:

- ``wrong_arguments``: a write that the gold has, called with other arguments (the gold action it
  should have matched and the argument diff are given);
- ``wrong_read``: that wrong write's values came from a read the gold does not make (the agent
  looked up another order, user, flight...): the read is the first divergence, the write it fed is
  named with it;
- ``extra_write``: a write the gold does not have (or has fewer times);
- ``missing_write``: every write matched, but a gold write never happened before the conversation
  ended (the user's stop, the agent's exit, a limit).

A write the tool refused changes no state: it is passed over when a later call made it right, and
is the divergence (``wrong_arguments``, with the tool's error) when none did. A
conversation whose writes all follow the gold has no first divergence: the failure lies elsewhere
(what the agent said, an NL assertion, how the call ended), which :func:`first_divergence` says.

Everything here is pure: plain values in, a :class:`Divergence` (or None) out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Divergence", "ToolStep", "first_divergence", "tool_steps"]

DivergenceKind = Literal["wrong_arguments", "wrong_read", "extra_write", "missing_write"]
KINDS: tuple[DivergenceKind, ...] = ("wrong_arguments", "wrong_read", "extra_write", "missing_write")


@dataclass(frozen=True)
class ToolStep:
    """One tool call of the transcript, with what it returned."""

    turn_idx: int
    side: str
    """``"agent"`` or ``"user"`` (the simulated user's own tools, telecom)."""
    name: str
    arguments: Mapping[str, object]
    result: str = ""
    error: bool = False
    history: bool = False
    """Part of the scenario's prior history (never the agent's step under test)."""

    def call(self) -> dict[str, object]:
        return {"name": self.name, "arguments": dict(self.arguments)}


@dataclass(frozen=True)
class Divergence:
    """The first step where the transcript leaves every gold path."""

    kind: DivergenceKind
    side: str
    tool: str
    turn_idx: int | None
    """The transcript turn of the divergent call; for ``missing_write``, the turn the conversation
    ended at (the write should have happened before it)."""
    call: dict[str, object] | None
    """What was called (``{"name", "arguments"}``); None for ``missing_write``."""
    gold: dict[str, object] | None
    """The gold action it should have matched: ``{"index", "name", "arguments"}``; None for ``extra_write``."""
    argument_diff: dict[str, dict[str, object]] = field(default_factory=dict)
    """Argument -> ``{"expected", "found"}`` (``"<missing>"`` for an absent one), for a mismatched call."""
    fed: dict[str, object] | None = None
    """For ``wrong_read``: the write it fed (``{"turn_idx", "name", "arguments"}``)."""
    refused: str | None = None
    """For a write the tool refused (and that was never made right later): the tool's error."""

    @property
    def group(self) -> str:
        """The failure mode this divergence belongs to: kind, tool and, for a mismatch, the arguments."""
        args = ",".join(sorted(self.argument_diff))
        return f"{self.kind}:{self.tool}" + (f"({args})" if args else "")

    def summary(self) -> str:
        """One line: where, what, and what the gold has."""
        where = f"turn {self.turn_idx}" if self.turn_idx is not None else "end of the conversation"
        who = "" if self.side == "agent" else f" (the {self.side}'s tool)"
        if self.kind == "missing_write":
            return f"missing write before {where}: gold action {self._gold_ref()} was never called{who}"
        if self.kind == "extra_write":
            return f"{where}: {self.tool}{who} is a write the gold does not have ({_show(self.call)})"
        diff = "; ".join(
            f"{name}: expected {_show(v['expected'])}, found {_show(v['found'])}"
            for name, v in self.argument_diff.items()
        )
        if self.kind == "wrong_read":
            fed = self.fed or {}
            return (
                f"{where}: the read {self.tool}{who} is off the gold path ({diff}); it fed the write "
                f"{fed.get('name')} at turn {fed.get('turn_idx')}"
            )
        refused = f"; the tool refused it: {_show(self.refused)}" if self.refused else ""
        gold = self._gold_ref()
        return f"{where}: {self.tool}{who} called with other arguments than gold action {gold} ({diff}){refused}"

    def _gold_ref(self) -> str:
        gold = self.gold or {}
        return f"#{gold.get('index')} {gold.get('name')}"

    def to_dict(self) -> dict[str, object]:
        """The ``first_divergence`` object of metrics.json."""
        return {
            "kind": self.kind,
            "side": self.side,
            "tool": self.tool,
            "turn_idx": self.turn_idx,
            "call": self.call,
            "gold": self.gold,
            "argument_diff": self.argument_diff,
            "fed": self.fed,
            "refused": self.refused,
            "group": self.group,
            "summary": self.summary(),
        }


# ---- the transcript's tool calls ------------------------------------------------------------------


def tool_steps(transcript: Sequence[Mapping[str, object]]) -> list[ToolStep]:
    """Every tool call of a saved or live transcript, in order, each with its result."""
    results: dict[tuple[str, str], Mapping[str, object]] = {}
    for message in transcript:
        if message.get("role") == "tool":
            side = "user" if message.get("requestor") == "user" else "agent"
            results[(side, str(message.get("tool_call_id") or ""))] = message
    steps: list[ToolStep] = []
    for position, message in enumerate(transcript):
        calls = message.get("tool_calls")
        if not isinstance(calls, list):
            continue
        side = "user" if message.get("role") == "user" else "agent"
        turn = message.get("turn_idx")
        for call in calls:
            if not isinstance(call, Mapping):
                continue
            result = results.get((side, str(call.get("id") or "")), {})
            steps.append(
                ToolStep(
                    turn_idx=turn if isinstance(turn, int) else position,
                    side=side,
                    name=str(call.get("name")),
                    arguments=_arguments(call.get("arguments")),
                    result=str(result.get("content") or ""),
                    error=bool(result.get("error")),
                    history=bool(message.get("history")),
                )
            )
    return steps


def _arguments(raw: object) -> Mapping[str, object]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return {"<unparsed>": raw}
    return raw if isinstance(raw, Mapping) else {}


# ---- the walk -------------------------------------------------------------------------------------


@dataclass
class _Gold:
    index: int
    side: str
    name: str
    arguments: Mapping[str, object]
    writes: bool
    matched: bool = False

    def ref(self) -> dict[str, object]:
        return {"index": self.index, "name": self.name, "arguments": dict(self.arguments)}


def first_divergence(
    gold_actions: Sequence[Mapping[str, object]],
    transcript: Sequence[Mapping[str, object]],
    writes: Callable[[str, str], bool],
) -> Divergence | None:
    """The first step of ``transcript`` that leaves every path of ``gold_actions``, or None.

    ``writes(side, tool_name)`` says whether a tool changes state (a tool's ``mutates_state``).
    Gold actions are ``{"name", "arguments", "requestor"}`` (requestor ``"user"`` for the
    simulated user's own tools, else the agent's).
    """
    gold = [
        _Gold(
            index=i,
            side="user" if action.get("requestor") == "user" else "agent",
            name=str(action.get("name")),
            arguments=_arguments(action.get("arguments")),
            writes=writes("user" if action.get("requestor") == "user" else "agent", str(action.get("name"))),
        )
        for i, action in enumerate(gold_actions)
    ]
    steps = tool_steps(transcript)
    for position, step in enumerate(steps):
        if not writes(step.side, step.name):
            continue
        pending = [g for g in gold if g.writes and not g.matched and g.side == step.side]
        exact = next((g for g in pending if g.name == step.name and same(g.arguments, step.arguments)), None)
        if exact is not None:  # the gold makes this very call (refused there too, for a gold that fails by design)
            exact.matched = True
            continue
        if step.error:
            refused = _uncorrected(step, steps[position + 1 :], pending)
            if refused is not None and not step.history:
                diff = argument_diff(refused.arguments, step.arguments)
                return Divergence(
                    "wrong_arguments", step.side, step.name, step.turn_idx, step.call(), refused.ref(), diff,
                    refused=step.result.split("\n", 1)[0],
                )  # fmt: skip
            continue
        if step.history:
            continue  # the prior history is given, never the agent's divergence
        candidates = [g for g in pending if g.name == step.name]
        if not candidates:
            return Divergence("extra_write", step.side, step.name, step.turn_idx, step.call(), None)
        best = max(candidates, key=lambda g: (_agreement(g.arguments, step.arguments), -g.index))
        diff = argument_diff(best.arguments, step.arguments)
        read = _wrong_read(steps[:position], step, diff, gold)
        if read is not None:
            read_gold = next(
                (g for g in gold if not g.writes and g.side == read.side and g.name == read.name),
                None,
            )
            read_diff = argument_diff(read_gold.arguments, read.arguments) if read_gold is not None else {}
            fed = {"turn_idx": step.turn_idx, "name": step.name, "arguments": dict(step.arguments)}
            return Divergence(
                "wrong_read",
                read.side,
                read.name,
                read.turn_idx,
                read.call(),
                read_gold.ref() if read_gold is not None else None,
                read_diff,
                fed,
            )
        return Divergence("wrong_arguments", step.side, step.name, step.turn_idx, step.call(), best.ref(), diff)
    missing = next((g for g in gold if g.writes and not g.matched), None)
    if missing is None:
        return None
    turns = [turn for m in transcript if isinstance(turn := m.get("turn_idx"), int)]
    end = max(turns) if turns else None
    return Divergence("missing_write", missing.side, missing.name, end, None, missing.ref())


def _uncorrected(failed: ToolStep, later: Sequence[ToolStep], pending: Sequence[_Gold]) -> _Gold | None:
    """The pending gold write a refused call was aiming at, when no later successful call makes it."""
    aimed = [g for g in pending if g.name == failed.name]
    if not aimed:
        return None  # a refused write the gold does not have: it changed nothing
    for step in later:
        if step.side == failed.side and step.name == failed.name and not step.error:
            aimed = [g for g in aimed if not same(g.arguments, step.arguments)]
    if len(aimed) < len([g for g in pending if g.name == failed.name]):
        return None  # a later call made (one of) them right
    return max(aimed, key=lambda g: (_agreement(g.arguments, failed.arguments), -g.index)) if aimed else None


def _wrong_read(
    before: Sequence[ToolStep], write: ToolStep, diff: Mapping[str, Mapping[str, object]], gold: Sequence[_Gold]
) -> ToolStep | None:
    """The earliest read before ``write`` that is off the gold path (the gold reads the same tool with
    other arguments) and whose result holds a value the wrong write used."""
    wrong: set[str] = set()
    for change in diff.values():
        wrong |= _leaves(change["found"]) - _leaves(change["expected"])
    found = [f for f in wrong if len(f) >= 3]  # "1", "no": too common to say where they came from
    if not found:
        return None
    for step in before:
        if step.error or step.side != write.side or writes_in(gold, step):
            continue
        gold_reads = [g for g in gold if not g.writes and g.side == step.side and g.name == step.name]
        if not gold_reads or any(same(g.arguments, step.arguments) for g in gold_reads):
            continue  # a read the gold makes too, or one it never makes: not the wrong turn
        seen = step.result + json.dumps(dict(step.arguments), default=str)
        if any(f in seen for f in found):
            return step
    return None


def writes_in(gold: Sequence[_Gold], step: ToolStep) -> bool:
    return any(g.writes and g.name == step.name and g.side == step.side for g in gold)


# ---- comparing arguments ---------------------------------------------------------------------------

MISSING = "<missing>"


def same(expected: object, found: object) -> bool:
    """Equal as the DB would see them: mappings key by key, lists in order, numbers within 1e-6."""
    if isinstance(expected, Mapping) and isinstance(found, Mapping):
        return expected.keys() == found.keys() and all(same(expected[k], found[k]) for k in expected)
    if isinstance(expected, list) and isinstance(found, list):
        return len(expected) == len(found) and all(same(a, b) for a, b in zip(expected, found, strict=True))
    if isinstance(expected, bool) or isinstance(found, bool):
        return expected is found
    if isinstance(expected, int | float) and isinstance(found, int | float):
        return math.isclose(float(expected), float(found), rel_tol=0.0, abs_tol=1e-6)
    return expected == found


def argument_diff(expected: Mapping[str, object], found: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """The arguments that differ, in the gold's order then the call's extra ones."""
    diff: dict[str, dict[str, object]] = {}
    for name in [*expected, *(k for k in found if k not in expected)]:
        want, got = expected.get(name, MISSING), found.get(name, MISSING)
        if not same(want, got):
            diff[name] = {"expected": want, "found": got}
    return diff


def _agreement(expected: Mapping[str, object], found: Mapping[str, object]) -> int:
    return sum(1 for k, v in expected.items() if k in found and same(v, found[k]))


def _leaves(value: object) -> set[str]:
    """The scalar values inside ``value``, as text (a list's items, a mapping's values)."""
    if isinstance(value, Mapping):
        return {leaf for v in value.values() for leaf in _leaves(v)}
    if isinstance(value, list):
        return {leaf for v in value for leaf in _leaves(v)}
    if value is None or value == MISSING:
        return set()
    return {value if isinstance(value, str) else json.dumps(value)}


def _show(value: object, limit: int = 100) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
