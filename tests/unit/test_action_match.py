"""ACTION_MATCH: the recorded write actions compared with a scenario's ``reference_answer``."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_tau2.scoring.action_match import (
    MatchResult,
    TextFlags,
    flatten_actions,
    match_reference,
    normalize_text,
)

DEFAULT = TextFlags()
STRICT_TEXT = TextFlags(ignore_capitalization=False, ignore_punctuation=False, clean_text=False)
NO_EXTRA = TextFlags(disallow_extra_items=True)


def action(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def order(**arguments: Any) -> dict[str, Any]:
    return action("place_order", **arguments)


def match(reference: Any, actions: list[dict[str, Any]], flags: TextFlags = DEFAULT) -> MatchResult:
    return match_reference(reference, actions, flags)


# ---- flattening ------------------------------------------------------------------------------


def test_flatten_puts_the_action_name_next_to_its_arguments() -> None:
    assert flatten_actions([order(total=1), action("refund")]) == [
        {"name": "place_order", "total": 1},
        {"name": "refund"},
    ]


# ---- dict vs dict ----------------------------------------------------------------------------


def test_dict_reference_matches_when_every_reference_key_matches() -> None:
    assert match({"name": "place_order", "total": 5}, [order(total=5)]).matched


def test_dict_reference_allows_extra_recorded_keys() -> None:
    result = match({"total": 5}, [order(total=5, note="leave at the door", tip=1)])
    assert result == MatchResult(True)


def test_dict_reference_key_missing_from_the_action_names_the_key() -> None:
    result = match({"total": 5, "customer_phone": "555"}, [order(total=5)])
    assert not result.matched
    assert result.reason == "reference.customer_phone: missing (expected '555')"


def test_dict_reference_value_mismatch_names_the_field_and_both_values() -> None:
    result = match({"total_price": "12.49"}, [order(total_price="11.49")])
    assert not result.matched
    assert result.reason == "reference.total_price: expected '12.49', found '11.49'"


def test_nested_dict_mismatch_reports_the_full_path() -> None:
    result = match({"address": {"city": "Austin"}}, [order(address={"city": "Boston", "zip": "1"})])
    assert result.reason == "reference.address.city: expected 'Austin', found 'Boston'"


def test_dict_reference_against_a_non_dict_value_fails() -> None:
    result = match({"address": {"city": "Austin"}}, [order(address="Austin")])
    assert not result.matched
    assert result.reason.startswith("reference.address: expected an object, found 'Austin'")


def test_dict_reference_with_no_recorded_action_fails_with_a_clear_reason() -> None:
    result = match({"total": 5}, [])
    assert not result.matched
    assert "no action was recorded" in result.reason


def test_action_name_is_compared_like_any_other_key() -> None:
    assert not match({"name": "cancel_order"}, [order(total=5)]).matched
    assert match({"name": "PLACE_ORDER"}, [order(total=5)]).matched  # text flags apply to the name too


# ---- dict vs list: the last action --------------------------------------------------------------


def test_dict_reference_is_compared_with_the_last_recorded_action() -> None:
    actions = [order(total=1), order(total=2), order(total=3)]
    assert match({"total": 3}, actions).matched
    result = match({"total": 1}, actions)
    assert not result.matched
    assert result.reason == "reference.total: expected 1, found 3"


def test_dict_reference_does_not_look_at_earlier_actions_even_if_they_match() -> None:
    assert not match({"name": "place_order"}, [order(total=1), action("end_call")]).matched


# ---- list vs list: order-independent, distinct ---------------------------------------------------


def test_list_reference_matches_in_any_order() -> None:
    reference = [{"name": "refund", "id": "B"}, {"name": "refund", "id": "A"}]
    assert match(reference, [action("refund", id="A"), action("refund", id="B")]).matched


def test_list_items_inside_an_argument_match_in_any_order() -> None:
    reference = {"items": [{"name": "Cola", "quantity": "4"}, {"name": "BBQ Chicken Pizza", "quantity": "3"}]}
    recorded = order(items=[{"name": "BBQ Chicken Pizza", "quantity": 3}, {"name": "Cola", "quantity": 4}])
    assert match(reference, [recorded]).matched


def test_each_reference_item_needs_a_distinct_recorded_item() -> None:
    reference = [{"name": "refund", "id": "A"}, {"name": "refund", "id": "A"}]
    result = match(reference, [action("refund", id="A")])
    assert not result.matched
    assert "reference[1]" in result.reason and "no distinct match" in result.reason


def test_distinct_matching_backtracks_to_find_an_assignment() -> None:
    # The first reference item matches both predictions; a greedy choice of the first one would
    # leave nothing for the second reference item.
    reference = [{"name": "refund"}, {"name": "refund", "id": "A"}]
    assert match(reference, [action("refund", id="A"), action("refund", id="B")]).matched


def test_list_reference_allows_extra_recorded_items_by_default() -> None:
    reference = [{"name": "refund", "id": "A"}]
    assert match(reference, [action("lookup"), action("refund", id="A"), action("note")]).matched


def test_list_reference_mismatch_explains_the_deepest_candidate() -> None:
    reference = [{"name": "refund", "address": {"city": "Austin"}}]
    result = match(reference, [action("lookup"), action("refund", address={"city": "Boston"})])
    assert not result.matched
    assert result.reason == "reference[0].address.city: expected 'Austin', found 'Boston'"


def test_list_reference_mismatch_explains_the_nearest_candidate() -> None:
    reference = [{"name": "refund", "id": "A", "amount": 10}]
    result = match(reference, [action("lookup", id="Z"), action("refund", id="A", amount=12)])
    assert not result.matched
    assert result.reason == "reference[0].amount: expected 10, found 12"


def test_list_reference_with_nothing_recorded_says_so() -> None:
    result = match([{"name": "refund"}], [])
    assert not result.matched
    assert result.reason == "reference[0]: expected {'name': 'refund'}, but nothing was recorded"


def test_list_reference_against_a_scalar_fails() -> None:
    result = match({"items": ["a"]}, [order(items="a")])
    assert result.reason == "reference.items: expected a list, found 'a'"


def test_empty_list_reference_matches_anything_unless_extra_items_are_disallowed() -> None:
    assert match([], []).matched
    assert match([], [order(total=1)]).matched
    assert match([], [], NO_EXTRA).matched
    result = match([], [order(total=1)], NO_EXTRA)
    assert not result.matched
    assert result.reason == "reference: expected 0 items, found 1"


# ---- disallow_extra_items -----------------------------------------------------------------------


def test_disallow_extra_items_requires_equal_lengths_at_every_list() -> None:
    reference = {"items": [{"name": "Cola"}]}
    two_items = order(items=[{"name": "Cola"}, {"name": "Lemonade"}])
    assert match(reference, [two_items]).matched
    result = match(reference, [two_items], NO_EXTRA)
    assert not result.matched
    assert result.reason == "reference.items: expected 1 items, found 2"


def test_disallow_extra_items_still_matches_in_any_order() -> None:
    reference = [{"name": "a"}, {"name": "b"}]
    assert match(reference, [action("b"), action("a")], NO_EXTRA).matched


def test_disallow_extra_items_does_not_forbid_extra_keys_in_a_dict() -> None:
    assert match({"total": 1}, [order(total=1, note="x")], NO_EXTRA).matched


# ---- text flags -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "recorded"),
    [
        ("Pepperoni Pizza", "pepperoni pizza"),
        ("314-527-8960", "3145278960"),
        ("Extra  Cheese", " extra cheese "),
        ("Charlie!", "CHARLIE"),
    ],
)
def test_default_text_flags_ignore_case_punctuation_and_spacing(reference: str, recorded: str) -> None:
    assert match({"v": reference}, [order(v=recorded)]).matched


def test_ignore_capitalization_off_makes_case_significant() -> None:
    flags = TextFlags(ignore_capitalization=False)
    assert not match({"v": "Cola"}, [order(v="cola")], flags).matched
    assert match({"v": "Cola"}, [order(v="Cola!")], flags).matched


def test_ignore_punctuation_off_makes_punctuation_significant() -> None:
    flags = TextFlags(ignore_punctuation=False)
    assert not match({"v": "314-527-8960"}, [order(v="3145278960")], flags).matched
    assert match({"v": "A-B"}, [order(v="a-b")], flags).matched


def test_clean_text_off_makes_whitespace_significant() -> None:
    flags = TextFlags(clean_text=False)
    assert not match({"v": "extra cheese"}, [order(v="extra  cheese")], flags).matched
    assert not match({"v": "cola"}, [order(v=" cola")], flags).matched


def test_all_text_flags_off_is_exact_comparison() -> None:
    assert match({"v": "Cola"}, [order(v="Cola")], STRICT_TEXT).matched
    assert not match({"v": "Cola"}, [order(v="cola")], STRICT_TEXT).matched


def test_normalize_text_applies_each_flag() -> None:
    assert normalize_text("  Hello,   World! ", DEFAULT) == "hello world"
    assert normalize_text("  Hello,   World! ", STRICT_TEXT) == "  Hello,   World! "
    assert normalize_text("Straße", TextFlags(ignore_punctuation=False, clean_text=False)) == "strasse"


# ---- numbers ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "recorded"),
    [
        ("11.49", 11.49),
        (11.49, "11.49"),
        ("1", 1),
        ("1.50", 1.5),
        ("$12.00", 12),
        ("1,250.00", 1250),
        (0.1 + 0.2, 0.3),
    ],
)
def test_numbers_and_numeric_strings_compare_as_numbers(reference: Any, recorded: Any) -> None:
    assert match({"total_price": reference}, [order(total_price=recorded)]).matched


def test_numeric_tolerance_is_tight() -> None:
    assert not match({"total_price": "11.49"}, [order(total_price=11.50)]).matched
    assert not match({"total_price": "11.49"}, [order(total_price=11.49 + 1e-4)]).matched
    assert match({"total_price": "11.49"}, [order(total_price=11.49 + 1e-8)]).matched


def test_a_number_never_matches_a_non_numeric_string() -> None:
    assert not match({"quantity": 1}, [order(quantity="one")]).matched


def test_none_and_booleans_compare_by_equality() -> None:
    assert match({"gift": None}, [order(gift=None)]).matched
    assert not match({"gift": None}, [order(gift="none")]).matched
    assert match({"gift": True}, [order(gift=True)]).matched
    assert not match({"gift": True}, [order(gift=False)]).matched
    assert not match({"gift": True}, [order(gift="yes")]).matched


# ---- the scenario hook ------------------------------------------------------------------------------


def test_scenario_without_reference_answer_makes_action_match_not_applicable() -> None:
    from pytest_tau2 import Scenario, SuccessSignal

    class NoReference(Scenario):
        name = "unitam__no_reference"
        success_signals = (SuccessSignal.ACTION_MATCH,)

    assert NoReference().action_match([order(total=1)], []) is None


def test_scenario_passes_its_text_flags_to_the_matcher() -> None:
    from pytest_tau2 import Scenario, SuccessSignal

    class CaseSensitive(Scenario):
        name = "unitam__case_sensitive"
        success_signals = (SuccessSignal.ACTION_MATCH,)
        reference_answer = {"items": [{"name": "Cola"}]}
        ignore_capitalization = False
        disallow_extra_items = True

    scenario = CaseSensitive()
    assert scenario.action_match([order(items=[{"name": "Cola"}])], []).matched
    assert not scenario.action_match([order(items=[{"name": "cola"}])], []).matched
    assert not scenario.action_match([order(items=[{"name": "Cola"}, {"name": "Cola"}])], []).matched
