"""tau2's own reward (scoring/tau2_reward.py): every component, the product, the termination rule."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_tau2.conversation.loop import STOP_REASONS
from pytest_tau2.scoring.tau2_reward import (
    DEFAULT_REWARD_BASIS,
    SCORED_STOP_REASONS,
    communicate_checks,
    reward_basis,
    tau2_reward,
)

GREETING = {"role": "assistant", "content": "Hi! How can I help you today?", "generated": False, "turn_idx": 0}


def say(text: str | None, turn_idx: int, role: str = "assistant", **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": text, "turn_idx": turn_idx, **extra}


def score(criteria: dict[str, Any] | None, **overrides: Any) -> Any:
    inputs: dict[str, Any] = {
        "stop_reason": "user_stop",
        "transcript": [GREETING],
        "db_match": True,
        "env_assertion_verdicts": [],
        "action_match": True,
        "nl_verdicts": None,
    }
    inputs.update(overrides)
    return tau2_reward(criteria, **inputs)


def verdict(passed: bool, assertion: str = "Agent should refund.", reason: str = "") -> dict[str, Any]:
    return {"index": 0, "assertion": assertion, "passed": passed, "reason": reason}


# ---- the basis ---------------------------------------------------------------------------------


def test_basis_defaults_to_db_and_communicate_when_absent() -> None:
    assert reward_basis({}) == DEFAULT_REWARD_BASIS == ("DB", "COMMUNICATE")
    assert reward_basis({"reward_basis": None}) == ("DB", "COMMUNICATE")
    assert reward_basis(None) == ("DB", "COMMUNICATE")
    assert reward_basis({"reward_basis": ["ENV_ASSERTION", "ACTION"]}) == ("ENV_ASSERTION", "ACTION")


@pytest.mark.parametrize("basis", [["DB", "VIBES"], "DB"])
def test_a_bad_basis_is_refused_with_the_known_components(basis: Any) -> None:
    with pytest.raises(ValueError, match="DB, ENV_ASSERTION, ACTION, COMMUNICATE, NL_ASSERTION"):
        reward_basis({"reward_basis": basis})


def test_only_components_in_the_basis_count() -> None:
    """Retail's basis has no COMMUNICATE: unsaid communicate_info does not matter."""
    criteria = {"reward_basis": ["DB", "NL_ASSERTION"], "communicate_info": ["never said"], "actions": []}
    result = score(criteria, action_match=False)
    assert result.reward == 1.0
    assert result.breakdown == {"DB": 1.0, "NL_ASSERTION": 1.0}


# ---- DB ---------------------------------------------------------------------------------------


def test_db_component_follows_the_hash_match() -> None:
    criteria = {"reward_basis": ["DB"], "actions": [{"name": "x", "arguments": {}}]}
    assert score(criteria, db_match=True).breakdown == {"DB": 1.0}
    failed = score(criteria, db_match=False)
    assert failed.reward == 0.0
    assert failed.breakdown == {"DB": 0.0}
    assert failed.failed == ["DB"]
    assert "differs from the gold replay" in failed.reasons["DB"]
    assert "DB 0.0" in failed.summary()


def test_db_without_gold_is_one_only_when_the_task_has_neither_actions_nor_assertions() -> None:
    assert score({"reward_basis": ["DB"]}, db_match=None).breakdown == {"DB": 1.0}
    missing = score({"reward_basis": ["DB"], "actions": []}, db_match=None)
    assert missing.breakdown == {"DB": None}
    assert missing.not_evaluated == ["DB"] and not missing.complete


# ---- ENV_ASSERTION ----------------------------------------------------------------------------


def test_env_assertions_all_must_hold() -> None:
    criteria = {
        "reward_basis": ["ENV_ASSERTION"],
        "env_assertions": [{"func_name": "assert_can_send_mms"}, {"func_name": "assert_service_status"}],
    }
    ok = [{"func_name": "assert_can_send_mms", "passed": True}, {"func_name": "assert_service_status", "passed": True}]
    assert score(criteria, env_assertion_verdicts=ok).reward == 1.0
    bad = [ok[0], {"func_name": "assert_service_status", "passed": False, "error": None}]
    result = score(criteria, env_assertion_verdicts=bad)
    assert result.reward == 0.0
    assert result.reasons["ENV_ASSERTION"] == "failed: [1] assert_service_status"


def test_env_assertion_errors_fail_and_are_named() -> None:
    criteria = {"reward_basis": ["ENV_ASSERTION"], "env_assertions": [{"func_name": "assert_x"}]}
    errored = [{"func_name": "assert_x", "passed": False, "error": "predicate_raised: boom"}]
    assert score(criteria, env_assertion_verdicts=errored).reasons["ENV_ASSERTION"] == (
        "failed: [0] assert_x (predicate_raised: boom)"
    )


