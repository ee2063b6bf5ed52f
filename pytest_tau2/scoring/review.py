"""A review of one conversation by a model: the agent's and the simulated user's errors.

A failed scenario's checks say what ended wrong; a review says whose error it was. A reviewing
model (any litellm model, or several: a jury, like the NL judge's) reads the scenario (the agent's
policy, the user's instructions, the gold actions, the NL assertions) and the numbered
conversation, and answers with a list of errors. Its vocabulary is tau2-bench's own review
(``tau2 review``), so the two can be compared:

- ``source``: ``agent`` or ``user``;
- ``severity``: for the agent ``critical`` (caused the failure or broke the policy) or ``minor``;
  for the user ``critical_helped`` (made the task easier than the instructions allow),
  ``critical_hindered`` (made it harder or impossible) or ``minor``; in the ``user`` mode
  (the simulated user only) ``critical`` or ``minor``;
- ``error_tags``: one or more of :data:`ERROR_TAGS`;
- ``turn_idx`` (the transcript's turn), ``quote`` (the words of that turn the error is in),
  ``reasoning`` and ``correct_behavior``.

A review never changes a verdict. A reply that is not that JSON (malformed, refusing, or
contradicting itself: an agent error with a user's severity, a turn the conversation does not
have) is a :class:`ReviewError` naming the problem; the reviewer's call failing is one too
(``fatal`` for rejected credentials). The prompt is this project's own text
(``review_prompt.md`` beside this module), written from the facts of upstream's review.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Literal

from pytest_tau2.errors import InfrastructureError
from pytest_tau2.llm.client import acomplete
from pytest_tau2.llm.config import ModelConfig, RetryPolicy
from pytest_tau2.llm.usage import UsageMeter
from pytest_tau2.scoring.judge_reply import json_reply

if TYPE_CHECKING:
    from pytest_tau2.llm.cassette import Cassette

__all__ = [
    "ERROR_TAGS", "MODES", "Review", "ReviewError", "ReviewInput", "Reviewer", "combine", "read_review",
    "review_messages",
]  # fmt: skip

ReviewMode = Literal["full", "user"]
MODES: tuple[ReviewMode, ...] = ("full", "user")
ERROR_TAGS = (
    "hallucination", "incorrect_interpretation", "guideline_violation", "revealed_info_early",
    "inconsistent_behavior", "tool_call_schema_error", "tool_call_argument_error", "irrelevant_tool_call",
    "premature_termination", "missed_required_action", "wrong_sequence", "other",
)  # fmt: skip
"""The error tags of tau2-bench's review, so that our reviews and ``tau2 review``'s can be compared."""
SEVERITIES: dict[tuple[ReviewMode, str], tuple[str, ...]] = {
    ("full", "agent"): ("critical", "minor"),
    ("full", "user"): ("critical_helped", "critical_hindered", "minor"),
    ("user", "user"): ("critical", "minor"),
}


class ReviewError(InfrastructureError):
    """The reviewer could not review: its call failed, or its reply is not a readable review."""

    def __init__(self, message: str, *, raw_reply: str | None, model: str, fatal: bool = False) -> None:
        super().__init__(message, fatal=fatal)
        self.raw_reply = raw_reply
        self.model = model


@dataclass(frozen=True)
class ReviewInput:
    """What a reviewer reads about one trial."""

    policy: str
    """The agent's system prompt (its policy)."""
    user_instructions: str
    """What the simulated user was told (its system prompt)."""
    gold_actions: Sequence[Mapping[str, object]]
    nl_assertions: Sequence[str]
    transcript: Sequence[Mapping[str, object]]
    outcome: str = ""
    """One line: how the trial was scored (the reviewer may use it; a review never changes it)."""


