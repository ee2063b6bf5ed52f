"""The NL-assertion judge: one LLM call per scenario, one verdict per assertion.

The judge input numbers the assertions in an ``nl_assertions`` section next to the
transcript (prompt: ``judge_prompt.md`` beside this module). The reply is read into exactly
one ``{index, assertion, passed, reason}`` per assertion, in order.

A judge that cannot grade is never the agent's fault: a failed call (5xx or timeouts after
every retry, rejected credentials, a malformed provider reply) and a reply that does not give
one readable verdict for every assertion (empty, not JSON, no verdicts list, a missing verdict,
a non-boolean ``passed``, an entry that is not an object or whose index is out of range) or
that contradicts itself (two different verdicts for one index; entries without ``index`` that
do not number exactly one per assertion, or mixed with indexed ones, so that a stray entry
would shift every verdict onto the wrong assertion) raise :class:`JudgeError` (an
:class:`~pytest_tau2.errors.InfrastructureError`) naming the problem, so the item is an
infrastructure error rather than a failed NL assertion; rejected credentials are ``fatal``
(the run stops). The error carries the judge's input and raw reply, so the pipeline saves them
(judge_result.json) and leaves the conversation's own outcome as it was. A failed call is
retried on its own by the LLM client, never by re-running the conversation.
"""

from __future__ import annotations

import json
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
from pytest_tau2.scoring.judge_reply import json_reply
from pytest_tau2.scoring.signals import JudgeOutcome

if TYPE_CHECKING:
    from pytest_tau2.llm.cassette import Cassette


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
        by_index, notes = _entries(parsed, len(assertions))
    verdicts: list[JSONObject] = []
    problems = [problem] if problem is not None else []
    problems += notes
    for index, text in enumerate(assertions):
        entry = by_index.get(index)
        missing = None
        if problem is not None:
            missing = problem
        elif entry is None:
            missing = f"the judge gave no verdict for assertion {index}"
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


def _entries(parsed: list[JSONValue], count: int) -> tuple[dict[int, JSONObject], list[str]]:
    """The reply's entries by assertion index, and what makes the reply unreadable or contradictory."""
    problems: list[str] = []
    objects = [(position, entry) for position, entry in enumerate(parsed) if isinstance(entry, dict)]
    problems += [f"entry {p} is not an object: {e!r}" for p, e in enumerate(parsed) if not isinstance(e, dict)]
    unindexed = [p for p, entry in objects if "index" not in entry]
    if unindexed and len(unindexed) < len(objects):
        problems.append(
            f"entries {_positions(unindexed)} have no 'index' while the others have one: "
            "cannot tell which assertion they grade"
        )
    elif unindexed and len(parsed) != count:
        problems.append(
            f"{len(parsed)} entries without 'index' for {count} assertion{'s' if count != 1 else ''}: "
            "cannot tell which verdict grades which assertion"
        )
    by_index: dict[int, JSONObject] = {}
    first_at: dict[int, int] = {}
    for position, entry in objects:
        index = _as_index(entry["index"]) if "index" in entry else position
        if index is None or not 0 <= index < count:
            problems.append(f"entry {position} has index {entry.get('index')!r} outside 0..{count - 1}")
            continue
        if index in by_index:
            if by_index[index].get("passed") != entry.get("passed"):
                problems.append(
                    f"entries {first_at[index]} and {position} give contradicting verdicts for assertion {index} "
                    f"(passed {by_index[index].get('passed')!r} and {entry.get('passed')!r})"
                )
            continue
        by_index[index], first_at[index] = entry, position
    return by_index, problems


def _positions(positions: list[int]) -> str:
    return ", ".join(str(p) for p in positions)


def _parse(reply: str | None) -> tuple[list[JSONValue] | None, str | None]:
    data, problem = json_reply(reply)
    if problem is not None:
        return None, problem
    if isinstance(data, dict):
        data = data.get("verdicts", data.get("results"))
    if not isinstance(data, list):
        return None, f"the judge reply has no 'verdicts' list: {(reply or '')[:200]!r}"
    return data, None


def _as_index(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


class JudgeError(InfrastructureError):
    """The judge could not grade: its call failed, or its reply gave no readable verdicts.

    ``judge_input`` (the messages sent) and ``raw_reply`` (the reply's text, None when no reply
    came) are kept for judge_result.json.
    """

    def __init__(
        self,
        message: str,
        *,
        judge_input: list[JSONObject],
        raw_reply: str | None,
        model: str,
        fatal: bool = False,
    ) -> None:
        super().__init__(message, fatal=fatal)
        self.judge_input = judge_input
        self.raw_reply = raw_reply
        self.model = model


@dataclass
class LLMJudge:
    config: ModelConfig
    retry: RetryPolicy
    usage: UsageMeter
    cassette: Cassette | None = None
    """The scenario's cassette when recording or replaying (``--tau2-record-mode``)."""
    prompt: str = "ours"
    """``--tau2-judge-prompt``: ``ours`` (judge_prompt.md) or ``upstream`` (judge_upstream.py)."""

    async def judge(self, assertions: list[str], transcript: Sequence[Mapping[str, object]]) -> JudgeOutcome:
        """One verdict per assertion; raises InfrastructureError when the judge cannot grade (see module doc)."""
        from pytest_tau2.scoring import judge_upstream

        upstream = self.prompt == "upstream"
        messages = (judge_upstream.upstream_messages if upstream else judge_messages)(assertions, transcript)
        try:
            completion = await acomplete(
                self.config, messages, retry=self.retry, usage=self.usage, side="judge", cassette=self.cassette
            )
        except InfrastructureError as exc:
            from pytest_tau2.llm.cassette import CassetteMissError

            if isinstance(exc, CassetteMissError):
                raise  # a stale recording is the run's error, named as the cassette names it
            raise JudgeError(
                f"the NL-assertion judge failed, not the agent: {exc}",
                judge_input=messages,
                raw_reply=None,
                model=self.config.model,
                fatal=exc.fatal,
            ) from None
        verdicts, problems = (judge_upstream.read_upstream if upstream else _read)(assertions, completion.text)
        if problems:
            reply = completion.text or ""
            raise JudgeError(
                f"the NL-assertion judge (model {self.config.model!r}) gave no readable verdict, "
                f"not the agent's fault: {'; '.join(problems)}; reply: {reply[:300]!r}",
                judge_input=messages,
                raw_reply=completion.text,
                model=self.config.model,
            )
        return JudgeOutcome(verdicts, messages, completion.text, None, self.config.model)