def test_env_assertions_absent_give_one_and_unevaluated_give_none() -> None:
    assert score({"reward_basis": ["ENV_ASSERTION"]}, env_assertion_verdicts=None).breakdown == {"ENV_ASSERTION": 1.0}
    criteria = {"reward_basis": ["ENV_ASSERTION"], "env_assertions": [{"func_name": "assert_x"}]}
    assert score(criteria, env_assertion_verdicts=None).breakdown == {"ENV_ASSERTION": None}


def test_env_assertion_verdict_count_must_match_the_task() -> None:
    criteria = {"reward_basis": ["ENV_ASSERTION"], "env_assertions": [{"func_name": "a"}, {"func_name": "b"}]}
    with pytest.raises(ValueError, match="2 env assertions in the task but 1 verdicts"):
        score(criteria, env_assertion_verdicts=[{"passed": True}])


def test_db_is_not_gating_where_the_basis_has_only_env_assertions() -> None:
    """Telecom: the DB hash is computed but does not count (upstream's gold env never syncs)."""
    criteria = {"reward_basis": ["ENV_ASSERTION"], "env_assertions": [{"func_name": "a"}], "actions": [{}]}
    result = score(criteria, db_match=False, env_assertion_verdicts=[{"passed": True}])
    assert result.reward == 1.0 and "DB" not in result.breakdown


# ---- ACTION -----------------------------------------------------------------------------------


def test_action_component_follows_the_action_check() -> None:
    criteria = {"reward_basis": ["ENV_ASSERTION", "ACTION"], "actions": [{"name": "transfer_to_human_agents"}]}
    assert score(criteria, action_match=True).breakdown == {"ENV_ASSERTION": 1.0, "ACTION": 1.0}
    result = score(
        criteria, action_match=False, action_reason="gold action 0 transfer_to_human_agents({}) was never called"
    )
    assert result.reward == 0.0
    assert result.breakdown == {"ENV_ASSERTION": 1.0, "ACTION": 0.0}
    assert "transfer_to_human_agents" in result.reasons["ACTION"]
    assert score(criteria, action_match=None).breakdown["ACTION"] is None


def test_no_gold_actions_match_trivially() -> None:
    for actions in (None, []):
        assert score({"reward_basis": ["ACTION"], "actions": actions}, action_match=False).reward == 1.0


# ---- COMMUNICATE ------------------------------------------------------------------------------


def test_communicate_is_a_case_insensitive_substring_of_agent_text_with_commas_removed() -> None:
    transcript = [
        GREETING,
        say("Your refund of $1,628 is on its way.", 1),
        say("The CODE is AbC and 5244.", 2, role="user"),  # the user's words never count
    ]
    checks = communicate_checks(["1628", "refund", "abc", "5244"], transcript)
    assert [(c.info, c.met, c.turn_idx) for c in checks] == [
        ("1628", True, 1),
        ("refund", True, 1),
        ("abc", False, None),
        ("5244", False, None),
    ]


def test_communicate_commas_are_stripped_from_the_message_only() -> None:
    transcript = [say("That is 1,000 dollars.", 1)]
    assert communicate_checks(["1000"], transcript)[0].met
    assert not communicate_checks(["1,000"], transcript)[0].met  # upstream's quirk, kept


def test_communicate_raw_substring_and_the_greeting_counts() -> None:
    assert communicate_checks(["10"], [say("There are 100 options.", 1)])[0].met  # "10" in "100"
    assert communicate_checks(["how can i help"], [GREETING])[0].turn_idx == 0


def test_communicate_counts_text_beside_tool_calls_and_skips_blank_text() -> None:
    with_call = say("Cancelling order 42 now.", 1, tool_calls=[{"name": "cancel", "arguments": {}}])
    assert communicate_checks(["42"], [with_call])[0].met
    assert not communicate_checks([" "], [say("   ", 1), say(None, 2)])[0].met


def test_communicate_component() -> None:
    criteria = {"reward_basis": ["DB", "COMMUNICATE"], "communicate_info": ["327", "1000"], "actions": []}
    said = score(criteria, transcript=[GREETING, say("Totals: 327 and 1,000.", 1)])
    assert said.reward == 1.0 and said.breakdown == {"DB": 1.0, "COMMUNICATE": 1.0}
    unsaid = score(criteria, transcript=[GREETING, say("Total: 327.", 1)])
    assert unsaid.reward == 0.0
    assert unsaid.reasons["COMMUNICATE"] == "never said by the agent: ['1000']"
    assert [c.to_dict() for c in unsaid.communicate_checks] == [
        {"info": "327", "met": True, "turn_idx": 1},
        {"info": "1000", "met": False, "turn_idx": None},
    ]
    assert score({"reward_basis": ["COMMUNICATE"], "communicate_info": []}).breakdown == {"COMMUNICATE": 1.0}


# ---- NL_ASSERTION -----------------------------------------------------------------------------


