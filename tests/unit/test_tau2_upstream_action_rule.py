"""``upstream_action_match``: tau2's own ACTION check (reference section 4.3).

A gold action is matched when *any* tool call of the run has its name and, on the compared
keys, equal arguments. The compared keys are ``compare_args`` when the gold action sets it,
else the keys of the *predicted* call.
"""

from __future__ import annotations

from typing import Any

from pytest_tau2.domains.tau2_common.base import upstream_action_match


def gold(name: str, compare_args: list[str] | None = None, **arguments: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"name": name, "arguments": arguments}
    if compare_args is not None:
        raw["compare_args"] = compare_args
    return raw


def turn(*calls: tuple[str, Any], role: str = "assistant") -> dict[str, Any]:
    return {"role": role, "content": None, "tool_calls": [{"id": "", "name": n, "arguments": a} for n, a in calls]}


def matched(raw_gold: list[dict[str, Any]], transcript: list[dict[str, Any]]) -> bool:
    simple = [{"name": g["name"], "arguments": g["arguments"], "requestor": "assistant"} for g in raw_gold]
    return upstream_action_match(simple, transcript, raw_gold).matched


CANCEL = gold("cancel_pending_order", order_id="#W1", reason="no longer needed")


def test_exact_call_matches() -> None:
    assert matched([CANCEL], [turn(("cancel_pending_order", {"order_id": "#W1", "reason": "no longer needed"}))])


def test_a_different_value_fails_and_the_reason_names_the_action() -> None:
    result = upstream_action_match(
        [{"name": "cancel_pending_order", "arguments": CANCEL["arguments"], "requestor": "assistant"}],
        [turn(("cancel_pending_order", {"order_id": "#W2", "reason": "no longer needed"}))],
        [CANCEL],
    )
    assert not result.matched
    assert "cancel_pending_order" in result.reason and "0" in result.reason


def test_omitting_a_gold_argument_still_matches() -> None:
    """Without compare_args the predicted call's keys are compared, so a missing key is not checked."""
    assert matched([CANCEL], [turn(("cancel_pending_order", {"order_id": "#W1"}))])


def test_an_extra_predicted_argument_fails() -> None:
    call = {"order_id": "#W1", "reason": "no longer needed", "note": "asap"}
    assert not matched([CANCEL], [turn(("cancel_pending_order", call))])


def test_an_extra_predicted_argument_with_a_null_value_fails() -> None:
    call = {"order_id": "#W1", "reason": "no longer needed", "note": None}
    assert not matched([CANCEL], [turn(("cancel_pending_order", call))])


def test_compare_args_restricts_the_keys() -> None:
    action = gold("get_order_details", compare_args=["order_id"], order_id="#W1")
    assert matched([action], [turn(("get_order_details", {"order_id": "#W1", "verbose": True}))])
    assert not matched([action], [turn(("get_order_details", {"order_id": "#W9"}))])


def test_empty_compare_args_matches_on_the_name_alone() -> None:
    action = gold("transfer_to_human_agents", compare_args=[], summary="I cannot fix the issue.")
    assert matched([action], [turn(("transfer_to_human_agents", {"summary": "anything at all"}))])
    assert matched([action], [turn(("transfer_to_human_agents", {}))])
    assert not matched([action], [turn(("calculate", {"expression": "1+1"}))])


def test_order_and_multiplicity_are_ignored() -> None:
    first = gold("get_user_details", user_id="u1")
    second = gold("get_order_details", order_id="#W1")
    calls = [turn(("get_order_details", {"order_id": "#W1"})), turn(("get_user_details", {"user_id": "u1"}))]
    assert matched([first, second], calls)
    # one call satisfies two identical gold actions; repeating a call changes nothing
    assert matched([first, first], [turn(("get_user_details", {"user_id": "u1"}))])
    assert matched([first], [turn(("get_user_details", {"user_id": "u1"}), ("get_user_details", {"user_id": "u1"}))])


def test_every_gold_action_must_be_matched() -> None:
    first = gold("get_user_details", user_id="u1")
    second = gold("get_order_details", order_id="#W1")
    assert not matched([first, second], [turn(("get_user_details", {"user_id": "u1"}))])


def test_user_side_calls_count_and_requestor_is_ignored() -> None:
    action = gold("toggle_roaming")
    assert matched([action], [turn(("toggle_roaming", {}), role="user")])


def test_json_string_arguments_are_decoded() -> None:
    assert matched([CANCEL], [turn(("cancel_pending_order", '{"order_id": "#W1", "reason": "no longer needed"}'))])
    assert not matched([CANCEL], [turn(("cancel_pending_order", "{not json"))])


def test_no_gold_actions_match_trivially() -> None:
    assert matched([], [])
    assert matched([], [turn(("cancel_pending_order", {"order_id": "#W1"}))])


def test_failed_calls_still_count() -> None:
    """Upstream matches the calls of the trajectory, whatever their result (retail 64's failing exchange)."""
    transcript = [
        turn(("cancel_pending_order", {"order_id": "#W1", "reason": "no longer needed"})),
        {"role": "tool", "content": "Error: Non-pending order cannot be cancelled", "tool_call_id": ""},
    ]
    assert matched([CANCEL], transcript)
