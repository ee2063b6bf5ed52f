"""The NL-assertion judge: one LLM call per scenario, one verdict per assertion.

The judge input numbers the assertions in an ``nl_assertions`` section next to the
transcript (prompt: ``judge_prompt.md`` beside this module). The reply is read into exactly
one ``{index, assertion, passed, reason}`` per assertion, in order.

A judge that cannot grade is never the agent's fault: a failed call (5xx or timeouts after
every retry, rejected credentials, a malformed provider reply) and a reply that does not give
a readable verdict for every assertion (empty, not JSON, no verdicts list, a missing verdict,
a non-boolean ``passed``) raise :class:`~pytest_tau2.errors.InfrastructureError` naming the
problem, so the item is an infrastructure error rather than a failed NL assertion; rejected
credentials are ``fatal`` (the run stops). A failed call is retried on its own by the LLM
client, never by re-running the conversation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, cast

from pytest_tau2.environment.jsontypes import JSONObject, JSONValue
from pytest_tau2.errors import InfrastructureError
from pytest_tau2.llm.client import acomplete
from pytest_tau2.llm.config import ModelConfig, RetryPolicy
from pytest_tau2.llm.usage import UsageMeter
from pytest_tau2.scoring.signals import JudgeOutcome

if TYPE_CHECKING:
    from pytest_tau2.llm.cassette import Cassette

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


@cache
def judge_system_prompt() -> str:
    return resources.files("pytest_tau2.scoring").joinpath("judge_prompt.md").read_text("utf-8")


def render_transcript(transcript: Sequence[Mapping[str, object]]) -> str:
    """The conversation as the judge reads it: one line per message, tool calls included."""
    lines = []
    for message in transcript:
        role = message.get("role")
        if role == "tool":
            lines.append(f"tool result ({message.get('name')}): {message.get('content')}")
            continue
        speaker = "agent" if role == "assistant" else "customer"
        if message.get("content"):
            lines.append(f"{speaker}: {message['content']}")
        for call in cast("list[Mapping[str, object]]", message.get("tool_calls") or []):
            arguments = call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
            lines.append(f"{speaker} calls tool {call['name']}({arguments})")
    return "\n".join(lines)


def judge_messages(assertions: list[str], transcript: Sequence[Mapping[str, object]]) -> list[JSONObject]:
    numbered = "\n".join(f"{i}. {text}" for i, text in enumerate(assertions))
    user = f"## transcript\n{render_transcript(transcript)}\n\n## nl_assertions\n{numbered}\n"
    return [{"role": "system", "content": judge_system_prompt()}, {"role": "user", "content": user}]


def normalize_verdicts(assertions: list[str], reply: str | None) -> list[JSONObject]:
    """Exactly one verdict per assertion, in order, whatever shape the reply has.

    An assertion without a readable verdict gets ``passed: false`` and a reason saying why;
    :func:`unreadable` lists those reasons.
    """
    return _read(assertions, reply)[0]


def unreadable(assertions: list[str], reply: str | None) -> list[str]:
    """Why some assertions have no readable verdict in ``reply`` (empty when every one has)."""
    return _read(assertions, reply)[1]


def _read(assertions: list[str], reply: str | None) -> tuple[list[JSONObject], list[str]]:
    parsed, problem = _parse(reply)
    by_index: dict[int, JSONObject] = {}
    notes: list[str] = []
    if parsed is not None:
        for position, entry in enumerate(parsed):
            if not isinstance(entry, dict):
                notes.append(f"entry {position} is not an object")
                continue
            index = _as_index(entry.get("index", position))
            if index is None or not 0 <= index < len(assertions):
                notes.append(f"entry {position} has index {entry.get('index')!r} outside 0..{len(assertions) - 1}")
                continue
            by_index.setdefault(index, entry)
    verdicts: list[JSONObject] = []
    problems = [problem] if problem is not None else []
    for index, text in enumerate(assertions):
        entry = by_index.get(index)
        missing = None
        if problem is not None:
            missing = problem
        elif entry is None:
            extra = f" ({'; '.join(notes)})" if notes else ""
            missing = f"the judge gave no verdict for assertion {index}{extra}"
        elif not isinstance(entry.get("passed"), bool):
            missing = f"the judge's 'passed' for assertion {index} is not a boolean: {entry.get('passed')!r}"
        if missing is None and entry is not None:
            verdict = (entry["passed"], str(entry.get("reason") or ""))
        else:
            missing = missing or f"the judge gave no verdict for assertion {index}"
            if problem is None:
                problems.append(missing)
            verdict = (False, missing)
        verdicts.append({"index": index, "assertion": text, "passed": verdict[0], "reason": verdict[1]})
    return verdicts, problems


def _parse(reply: str | None) -> tuple[list[JSONValue] | None, str | None]:
    if reply is None or not reply.strip():
        return None, "the judge returned an empty reply"
    text = reply.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"the judge reply is not valid JSON ({exc.msg}): {reply[:200]!r}"
    if isinstance(data, dict):
        data = data.get("verdicts", data.get("results"))
    if not isinstance(data, list):
        return None, f"the judge reply has no 'verdicts' list: {reply[:200]!r}"
    return data, None


def _as_index(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


@dataclass
class LLMJudge:
    config: ModelConfig
    retry: RetryPolicy
    usage: UsageMeter
    cassette: Cassette | None = None
    """The scenario's cassette when recording or replaying (``--tau2-record-mode``)."""

    async def judge(self, assertions: list[str], transcript: Sequence[Mapping[str, object]]) -> JudgeOutcome:
        """One verdict per assertion; raises InfrastructureError when the judge cannot grade (see module doc)."""
        messages = judge_messages(assertions, transcript)
        try:
            completion = await acomplete(
                self.config, messages, retry=self.retry, usage=self.usage, side="judge", cassette=self.cassette
            )
        except InfrastructureError as exc:
            from pytest_tau2.llm.cassette import CassetteMissError

            if isinstance(exc, CassetteMissError):
                raise  # a stale recording is the run's error, named as the cassette names it
            raise InfrastructureError(f"the NL-assertion judge failed, not the agent: {exc}", fatal=exc.fatal) from None
        verdicts, problems = _read(assertions, completion.text)
        if problems:
            reply = completion.text or ""
            raise InfrastructureError(
                f"the NL-assertion judge (model {self.config.model!r}) gave no readable verdict, "
                f"not the agent's fault: {'; '.join(problems)}; reply: {reply[:300]!r}"
            )
        return JudgeOutcome(verdicts, messages, completion.text, None, self.config.model)