def test_nl_component_from_the_judge_verdicts() -> None:
    criteria = {"reward_basis": ["DB", "NL_ASSERTION"], "nl_assertions": ["A.", "B."], "actions": []}
    met = [verdict(True, "A."), verdict(True, "B.")]
    assert score(criteria, nl_verdicts=met).breakdown == {"DB": 1.0, "NL_ASSERTION": 1.0}
    one_failed = [verdict(True, "A."), verdict(False, "B.", "the agent never said it")]
    result = score(criteria, nl_verdicts=one_failed)
    assert result.reward == 0.0
    assert result.reasons["NL_ASSERTION"] == "1 of 2 not met, e.g. 'B.': the agent never said it"


def test_nl_without_a_judge_is_not_evaluated_and_left_out_of_the_product() -> None:
    criteria = {"reward_basis": ["DB", "NL_ASSERTION"], "nl_assertions": ["A."], "actions": []}
    result = score(criteria, nl_verdicts=None)
    assert result.breakdown == {"DB": 1.0, "NL_ASSERTION": None}
    assert result.reward == 1.0
    assert not result.complete and result.not_evaluated == ["NL_ASSERTION"]
    assert "need a judge" in result.reasons["NL_ASSERTION"]
    assert "NL_ASSERTION n/a" in result.summary()
    # an evaluated component still decides
    assert score(criteria, nl_verdicts=None, db_match=False).reward == 0.0


def test_nl_with_no_assertions_is_one_without_a_judge() -> None:
    for assertions in (None, []):
        result = score({"reward_basis": ["DB", "NL_ASSERTION"], "nl_assertions": assertions, "actions": []})
        assert result.breakdown == {"DB": 1.0, "NL_ASSERTION": 1.0} and result.complete


def test_an_empty_verdict_list_scores_one_like_upstreams_empty_results() -> None:
    criteria = {"reward_basis": ["NL_ASSERTION"], "nl_assertions": ["A."]}
    assert score(criteria, nl_verdicts=[]).breakdown == {"NL_ASSERTION": 1.0}


# ---- the product and the termination rule -----------------------------------------------------


def test_reward_is_the_product_of_every_component() -> None:
    criteria = {
        "reward_basis": ["DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION"],
        "actions": [{"name": "a"}],
        "env_assertions": [{"func_name": "p"}],
        "communicate_info": ["42"],
        "nl_assertions": ["A."],
    }
    good: dict[str, Any] = {
        "db_match": True,
        "env_assertion_verdicts": [{"passed": True}],
        "action_match": True,
        "transcript": [say("It is 42.", 1)],
        "nl_verdicts": [verdict(True)],
    }
    assert score(criteria, **good).reward == 1.0
    assert list(score(criteria, **good).breakdown) == ["DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION"]
    for key, bad in (
        ("db_match", False),
        ("env_assertion_verdicts", [{"passed": False}]),
        ("action_match", False),
        ("transcript", [say("It is 41.", 1)]),
        ("nl_verdicts", [verdict(False)]),
    ):
        result = score(criteria, **{**good, key: bad})
        assert result.reward == 0.0, key
        assert len(result.failed) == 1, (key, result.breakdown)


def test_scored_stop_reasons_are_loop_reasons() -> None:
    assert set(SCORED_STOP_REASONS) <= set(STOP_REASONS)


@pytest.mark.parametrize("stop_reason", sorted(set(STOP_REASONS) - SCORED_STOP_REASONS))
def test_any_other_ending_scores_zero_and_evaluates_nothing(stop_reason: str) -> None:
    result = score({"reward_basis": ["DB"], "actions": []}, stop_reason=stop_reason)
    assert result.reward == 0.0
    assert result.breakdown == {}
    assert result.terminated_early == stop_reason
    assert stop_reason in result.reasons["termination"]
    assert result.summary().startswith("tau2 reward 0.0: the conversation ended by")
    assert result.info()["terminated_early"] == stop_reason


@pytest.mark.parametrize("stop_reason", sorted(SCORED_STOP_REASONS))
def test_agent_and_user_stops_are_scored(stop_reason: str) -> None:
    result = score({"reward_basis": ["DB"], "actions": []}, stop_reason=stop_reason)
    assert result.reward == 1.0 and result.terminated_early is None


def test_no_criteria_scores_one() -> None:
    result = score(None, db_match=False, action_match=False)
    assert result.reward == 1.0 and result.breakdown == {}


def test_info_is_json_ready() -> None:
    criteria = {"reward_basis": ["DB", "COMMUNICATE"], "communicate_info": ["7"], "actions": []}
    info = score(criteria, db_match=False, transcript=[say("7 days", 1)]).info()
    assert info == {
        "reward_basis": ["DB", "COMMUNICATE"],
        "not_evaluated": [],
        "reasons": {"DB": "the final DB differs from the gold replay's"},
        "terminated_early": None,
        "communicate_checks": [{"info": "7", "met": True, "turn_idx": 1}],
    }
