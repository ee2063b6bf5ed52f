"""The judge's reply reader against the shapes the model double answers in (tests/support/fake_openai.py)."""

from __future__ import annotations

import pytest

from pytest_tau2.scoring.judge import judge_messages, normalize_verdicts, unreadable
from tests.support.fake_openai import judge_answer

ASSERTIONS = ["The agent gave the tracking number.", "The agent apologised."]
REQUEST = {"model": "judge", "messages": judge_messages(ASSERTIONS, [{"role": "user", "content": "hi"}])}


def reply(shape: str, passed: bool = True) -> str:
    return str(judge_answer(REQUEST, shape, passed=passed).content)


@pytest.mark.parametrize("shape", ["ok", "fenced", "unindexed"])
def test_replies_in_this_projects_format_are_read(shape: str) -> None:
    assert unreadable(ASSERTIONS, reply(shape, passed=False)) == []
    verdicts = normalize_verdicts(ASSERTIONS, reply(shape, passed=False))
    assert [(v["index"], v["passed"]) for v in verdicts] == [(0, False), (1, False)]


@pytest.mark.parametrize(
    ("shape", "problem"),
    [
        ("duplicate_index", "entries 0 and 2 give contradicting verdicts for assertion 0 (passed True and False)"),
        ("stray_entry", "3 entries without 'index' for 2 assertions: cannot tell which verdict grades which"),
        ("extra_entry", "entry 2 has index 2 outside 0..1"),
        ("missing", "the judge gave no verdict for assertion 1"),
        ("not_boolean", "the judge's 'passed' for assertion 0 is not a boolean: 'yes'"),
        ("empty", "the judge returned an empty reply"),
        ("not_json", "the judge reply is not valid JSON"),
        ("no_list", "the judge reply has no 'verdicts' list"),
    ],
)
def test_bad_and_contradicting_replies_are_named(shape: str, problem: str) -> None:
    problems = unreadable(ASSERTIONS, reply(shape))
    assert any(problem in p for p in problems), problems


def test_a_repeated_entry_that_agrees_is_read_and_mixed_indexes_are_refused() -> None:
    agreeing = (
        '{"verdicts": [{"index": 0, "passed": true}, {"index": 1, "passed": false}, {"index": 0, "passed": true}]}'
    )
    assert unreadable(ASSERTIONS, agreeing) == []
    mixed = '{"verdicts": [{"index": 1, "passed": true}, {"passed": false}]}'
    assert any("have no 'index' while the others have one" in p for p in unreadable(ASSERTIONS, mixed))
    not_object = '{"verdicts": [{"index": 0, "passed": true}, {"index": 1, "passed": true}, "and one more thing"]}'
    assert any("entry 2 is not an object" in p for p in unreadable(ASSERTIONS, not_object))
