"""tau2-bench's own reward for one finished tau2 scenario, beside the six-signal verdict.

Upstream (pin ``a2c0247``, docs: shared tau2-reference.md sections 4 and 5.3) scores a
simulation as the product of the components named in the task's ``reward_basis``:

- ``DB``: the final DB equals the gold replay's (the DB_STATE_MATCH hashes);
- ``ENV_ASSERTION``: every env assertion holds on the final state (telecom; our DB-state
  predicates are the same functions evaluated on the same final DBs);
- ``ACTION``: every gold action is matched by some tool call of either side (upstream's
  ActionEvaluator rule, which ACTION_MATCH of the tau2 ports implements);
- ``COMMUNICATE``: every ``communicate_info`` string occurs in some agent message (computed
  here, from the transcript);
- ``NL_ASSERTION``: every NL assertion was judged met (the same per-assertion verdicts the
  NL_ASSERTION signal uses: no second judge call).

Before any of that, the termination rule: a conversation that did not end by an agent or user
stop scores 0.0 and no component is evaluated. The conversation scored is the one upstream would
have had (:func:`upstream_ending`): a user message carrying a stop token ends it, so what our
closing turn did after it (``--tau2-prompts seed``) counts for nothing here.

Where this module differs from upstream, on purpose:

- A component that could not be evaluated (NL assertions with no judge configured, which is
  every offline run) is ``None`` in the breakdown, listed in ``not_evaluated`` with its reason,
  and left out of the product. The reward is then the product of the evaluated components;
  :attr:`Tau2Reward.complete` is False and the reward is not comparable with a leaderboard
  number. Upstream has no such state (it always has a judge).
- A judge that cannot grade (down, unreadable reply) is the item's infrastructure error, as in
  upstream (where it is retried and finally dropped from the metrics): there is then no reward.

Everything here is pure: plain values in, a :class:`Tau2Reward` out. No pytest, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from pytest_tau2.conversation.protocol import STOP_TOKENS

REWARD_TYPES = ("DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION")
"""Upstream's ``RewardType`` values, in the order the breakdown lists them."""
DEFAULT_REWARD_BASIS = ("DB", "COMMUNICATE")
"""Upstream's basis for a task whose criteria omit ``reward_basis`` (no task at the pin does)."""

SCORED_STOP_REASONS = frozenset({"exit", "transfer", "user_stop"})
"""The loop's stop reasons that upstream scores. ``exit`` is the agent ending the call itself
(upstream's AGENT_STOP); ``user_stop`` is a user stop token (USER_STOP); ``transfer`` is the
agent handing over to a human, which upstream's user answers with ``###TRANSFER###`` (a
USER_STOP). Every other reason (``max_turns``, ``max_duration``, ``too_many_tool_errors``,
``error``) scores 0.0, like upstream's MAX_STEPS, TOO_MANY_ERRORS and TIMEOUT."""


def upstream_ending(
    stop_reason: str, transcript: Sequence[Mapping[str, object]]
) -> tuple[str, list[Mapping[str, object]]]:
    """``(stop reason, transcript)`` as upstream's orchestrator would have ended the conversation:
    at the first user text message (not one of a prior history, not one with tool calls) that
    carries a stop token, which is then a ``user_stop``; everything after it is dropped (the agent's
    closing turn). A conversation without a user stop is returned as it is."""
    for index, message in enumerate(transcript):
        content = message.get("content")
        if (
            message.get("role") == "user"
            and not message.get("history")
            and not message.get("tool_calls")
            and isinstance(content, str)
            and any(token in content for token in STOP_TOKENS)
        ):
            return "user_stop", list(transcript[: index + 1])
    return stop_reason, list(transcript)


@dataclass(frozen=True)
class CommunicateCheck:
    """One ``communicate_info`` string and the first agent message (turn index) that said it."""

    info: str
    met: bool
    turn_idx: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {"info": self.info, "met": self.met, "turn_idx": self.turn_idx}


