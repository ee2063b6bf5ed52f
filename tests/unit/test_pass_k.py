"""pass^k over trials against hand-computed values (report/pass_k.py)."""

from __future__ import annotations

from math import comb

import pytest

from pytest_tau2.report.pass_k import PassK, Trial, pass_hat_k, pass_k, pass_k_by_domain


def trials(task: str, outcomes: str, domain: str = "retail") -> list[Trial]:
    """``"SSF-"``: S success, F failure, - infrastructure error, N no verdict (N/A)."""
    out = []
    for mark in outcomes:
        if mark == "-":
            out.append(Trial(task, domain, None, infrastructure_error=True))
        else:
            out.append(Trial(task, domain, {"S": True, "F": False, "N": None}[mark]))
    return out


def test_pass_hat_k_is_the_ratio_of_binomials() -> None:
    assert pass_hat_k(4, 4, 4) == 1.0
    assert pass_hat_k(4, 2, 1) == 0.5
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)  # C(2,2)/C(4,2)
    assert pass_hat_k(4, 3, 2) == pytest.approx(3 / 6)  # C(3,2)/C(4,2)
    assert pass_hat_k(5, 3, 3) == pytest.approx(1 / 10)  # C(3,3)/C(5,3)
    assert pass_hat_k(4, 1, 2) == 0.0
    assert pass_hat_k(8, 5, 3) == pytest.approx(comb(5, 3) / comb(8, 3))


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 2, 0), (3, 2, 4)])
def test_pass_hat_k_refuses_impossible_counts(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="must be between"):
        pass_hat_k(n, c, k)


def test_a_mix_of_outcomes_with_infrastructure_errors() -> None:
    """K=4. A: 4/4. B: 2/4. C: 2 of 3 valid (one infra error). D: every trial an infra error.

    Upstream's rule: D takes no part; max k = min valid n = 3 (task C), so pass^4 is not reported.
    pass^1 = (1 + 2/4 + 2/3) / 3 = 13/18; pass^2 = (1 + 1/6 + 1/3) / 3 = 1/2;
    pass^3 = (1 + 0 + 0) / 3 = 1/3.
    """
    result = pass_k(
        trials("A", "SSSS") + trials("B", "SFSF") + trials("C", "S-FS") + trials("D", "----"),
        trials_per_task=4,
    )
    assert result.values[1] == pytest.approx(13 / 18)
    assert result.values[2] == pytest.approx(1 / 2)
    assert result.values[3] == pytest.approx(1 / 3)
    assert result.values[4] is None
    assert result.max_k == 3
    assert result.average == pytest.approx(8 / 11)  # successes over valid trials
    assert (result.tasks, result.trials, result.valid_trials) == (3, 16, 11)
    assert result.infrastructure_errors == 5
    assert result.short_tasks == ["C"]
    assert result.lost_tasks == ["D"]
    assert result.caveats() == (
        "5 of 16 trials lost to infrastructure errors; 1 task has fewer than 4 valid trials; "
        "1 task has no valid trial; pass^k reported up to k=3"
    )
    assert result.values_text() == "pass^1 0.722, pass^2 0.500, pass^3 0.333, pass^4 n/a"


def test_every_trial_valid_reports_every_k_and_no_caveat() -> None:
    """K=3. A: 3/3, B: 1/3, C: 2/3. pass^1 = 6/9; pass^2 = (1 + 0 + 1/3)/3 = 4/9; pass^3 = 1/3."""
    result = pass_k(trials("A", "SSS") + trials("B", "FSF") + trials("C", "SSF"), trials_per_task=3)
    assert result.values == pytest.approx({1: 6 / 9, 2: 4 / 9, 3: 1 / 3})
    assert result.average == pytest.approx(6 / 9)
    assert result.max_k == 3
    assert result.caveats() == ""


def test_pass_1_of_single_trials_is_the_success_rate() -> None:
    result = pass_k(trials("A", "S") + trials("B", "F") + trials("C", "S") + trials("D", "-"), trials_per_task=1)
    assert result.values == {1: pytest.approx(2 / 3)}
    assert result.average == pytest.approx(2 / 3)
    assert result.caveats() == "1 of 4 trials lost to infrastructure errors; 1 task has no valid trial"


def test_a_trial_without_verdict_is_left_out_and_counted() -> None:
    result = pass_k(trials("A", "SN") + trials("B", "SF"), trials_per_task=2)
    assert result.not_applicable == 1
    assert result.short_tasks == ["A"]
    assert result.values == {1: pytest.approx((1 + 0.5) / 2), 2: None}
    assert "1 of 4 trials without a verdict (N/A)" in result.caveats()


def test_no_valid_trial_at_all() -> None:
    result = pass_k(trials("A", "--"), trials_per_task=2)
    assert result.values == {1: None, 2: None}
    assert result.average is None
    assert (result.tasks, result.max_k, result.lost_tasks) == (0, 0, ["A"])


def test_more_trials_than_requested_are_all_used() -> None:
    """A rerun can leave a task with more trials than K; every valid one counts in n."""
    result = pass_k(trials("A", "SSF"), trials_per_task=2)
    assert result.values == pytest.approx({1: 2 / 3, 2: 1 / 3})


def test_per_domain_scopes_have_their_own_max_k() -> None:
    mixed = trials("r1", "SS", "retail") + trials("r2", "SF", "retail") + trials("a1", "S-", "airline")
    by_domain = pass_k_by_domain(mixed, trials_per_task=2)
    assert list(by_domain) == ["airline", "retail"]
    assert by_domain["retail"].values == pytest.approx({1: 0.75, 2: 0.5})
    assert by_domain["airline"].values == {1: 1.0, 2: None}
    run = pass_k(mixed, trials_per_task=2)
    assert run.max_k == 1  # the airline task's single valid trial limits the whole run
    assert run.values[1] == pytest.approx((1 + 0.5 + 1) / 3)


def test_to_dict_is_json_ready() -> None:
    result = pass_k(trials("A", "SF"), trials_per_task=2)
    data = result.to_dict()
    assert data["pass_hat_k"] == {"1": 0.5, "2": 0.0}
    assert data["valid_trials"] == 2 and data["infrastructure_errors"] == 0
    assert isinstance(result, PassK)


def test_trials_per_task_must_be_positive() -> None:
    with pytest.raises(ValueError, match="trials_per_task must be at least 1"):
        pass_k([], trials_per_task=0)
