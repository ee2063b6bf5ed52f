"""The prompt-size estimate of one conversation: what run/estimate.py falls back on when neither a
recorded run nor a cassette of the scenario exists.

Exact where it can be: the agent's and the user's system prompts with their tool schemas, each
gold action's call, the judge's prompt and assertions are tokenised with the side's model's
tokenizer (litellm's ``token_counter``; a model litellm does not know is counted with its
default, tiktoken's cl100k). Assumed where it must be, as low / mid / high:

- the conversation has ``G`` agent tool calls (the gold actions the agent makes) and ``K`` user
  turns, each answered by one agent text reply: the agent makes ``G + K`` calls, the user ``K``
  (plus its own gold tool calls), the judge one when it has assertions to grade;
- ``K`` is 2 / 3 + G/2 / 6 + G user turns;
- a user message is 15 / 30 / 60 tokens, an agent text 25 / 50 / 100, a tool result
  40 / 120 / 300 (retail's order and user records run 100-400), a tool call its gold call's size;
- every call resends the system prompt, the tools and the conversation so far: the call
  ``i`` of ``n`` sees ``i / n`` of the final conversation, so a side's prompts sum to
  ``n * (system + tools) + n * (its view of the conversation) / 2``.

bench/results/estimate_accuracy.md measures these against a recorded sweep.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pytest_tau2.environment.tools import resolve_tool
from pytest_tau2.run import participants
from pytest_tau2.scenario.base import Scenario
from pytest_tau2.settings import Settings

__all__ = ["COUNTS", "ONE_SAMPLE_SPREAD", "SHAPE", "Figures", "prompt_size_estimate"]

COUNTS = ("calls", "prompt_tokens", "completion_tokens")
ONE_SAMPLE_SPREAD = 0.25
"""A scenario recorded once may run shorter or longer next time: its range is +-25% around the
recording (an assumption, not a measurement: reruns of a model at temperature 0 still differ)."""

SHAPE: dict[str, tuple[float, float, float]] = {
    "user_message": (15, 30, 60),
    "agent_text": (25, 50, 100),
    "tool_result": (40, 120, 300),
    "judge_reply_per_assertion": (20, 40, 80),
}
"""Token sizes the estimate assumes (low, mid, high); see the module's docstring."""


@dataclass
class Figures:
    """low / mid / high of each count of one side."""

    low: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0.0))
    mid: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0.0))
    high: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0.0))

    def add(self, other: Figures) -> None:
        for mine, theirs in ((self.low, other.low), (self.mid, other.mid), (self.high, other.high)):
            for name in COUNTS:
                mine[name] += theirs[name]

    @classmethod
    def of_samples(cls, samples: Sequence[Mapping[str, float]]) -> Figures:
        """The samples' mean, their min and max widened by :data:`ONE_SAMPLE_SPREAD` when alone."""
        spread = ONE_SAMPLE_SPREAD if len(samples) == 1 else 0.0
        out = cls()
        for name in COUNTS:
            values = [float(s.get(name, 0) or 0) for s in samples]
            out.mid[name] = statistics.fmean(values)
            out.low[name] = min(values) * (1 - spread)
            out.high[name] = max(values) * (1 + spread)
        return out


def _turns(gold_calls: int) -> tuple[float, float, float]:
    return (2.0, 3.0 + gold_calls / 2, 6.0 + gold_calls)


