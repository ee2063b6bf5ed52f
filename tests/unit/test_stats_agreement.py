"""Judge agreement (pytest_tau2/stats/agreement.py) against values computed by hand."""

from __future__ import annotations

import pytest

from pytest_tau2.stats.agreement import agreement, cohen_kappa, fleiss_kappa


def test_cohen_kappa_of_the_textbook_two_by_two_table() -> None:
    # 50 items: both yes 20, first yes / second no 5, first no / second yes 10, both no 15.
    # p_o = 35/50 = 0.7; p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = 0.2 / 0.5 = 0.4.
    first = [True] * 20 + [True] * 5 + [False] * 10 + [False] * 15
    second = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    assert cohen_kappa(first, second) == pytest.approx(0.4)


def test_cohen_kappa_is_one_for_identical_labels_and_undefined_when_every_label_is_the_same() -> None:
    assert cohen_kappa([True, False, True], [True, False, True]) == pytest.approx(1.0)
    assert cohen_kappa([True, True], [True, True]) is None  # chance agreement 1: says nothing
    assert cohen_kappa([], []) is None
    # Perfect disagreement on a balanced table: p_o = 0, p_e = 0.5, kappa = -1.
    assert cohen_kappa([True, False], [False, True]) == pytest.approx(-1.0)


def test_fleiss_kappa_of_three_judges_by_hand() -> None:
    # P_i: 1, 1/3, 1, 1/3 -> P = 2/3; 6 of 12 labels True -> P_e = 0.5; kappa = (2/3 - 1/2) / (1/2) = 1/3.
    rows = [[True, True, True], [True, True, False], [False, False, False], [True, False, False]]
    assert fleiss_kappa(rows) == pytest.approx(1 / 3)


def test_fleiss_kappa_of_fleiss_1971_style_counts() -> None:
    # The widely reproduced worked example: 10 items, 14 raters, 5 categories; kappa 0.210.
    counts = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]  # fmt: skip
    rows = [[category for category, n in enumerate(row) for _ in range(n)] for row in counts]
    assert fleiss_kappa(rows) == pytest.approx(0.2099, abs=5e-5)


def test_agreement_pairs_skip_missing_labels_and_fleiss_uses_complete_items() -> None:
    rows = [[True, True, False], [True, None, True], [False, False, False], [True, True, True]]
    found = agreement(rows)
    assert found.judges == 3 and found.items == 3 and found.unanimous == 2
    first_second, first_third, second_third = found.pairs
    assert (first_second.first, first_second.second, first_second.items) == (0, 1, 3)
    assert first_second.agreement == pytest.approx(1.0) and first_second.kappa == pytest.approx(1.0)
    assert first_third.items == 4 and first_third.agreement == pytest.approx(0.75)
    # first: T T F T, third: F T F T -> p_o 3/4; shares 3/4 and 1/2 -> p_e = 3/8 + 1/8 = 1/2; kappa 1/2.
    assert first_third.kappa == pytest.approx(0.5)
    assert second_third.items == 3 and second_third.agreement == pytest.approx(2 / 3)
    assert found.fleiss_kappa == fleiss_kappa([rows[0], rows[2], rows[3]])


def test_a_ragged_table_is_refused() -> None:
    with pytest.raises(ValueError, match="one label per judge"):
        agreement([[True, True], [True]])
    with pytest.raises(ValueError, match="pair their labels"):
        cohen_kappa([True], [True, False])