@dataclass
class Review:
    """One reviewer's review, or a jury's (``panel`` then holds each reviewer's)."""

    mode: ReviewMode
    reviewers: list[str]
    summary: str
    errors: list[dict[str, object]]
    panel: list[dict[str, object]] = field(default_factory=list)
    critical_user_error_votes: list[bool] = field(default_factory=list)

    @property
    def critical_user_error(self) -> bool:
        """A critical error of the simulated user (a jury: the majority of reviewers; a tie is no)."""
        votes = self.critical_user_error_votes or [_critical_user(self.errors)]
        return sum(votes) * 2 > len(votes)

    def to_dict(self) -> dict[str, object]:
        """The ``review`` object of metrics.json and review.json."""
        return {
            "mode": self.mode,
            "reviewers": list(self.reviewers),
            "summary": self.summary,
            "has_errors": bool(self.errors),
            "agent_error": any(e.get("source") == "agent" for e in self.errors),
            "user_error": any(e.get("source") == "user" for e in self.errors),
            "critical_user_error": self.critical_user_error,
            "errors": self.errors,
            **({"panel": self.panel} if self.panel else {}),
        }


def _critical_user(errors: Sequence[Mapping[str, object]]) -> bool:
    return any(e.get("source") == "user" and str(e.get("severity", "")).startswith("critical") for e in errors)


# ---- the request ---------------------------------------------------------------------------------


@cache
def review_system_prompt(mode: ReviewMode) -> str:
    text = resources.files("pytest_tau2.scoring").joinpath("review_prompt.md").read_text("utf-8")
    full, _, user = text.partition("\n<!-- user mode -->\n")
    return (full if mode == "full" else user).strip() + "\n"


def render_turns(transcript: Sequence[Mapping[str, object]]) -> str:
    """The conversation with each message's turn index, as the reviewer cites it."""
    lines = []
    for position, message in enumerate(transcript):
        turn = message.get("turn_idx", position)
        role = message.get("role")
        if role == "tool":
            who = "tool result for the " + ("user" if message.get("requestor") == "user" else "agent")
            lines.append(f"[turn {turn}] {who} ({message.get('name')}): {message.get('content')}")
            continue
        speaker = "agent" if role == "assistant" else "user"
        if message.get("content"):
            lines.append(f"[turn {turn}] {speaker}: {message['content']}")
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, Mapping):
                arguments = call.get("arguments")
                shown = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
                lines.append(f"[turn {turn}] {speaker} calls {call.get('name')}({shown})")
    return "\n".join(lines)


def review_messages(item: ReviewInput, mode: ReviewMode) -> list[dict[str, object]]:
    gold = "\n".join(
        f"- {a.get('name')}({json.dumps(a.get('arguments') or {}, ensure_ascii=False)})"
        + (" [by the user]" if a.get("requestor") == "user" else "")
        for a in item.gold_actions
    )
    assertions = "\n".join(f"- {text}" for text in item.nl_assertions)
    sections = [
        ("agent_policy", item.policy),
        ("user_instructions", item.user_instructions),
        ("gold_actions", gold or "(none)"),
        ("nl_assertions", assertions or "(none)"),
        ("outcome", item.outcome or "(not given)"),
        ("conversation", render_turns(item.transcript)),
    ]
    body = "\n\n".join(f"<{name}>\n{text.strip()}\n</{name}>" for name, text in sections)
    return [{"role": "system", "content": review_system_prompt(mode)}, {"role": "user", "content": body}]


# ---- the reply -----------------------------------------------------------------------------------


def read_review(
    reply: str | None, mode: ReviewMode, transcript: Sequence[Mapping[str, object]]
) -> tuple[str, list[dict[str, object]]]:
    """The review's summary and errors; ValueError naming what makes the reply unreadable."""
    value, problem = json_reply(reply)
    if problem is not None:
        raise ValueError(problem.replace("the judge", "the reviewer"))
    if not isinstance(value, Mapping):
        raise ValueError(f"the review is a JSON {type(value).__name__}, not an object with 'errors' and 'summary'")
    errors = value.get("errors")
    if not isinstance(errors, list):
        raise ValueError("the review has no 'errors' list")
    turns = {m.get("turn_idx", i): m for i, m in enumerate(transcript)}
    read = [_error(i, entry, mode, turns) for i, entry in enumerate(errors)]
    summary = value.get("summary")
    return (summary if isinstance(summary, str) else ""), read


