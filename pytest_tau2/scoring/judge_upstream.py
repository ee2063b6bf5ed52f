"""``--tau2-judge-prompt upstream``: the NL judge in the shape of tau2-bench's NL assertion evaluator.

What is the same as upstream (facts of its evaluator, tau2-reference.md §4.5): one call per
trajectory for all assertions; a system message with a TASK part (grade each expected outcome of
a conversation between an agent and a customer, individually) and a FORMAT part (a JSON object
whose ``results`` list holds, per expected outcome, ``expectedOutcome``, ``reasoning`` and
``metExpectation``); a user message with ``conversation:`` followed by one ``<role>: <content>``
line per message of the whole trajectory (greeting, tool calls with content ``None``, tool
results), then ``expectedOutcomes:`` followed by the Python list of the assertions; the model
``gpt-4.1-2025-04-14`` at temperature 0 (run/judges.py).

What is not: the prompt's sentences are this project's own words, written from those facts, not
upstream's text (the project copies no upstream prose); upstream's code is not imported (the
package may not be installed). The judge therefore sees a prompt equivalent in shape, not
byte-identical (docs/rescoring.md). And the reply is read strictly where upstream is lenient:
upstream scores an empty or missing ``results`` list as all met (its issue #554); here a reply
that does not give one verdict per assertion is the judge's failure (JudgeError), as for our
own prompt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.scoring.judge_reply import json_reply

SYSTEM_PROMPT = """TASK
- You are given a conversation recorded while a test case ran, and a list of expected outcomes.
- The two parties of the conversation are an agent and a customer.
- For every expected outcome, decide whether the agent's behaviour in the conversation meets it.
- Decide on each expected outcome separately.

FORMAT
- Answer with a single JSON object whose `results` list has one entry per expected outcome, with the keys:
- `expectedOutcome`: the expected outcome this entry grades, copied from the input
- `reasoning`: a brief justification of the decision
- `metExpectation`: `true` when the agent meets the expected outcome, otherwise `false`

The structure of the answer:
{
    "results": [
        {
            "expectedOutcome": "<an expected outcome from the input>",
            "reasoning": "<why>",
            "metExpectation": <true or false>
        }
    ]
}
"""


def render_trajectory(transcript: Sequence[Mapping[str, object]]) -> str:
    """One ``<role>: <content>`` line per message, every message (upstream's rendering, §4.5)."""
    return "\n".join(f"{message.get('role')}: {message.get('content')}" for message in transcript)


def upstream_messages(assertions: list[str], transcript: Sequence[Mapping[str, object]]) -> list[JSONObject]:
    user = f"conversation:\n{render_trajectory(transcript)}\n\nexpectedOutcomes:\n{assertions!r}\n"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def read_upstream(assertions: list[str], reply: str | None) -> tuple[list[JSONObject], list[str]]:
    """Our per-assertion verdicts from an answer in upstream's format, and what makes it unreadable.

    An entry is matched to its assertion by the echoed ``expectedOutcome`` when every entry echoes a
    different assertion exactly, else by position when there is one entry per assertion.
    """
    results, problem = _results(reply)
    if problem is not None:
        return _unjudged(assertions, problem), [problem]
    problems: list[str] = []
    entries: list[tuple[bool, str, str]] = []
    for position, entry in enumerate(results):
        if not isinstance(entry, dict):
            problems.append(f"result {position} is not an object: {entry!r}")
            continue
        met = _boolean(entry.get("metExpectation"))
        if met is None:
            problems.append(f"result {position}'s 'metExpectation' is not a boolean: {entry.get('metExpectation')!r}")
            continue
        entries.append((met, str(entry.get("reasoning") or ""), str(entry.get("expectedOutcome") or "").strip()))
    if problems:
        return _unjudged(assertions, problems[0]), problems
    order = _by_echo(assertions, entries)
    if order is None:
        if len(entries) != len(assertions):
            problem = (
                f"{len(entries)} results for {len(assertions)} expected outcome{'s' if len(assertions) != 1 else ''} "
                "whose 'expectedOutcome' does not name each one: cannot tell which result grades which"
            )
            return _unjudged(assertions, problem), [problem]
        order = list(range(len(entries)))
    verdicts: list[JSONObject] = []
    for index, text in enumerate(assertions):
        met, reason, _ = entries[order[index]]
        verdicts.append({"index": index, "assertion": text, "passed": met, "reason": reason})
    return verdicts, []


def _results(reply: str | None) -> tuple[list[object], str | None]:
    data, problem = json_reply(reply)
    if problem is not None:
        return [], problem
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list) or not results:
        # upstream reads a missing or empty list as "all met"; a judge that graded nothing never passes here
        return [], f"the judge reply has no non-empty 'results' list: {(reply or '')[:200]!r}"
    return results, None


def _boolean(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"  # upstream's pydantic model accepts these strings too
    return None


def _by_echo(assertions: list[str], entries: list[tuple[bool, str, str]]) -> list[int] | None:
    """For each assertion, the entry that echoes it (None unless each assertion is echoed exactly once)."""
    positions = {echo: i for i, (_, _, echo) in enumerate(entries)}
    if len(positions) != len(entries) or len(entries) != len(assertions):
        return None
    found = [positions.get(text.strip()) for text in assertions]
    return None if any(i is None for i in found) else [i for i in found if i is not None]


def _unjudged(assertions: list[str], problem: str) -> list[JSONObject]:
    return [{"index": i, "assertion": text, "passed": False, "reason": problem} for i, text in enumerate(assertions)]
