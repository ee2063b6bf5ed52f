"""The JSON in a judge's reply, for both judge prompts (judge.py, judge_upstream.py): the reply's
text, inside a Markdown code fence or not; a problem named when there is none."""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def json_reply(reply: str | None) -> tuple[object, str | None]:
    """The reply's JSON value, or None and what is wrong with it (empty, not JSON)."""
    if reply is None or not reply.strip():
        return None, "the judge returned an empty reply"
    text = reply.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"the judge reply is not valid JSON ({exc.msg}): {reply[:200]!r}"