def _error(
    index: int, entry: object, mode: ReviewMode, turns: Mapping[object, Mapping[str, object]]
) -> dict[str, object]:
    where = f"error {index}"
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where} is a JSON {type(entry).__name__}, not an object")
    source = entry.get("source", "user" if mode == "user" else None)
    if source not in ("agent", "user") or (mode == "user" and source != "user"):
        raise ValueError(f"{where}: source {source!r} is not one of {'user' if mode == 'user' else 'agent, user'}")
    allowed = SEVERITIES[(mode, str(source))]
    severity = entry.get("severity")
    if severity not in allowed:
        raise ValueError(f"{where}: severity {severity!r} is not one of {', '.join(allowed)} for a {source} error")
    tags = entry.get("error_tags")
    if not isinstance(tags, list) or not tags or any(t not in ERROR_TAGS for t in tags):
        raise ValueError(f"{where}: error_tags {tags!r} must be one or more of {', '.join(ERROR_TAGS)}")
    turn = entry.get("turn_idx")
    if isinstance(turn, bool) or not isinstance(turn, int) or turn not in turns:
        raise ValueError(f"{where}: turn_idx {turn!r} is not a turn of the conversation")
    spoken = turns[turn]
    speaker = "agent" if spoken.get("role") == "assistant" else "user" if spoken.get("role") == "user" else None
    if speaker is not None and speaker != source and not spoken.get("tool_calls"):
        raise ValueError(f"{where}: a {source} error at turn {turn}, which the {speaker} spoke")
    quote = entry.get("quote")
    quote = quote if isinstance(quote, str) else ""
    said = json.dumps(spoken, ensure_ascii=False) if spoken.get("tool_calls") else str(spoken.get("content") or "")
    return {
        "source": source,
        "error_tags": list(tags),
        "severity": severity,
        "turn_idx": turn,
        "quote": quote,
        "quote_found": bool(quote) and _squash(quote) in _squash(said),
        "reasoning": str(entry.get("reasoning") or ""),
        "correct_behavior": str(entry.get("correct_behavior") or ""),
    }


def _squash(text: str) -> str:
    return " ".join(text.split()).casefold()


# ---- the reviewer --------------------------------------------------------------------------------


@dataclass
class Reviewer:
    """One reviewing model or a jury of them (``configs`` in order; ``labels`` name each)."""

    configs: Sequence[ModelConfig]
    labels: Sequence[str]
    retry: RetryPolicy
    usage: UsageMeter
    mode: ReviewMode = "full"
    cassette: Cassette | None = None

    async def review(self, item: ReviewInput) -> Review:
        messages = review_messages(item, self.mode)
        reviews = [
            await self._one(config, label, messages, item)
            for config, label in zip(self.configs, self.labels, strict=True)
        ]
        return reviews[0] if len(reviews) == 1 else combine(self.mode, reviews)

    async def _one(
        self, config: ModelConfig, label: str, messages: list[dict[str, object]], item: ReviewInput
    ) -> Review:
        try:
            completion = await acomplete(
                config,
                messages,
                retry=self.retry,
                usage=self.usage,
                side="review",
                cassette=self.cassette,
            )
        except InfrastructureError as exc:
            raise ReviewError(
                f"the reviewer {label!r} could not be called: {exc}",
                raw_reply=None,
                model=config.model,
                fatal=exc.fatal,
            ) from None
        try:
            summary, errors = read_review(completion.text, self.mode, item.transcript)
        except ValueError as exc:
            reply = completion.text or ""
            raise ReviewError(
                f"the reviewer {label!r} gave no readable review: {exc}; reply: {reply[:300]!r}",
                raw_reply=completion.text,
                model=config.model,
            ) from None
        return Review(self.mode, [label], summary, errors)


def combine(mode: ReviewMode, reviews: Sequence[Review]) -> Review:
    """A jury's review: every reviewer's errors (each naming its reviewer), the majority on whether
    the simulated user erred critically (a tie is no), each review kept in ``panel``."""
    errors = [{**error, "reviewer": r.reviewers[0]} for r in reviews for error in r.errors]
    summary = " | ".join(f"{r.reviewers[0]}: {r.summary}" for r in reviews if r.summary)
    panel = [r.to_dict() for r in reviews]
    votes = [r.critical_user_error for r in reviews]
    return Review(mode, [r.reviewers[0] for r in reviews], summary, errors, panel, votes)