@dataclass(frozen=True)
class Tau2Reward:
    """The reward, its per-component breakdown, and why each failing component failed."""

    reward: float
    """1.0 or 0.0: the product of the evaluated components of the basis."""
    basis: tuple[str, ...]
    breakdown: dict[str, float | None]
    """Component -> 1.0 / 0.0, or None when it could not be evaluated. Empty when the
    termination rule decided the reward (no component is evaluated then, as upstream)."""
    reasons: dict[str, str] = field(default_factory=dict)
    """Component -> why it is 0.0 or not evaluated (absent for components at 1.0)."""
    terminated_early: str | None = None
    """The stop reason when the conversation did not end by an agent or user stop."""
    communicate_checks: tuple[CommunicateCheck, ...] = ()

    @property
    def not_evaluated(self) -> list[str]:
        return [name for name, value in self.breakdown.items() if value is None]

    @property
    def complete(self) -> bool:
        """True when every component of the basis was evaluated (the leaderboard's condition)."""
        return not self.not_evaluated

    @property
    def failed(self) -> list[str]:
        return [name for name, value in self.breakdown.items() if value == 0.0]

    def info(self) -> dict[str, object]:
        """The ``tau2_reward_info`` object of metrics.json."""
        return {
            "reward_basis": list(self.basis),
            "not_evaluated": self.not_evaluated,
            # first lines only: the DB component's diff is in the check's message (and DB_STATE_MATCH's)
            "reasons": {name: reason.split("\n", 1)[0].removesuffix(":") for name, reason in self.reasons.items()},
            "terminated_early": self.terminated_early,
            "communicate_checks": [c.to_dict() for c in self.communicate_checks],
        }

    def summary(self) -> str:
        """One line, the reward and what decided it; then the further lines of a reason that has
        them (the DB component's hashes and path-level diff, as DB_STATE_MATCH shows them)."""
        if self.terminated_early is not None:
            return f"tau2 reward 0.0: {self.reasons.get('termination', self.terminated_early)}"
        parts = [f"{name} {'n/a' if value is None else value}" for name, value in self.breakdown.items()]
        text = f"tau2 reward {self.reward} ({' x '.join(parts) or 'empty basis'})"
        reasons = [(name, self.reasons[name].split("\n")) for name in self.breakdown if name in self.reasons]
        notes = [f"{name}: {lines[0]}" for name, lines in reasons]
        further = [line for _, lines in reasons for line in lines[1:]]
        return "\n".join([text + ("; " + "; ".join(notes) if notes else ""), *further])


def reward_basis(criteria: Mapping[str, object] | None) -> tuple[str, ...]:
    """The task's basis, validated; upstream's default when the key is absent or null."""
    basis = (criteria or {}).get("reward_basis")
    if basis is None:
        return DEFAULT_REWARD_BASIS
    if isinstance(basis, str) or not isinstance(basis, Iterable):
        raise ValueError(f"reward_basis must be a list of {', '.join(REWARD_TYPES)}; got {basis!r}")
    names = tuple(str(name) for name in basis)
    unknown = [name for name in names if name not in REWARD_TYPES]
    if unknown:
        raise ValueError(f"reward_basis has unknown component(s) {unknown}; known: {', '.join(REWARD_TYPES)}")
    return names


def communicate_checks(
    communicate_info: Sequence[str] | None, transcript: Sequence[Mapping[str, object]]
) -> tuple[CommunicateCheck, ...]:
    """Upstream's substring rule: each string, lower-cased, occurs in some agent message's text,
    lower-cased with its commas removed (commas are stripped from the message only, so "1,000"
    can never match and "10" matches "100"). Every assistant message with non-blank text counts,
    the fixed greeting and messages that also carry tool calls included."""
    texts = [
        (cast("int | None", message.get("turn_idx")), content.lower().replace(",", ""))
        for message in transcript
        if message.get("role") == "assistant" and isinstance(content := message.get("content"), str) and content.strip()
    ]
    checks = []
    for info in communicate_info or []:
        needle = str(info).lower()
        said = [turn_idx for turn_idx, text in texts if needle in text]
        checks.append(CommunicateCheck(str(info), bool(said), said[0] if said else None))
    return tuple(checks)