def prompt_size_estimate(scenario: Scenario, settings: Settings) -> dict[str, Figures]:
    """``{side: Figures}`` of one conversation of ``scenario`` from its prompt sizes."""
    gold = [dict(a) for a in scenario.gold_actions() or []]
    agent_calls = [a for a in gold if (a.get("requestor") or "assistant") == "assistant"]
    user_calls = [a for a in gold if a.get("requestor") == "user"]
    agent_model, user_model, judge_model = (_model(settings, side) for side in ("agent", "user", "judge"))
    agent_system = _tokens(agent_model, scenario.get_agent_prompt(), _tools(scenario, "agent"))
    user_system = _tokens(user_model, scenario.get_user_prompt(), _tools(scenario, "user"))
    agent_call_tokens = sum(_call_tokens(agent_model, a) for a in agent_calls)
    user_call_tokens = sum(_call_tokens(user_model, a) for a in user_calls)
    g, gu = len(agent_calls), len(user_calls)
    assertions = list(scenario.nl_assertions or []) if judge_model is not None else []
    judge_system = _judge_tokens(judge_model, assertions) if assertions else 0
    out = {side: Figures() for side in ("agent", "user", "judge")}
    calling = {"agent": agent_model is not None, "user": user_model is not None, "judge": bool(assertions)}
    for i, (level, k) in enumerate(zip(("low", "mid", "high"), _turns(g), strict=True)):
        user_msg, agent_text, result = (SHAPE[name][i] for name in ("user_message", "agent_text", "tool_result"))
        talk = k * (user_msg + agent_text)  # what both sides see
        agent_view = talk + agent_call_tokens + g * result
        user_view = talk + user_call_tokens + gu * result
        n_agent, n_user = g + k, k + gu
        sides = {
            "agent": (n_agent, n_agent * agent_system + n_agent * agent_view / 2, k * agent_text + agent_call_tokens),
            "user": (n_user, n_user * user_system + n_user * user_view / 2, k * user_msg + user_call_tokens),
            "judge": (
                (1, judge_system + agent_view, len(assertions) * SHAPE["judge_reply_per_assertion"][i])
                if assertions
                else (0, 0, 0)
            ),
        }
        for side, (calls, prompt, completion) in sides.items():
            if not calling[side]:
                calls = prompt = completion = 0  # an offline side (oracle, scripted) calls no model
            getattr(out[side], level).update(calls=calls, prompt_tokens=prompt, completion_tokens=completion)
    return out


def _model(settings: Settings, side: str) -> str | None:
    kind = participants.agent_kind(settings)[0] if side == "agent" else None
    if side == "user":
        kind = participants.user_kind(settings)[0]
    if kind is not None and not kind.model_side:
        return None
    role = settings.roles.first(side)
    return role.model if role is not None else None


def _tools(scenario: Scenario, side: str) -> list[dict[str, Any]]:
    if side == "agent":
        return [resolve_tool(scenario.namespace, n).openai_schema() for n in scenario.agent_resources.tools]
    if "user" not in scenario.sides:
        return []
    return [resolve_tool(scenario.user_namespace, n).openai_schema() for n in scenario.user_resources.tools]


def _tokens(model: str | None, system: str, tools: Sequence[dict[str, Any]]) -> float:
    if model is None:
        return 0.0
    return float(_count(model, json.dumps([{"role": "system", "content": system}]), json.dumps(list(tools))))


def _call_tokens(model: str | None, action: dict[str, Any]) -> float:
    if model is None:
        return 0.0
    text = json.dumps({"name": action.get("name"), "arguments": action.get("arguments") or {}})
    return float(_count(model, json.dumps([{"role": "assistant", "content": text}]), "[]"))


def _judge_tokens(model: str | None, assertions: list[str]) -> float:
    if model is None:
        return 0.0
    from pytest_tau2.scoring.judge import judge_system_prompt

    messages = [
        {"role": "system", "content": judge_system_prompt()},
        {"role": "user", "content": "\n".join(assertions)},
    ]
    return float(_count(model, json.dumps(messages), "[]"))


@lru_cache(maxsize=4096)
def _count(model: str, messages_json: str, tools_json: str) -> int:
    """litellm's count for the model (cached: every trial of a scenario sends the same prompt)."""
    from pytest_tau2.llm.transport_litellm import import_litellm

    litellm = import_litellm()
    messages = json.loads(messages_json)
    tools = json.loads(tools_json) or None
    try:
        return int(litellm.token_counter(model=model, messages=messages, tools=tools))
    except Exception:  # a tokenizer litellm cannot load offline: its default one
        return int(litellm.token_counter(messages=messages, tools=tools))
