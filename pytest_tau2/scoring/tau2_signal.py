"""``tau2_reward`` as a registered signal: tau2-bench's own reward beside the six signals.

Not one of the six NeMo signals, but in the signal table so that metrics.json (and its schema),
JUnit properties and the ``--tau2-verdict tau2-reward`` whitelist follow from it like from any
signal. It is computed last and reads the other signals' results (``ScoringInput.computed``):
the DB match, the DB-state predicate verdicts (upstream's env assertions), upstream's ACTION
check, and the judge's verdicts; the arithmetic lives in :mod:`pytest_tau2.scoring.tau2_reward`.

Registered when this module is imported, after the six built-ins (imported first, so the
table keeps its report order); :mod:`pytest_tau2.scoring.signals`, through which the table is
read, imports it, so every table reader sees it.
"""

from __future__ import annotations

from typing import Any

from pytest_tau2.scoring import builtin_signals as _builtin_signals  # noqa: F401  (the six come first in the table)
from pytest_tau2.scoring.names import SuccessSignal
from pytest_tau2.scoring.table import Check, ScoringInput, SignalResult, SignalSpec, register_signal
from pytest_tau2.scoring.tau2_reward import REWARD_TYPES, tau2_reward, upstream_ending

KEY = "tau2_reward"


def _tau2_reward(inp: ScoringInput) -> SignalResult:
    """tau2-bench's own reward, from the values the other signals computed (scoring/tau2_reward.py)."""
    criteria_of = getattr(inp.scenario, "tau2_evaluation_criteria", None)
    if criteria_of is None:
        return SignalResult(None, [Check(KEY, KEY, None, "not a tau2 task")])
    if inp.conversation.stop_reason == "error":
        reason = "no tau2 reward: the conversation ended in an infrastructure error (not a valid trial)"
        return SignalResult(None, [Check(KEY, KEY, None, reason)])
    if inp.judge is not None and inp.judge.error is not None:
        reason = "no tau2 reward: the NL-assertion judge could not grade (an infrastructure error, not a valid trial)"
        return SignalResult(None, [Check(KEY, KEY, None, reason)])
    done = inp.computed
    action = done.get(SuccessSignal.ACTION_MATCH)
    assertions = done.get(SuccessSignal.DB_STATE_ASSERTION)
    db = done.get(SuccessSignal.DB_STATE_MATCH)
    # Scored as upstream would have ended it: nothing after a user stop counts (our closing turn's
    # state-changing calls are refused by the loop, so the final DB already leaves them out).
    stop_reason, transcript = upstream_ending(inp.conversation.stop_reason, inp.conversation.transcript)
    if action is not None and len(transcript) < len(inp.conversation.transcript):
        action = _action_on(inp, transcript, action)
    reward = tau2_reward(
        criteria_of(),
        stop_reason=stop_reason,
        transcript=transcript,
        db_match=_bool(db),
        db_reason=db.checks[0].message if db is not None and db.checks and db.value is False else "",
        env_assertion_verdicts=assertions.evidence if assertions is not None else None,
        action_match=_bool(action),
        action_reason=action.checks[0].message if action is not None and action.checks else "",
        nl_verdicts=inp.judge.verdicts if inp.judge is not None else None,
    )
    passed = reward.reward == 1.0
    message = "" if passed and reward.complete else reward.summary()
    return SignalResult(
        reward.reward,
        [Check(KEY, KEY, passed, message)],
        details={"tau2_reward_breakdown": reward.breakdown, "tau2_reward_info": reward.info()},
    )


def _action_on(inp: ScoringInput, transcript: list[Any], computed: SignalResult) -> SignalResult:
    """ACTION_MATCH's rule over the conversation as upstream ended it (its own value otherwise)."""
    match = inp.scenario.action_match(inp.final.actions, transcript)
    if match is None:
        return computed
    return SignalResult(match.matched, [Check("action_match", SuccessSignal.ACTION_MATCH, match.matched, match.reason)])


def _bool(result: SignalResult | None) -> bool | None:
    return result.value if result is not None and isinstance(result.value, bool) else None


_TAU2_COMPONENT = {"enum": list(REWARD_TYPES)}
_TAU2_DETAILS: dict[str, dict[str, Any]] = {
    "tau2_reward_breakdown": {
        "description": "TAU2_REWARD per component of the task's reward_basis: 1.0 or 0.0, null when it could not "
        "be evaluated (NL assertions without a judge). Empty when the termination rule decided the reward; "
        "null when there is no tau2 reward.",
        "type": ["object", "null"],
        "propertyNames": _TAU2_COMPONENT,
        "additionalProperties": {"type": ["number", "null"], "enum": [0.0, 1.0, None]},
    },
    "tau2_reward_info": {
        "description": "How TAU2_REWARD was reached (null when there is no tau2 reward).",
        "type": ["object", "null"],
        "additionalProperties": False,
        "required": ["reward_basis", "not_evaluated", "reasons", "terminated_early", "communicate_checks"],
        "properties": {
            "reward_basis": {"type": "array", "items": _TAU2_COMPONENT},
            "not_evaluated": {
                "description": "Components left out of the product; a reward with any is not leaderboard-comparable.",
                "type": "array",
                "items": _TAU2_COMPONENT,
            },
            "reasons": {
                "description": "Why a component is 0.0 or not evaluated ('termination' when the ending decided).",
                "type": "object",
                "additionalProperties": {"type": "string"},
            },
            "terminated_early": {
                "description": "The stop reason when it was neither an agent nor a user stop (reward 0.0).",
                "type": ["string", "null"],
            },
            "communicate_checks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["info", "met", "turn_idx"],
                    "properties": {
                        "info": {"type": "string"},
                        "met": {"type": "boolean"},
                        "turn_idx": {"type": ["integer", "null"]},
                    },
                },
            },
        },
    },
}


TAU2_REWARD = register_signal(
    SignalSpec(
        KEY, KEY, "tau2 reward", "rate", _tau2_reward,
        "tau2-bench's own reward, 0.0 or 1.0: the product of the components in the task's reward_basis "
        "(docs/leaderboard.md); it gates only under --tau2-verdict tau2-reward",
        "the scenario is not a tau2 task, or the conversation ended in an infrastructure error",
        check_order=1000,  # computed last: it reads the other signals' results
        details_schema=_TAU2_DETAILS,
    )
)  # fmt: skip