def tau2_reward(
    criteria: Mapping[str, object] | None,
    *,
    stop_reason: str,
    transcript: Sequence[Mapping[str, object]],
    db_match: bool | None,
    env_assertion_verdicts: Sequence[Mapping[str, object]] | None,
    action_match: bool | None,
    action_reason: str = "",
    nl_verdicts: Sequence[Mapping[str, object]] | None,
    db_reason: str = "",
) -> Tau2Reward:
    """Score one finished conversation the way upstream's ``evaluate_simulation`` does.

    ``criteria`` is the task's ``evaluation_criteria`` (``reward_basis``, ``actions``,
    ``env_assertions``, ``communicate_info``, ``nl_assertions``). The other inputs are what the
    six signals already computed: ``db_match`` from the DB hashes (None: no gold to compare
    with); ``env_assertion_verdicts`` the DB-state predicate verdicts (``passed``, and
    ``func_name``/``error`` for the reason; None: not evaluated); ``action_match`` upstream's
    ACTION rule over the transcript (None: not evaluated); ``nl_verdicts`` the judge's
    per-assertion verdicts (``passed``, ``assertion``, ``reason``; None: no judge ran);
    ``db_reason`` what DB_STATE_MATCH found when the DB differs (hashes and the path-level diff),
    given in the DB component's reason.
    """
    basis = reward_basis(criteria)
    if stop_reason not in SCORED_STOP_REASONS:
        why = (
            f"the conversation ended by {stop_reason!r}; only an agent stop (exit) or a user stop "
            "(user_stop, transfer) is scored"
        )
        return Tau2Reward(0.0, basis, {}, {"termination": why}, terminated_early=stop_reason)
    if criteria is None:
        return Tau2Reward(1.0, basis, {}, {"criteria": "the task has no evaluation criteria (upstream: 1.0)"})

    components: dict[str, tuple[float | None, str]] = {}
    checks: tuple[CommunicateCheck, ...] = ()
    for name in REWARD_TYPES:
        if name not in basis:
            continue
        if name == "DB":
            components[name] = _db(criteria, db_match, db_reason)
        elif name == "ENV_ASSERTION":
            components[name] = _env_assertions(criteria, env_assertion_verdicts)
        elif name == "ACTION":
            components[name] = _action(criteria, action_match, action_reason)
        elif name == "COMMUNICATE":
            checks = communicate_checks(cast("Sequence[str] | None", criteria.get("communicate_info")), transcript)
            missing = [c.info for c in checks if not c.met]
            components[name] = (0.0, f"never said by the agent: {missing}") if missing else (1.0, "")
        else:
            components[name] = _nl(criteria, nl_verdicts)

    reward = 1.0
    for value, _ in components.values():
        if value is not None:
            reward *= value
    return Tau2Reward(
        reward=reward,
        basis=basis,
        breakdown={name: value for name, (value, _) in components.items()},
        reasons={name: reason for name, (value, reason) in components.items() if value != 1.0 and reason},
        communicate_checks=checks,
    )


def _db(criteria: Mapping[str, object], db_match: bool | None, found: str = "") -> tuple[float | None, str]:
    if db_match is None:
        if criteria.get("actions") is None and criteria.get("env_assertions") is None:
            return 1.0, ""  # upstream's short-circuit: nothing to replay, nothing to assert
        return None, "no gold DB hash to compare with"
    if db_match:
        return 1.0, ""
    return 0.0, "the final DB differs from the gold replay's" + (f":\n{found}" if found else "")


def _env_assertions(
    criteria: Mapping[str, object], verdicts: Sequence[Mapping[str, object]] | None
) -> tuple[float | None, str]:
    expected = cast("Sequence[Mapping[str, object]]", criteria.get("env_assertions") or [])
    if not expected:
        return 1.0, ""
    if verdicts is None:
        return None, "the env assertions were not evaluated"
    if len(verdicts) != len(expected):
        raise ValueError(f"{len(expected)} env assertions in the task but {len(verdicts)} verdicts were given")
    failed = []
    for index, verdict in enumerate(verdicts):
        if verdict.get("passed") is not True:
            name = verdict.get("func_name") or expected[index].get("func_name")
            error = f" ({verdict['error']})" if verdict.get("error") else ""
            failed.append(f"[{index}] {name}{error}")
    return (0.0, "failed: " + ", ".join(failed)) if failed else (1.0, "")


def _action(criteria: Mapping[str, object], matched: bool | None, reason: str) -> tuple[float | None, str]:
    if not criteria.get("actions"):
        return 1.0, ""
    if matched is None:
        return None, "the action check was not evaluated"
    return (1.0, "") if matched else (0.0, reason or "a gold action was never called")


def _nl(criteria: Mapping[str, object], verdicts: Sequence[Mapping[str, object]] | None) -> tuple[float | None, str]:
    assertions = cast("Sequence[object]", criteria.get("nl_assertions") or [])
    if not assertions:
        return 1.0, ""  # upstream: no judge call, 1.0
    if verdicts is None:
        return None, f"not evaluated: {len(assertions)} NL assertion(s) need a judge (--tau2-judge-model)"
    failed = [v for v in verdicts if v.get("passed") is not True]
    if not failed:
        return 1.0, ""
    first = failed[0]
    return 0.0, f"{len(failed)} of {len(verdicts)} not met, e.g. {first.get('assertion')!r}: {first.get('reason')}"
