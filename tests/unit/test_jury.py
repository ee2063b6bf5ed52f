"""Several judges (scoring/jury.py, run/judges.py), upstream's prompt shape (scoring/judge_upstream.py),
and the replayed sides of a saved transcript (conversation/transcript_replay.py): the pure parts."""

from __future__ import annotations

import asyncio
import json

import pytest

from pytest_tau2.conversation.transcript_replay import TranscriptEnded, differing_tool_results, replay_sides
from pytest_tau2.errors import SettingsError
from pytest_tau2.report import agreement
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.run.judges import judge_configs, judge_labels, judge_models
from pytest_tau2.scoring.judge_upstream import read_upstream, upstream_messages
from pytest_tau2.scoring.jury import combine, majority
from pytest_tau2.scoring.signals import JudgeOutcome
from pytest_tau2.settings import OPTIONS, Settings, coerce


def test_the_majority_passes_and_a_tie_fails() -> None:
    assert majority([True, True, False]) is True
    assert majority([True, False, False]) is False
    assert majority([True, False]) is False  # a tie is not met
    assert majority([True, True, False, False]) is False
    assert majority([True]) is True and majority([False]) is False


def _outcome(*passed: bool) -> JudgeOutcome:
    return JudgeOutcome([{"index": i, "passed": p, "reason": f"r{i}{p}"} for i, p in enumerate(passed)])


def test_combine_keeps_every_judge_and_says_how_split_the_panel_was() -> None:
    verdicts = combine(
        ["a", "b"], ["A", "B", "C"], [_outcome(True, True), _outcome(True, False), _outcome(False, False)]
    )
    first, second = verdicts
    assert first["passed"] is True and first["reason"] == "2 of 3 judges found it met; r0True"
    assert second["passed"] is False and second["reason"] == "1 of 3 judges found it met; r1False"
    assert [(j["judge"], j["passed"]) for j in first["judges"]] == [("A", True), ("B", True), ("C", False)]
    unanimous = combine(["a"], ["A", "B"], [_outcome(True), _outcome(True)])[0]
    assert unanimous["reason"] == "r0True"  # no count when all agree
    tie = combine(["a"], ["A", "B"], [_outcome(True), _outcome(False)])[0]
    assert tie["passed"] is False and "(a tie is not met)" in tie["reason"]


def test_judge_models_from_commas_repeated_flags_and_upstreams_default() -> None:
    option = next(o for o in OPTIONS if o.name == "judge_model")
    assert option.repeatable and coerce(option, ["a/x", "b/y"]) == "a/x,b/y"
    assert judge_models(Settings(judge_model="a/x, b/y")) == ["a/x", "b/y"]
    assert judge_models(Settings()) == []
    upstream = judge_configs(Settings(judge_prompt="upstream"))
    assert [(c.model, c.args) for c in upstream] == [("gpt-4.1-2025-04-14", {"temperature": 0.0})]
    with pytest.raises(SettingsError, match="empty model name"):
        judge_models(Settings(judge_model="a/x,,b/y"))


def test_judge_args_for_all_or_one_per_judge() -> None:
    shared = judge_configs(Settings(judge_model="a/x,b/y", judge_args='{"temperature": 0}'))
    assert [c.args for c in shared] == [{"temperature": 0}, {"temperature": 0}]
    each = judge_configs(Settings(judge_model="a/x,b/y", judge_args='[{"temperature": 0}, {"top_p": 1}]'))
    assert [c.args for c in each] == [{"temperature": 0}, {"top_p": 1}]
    with pytest.raises(SettingsError, match="list of 1 objects for 2 judges"):
        judge_configs(Settings(judge_model="a/x,b/y", judge_args='[{"temperature": 0}]'))
    assert judge_labels(judge_configs(Settings(judge_model="a/x,a/x"))) == ["a/x", "a/x#2"]


def test_upstream_shape_renders_every_message_and_reads_results_by_echo() -> None:
    transcript = [{"role": "assistant", "content": "Hi!"}, {"role": "user", "content": "cancel #1"},
                  {"role": "assistant", "content": None, "tool_calls": [{"name": "cancel"}]},
                  {"role": "tool", "content": '{"ok": true}'}]  # fmt: skip
    system, user = upstream_messages(["A did x.", "A said y."], transcript)
    assert "`metExpectation`" in str(system["content"])
    assert user["content"] == (
        'conversation:\nassistant: Hi!\nuser: cancel #1\nassistant: None\ntool: {"ok": true}\n\n'
        "expectedOutcomes:\n['A did x.', 'A said y.']\n"
    )
    reply = json.dumps({"results": [
        {"expectedOutcome": "A said y.", "reasoning": "no", "metExpectation": "false"},
        {"expectedOutcome": "A did x.", "reasoning": "yes", "metExpectation": True},
    ]})  # fmt: skip
    verdicts, problems = read_upstream(["A did x.", "A said y."], reply)
    assert problems == [] and [(v["passed"], v["reason"]) for v in verdicts] == [(True, "yes"), (False, "no")]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ('{"results": []}', "no non-empty 'results' list"),  # upstream would score this 1.0
        ("", "empty reply"),
        ('{"results": [{"expectedOutcome": "x", "metExpectation": "maybe"}]}', "not a boolean"),
        ('{"results": [{"expectedOutcome": "x", "metExpectation": true}]}', "1 results for 2 expected outcomes"),
    ],
)
def test_an_upstream_shaped_reply_that_grades_nothing_is_refused(reply: str, problem: str) -> None:
    _, problems = read_upstream(["A did x.", "A said y."], reply)
    assert problems and problem in problems[0]


def test_replayed_sides_say_the_saved_turns_and_end_as_the_saved_run() -> None:
    transcript = [
        {"role": "assistant", "content": "Hi", "generated": False},
        {"role": "user", "content": "help", "turn_idx": 1},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "tau2_call_2_0", "name": "t", "arguments": {"a": 1}, "id_generated": True},
            {"id": "tau2_call_2_1", "name": "t", "arguments": "{bad", "sent_id": "call_0"}]},
        {"role": "tool", "content": "ok"},
        {"role": "assistant", "content": "done"},
    ]  # fmt: skip
    agent, user = replay_sides(transcript, stop_reason="timeout", agent="litellm:m")
    assert agent.replayed_identity == "litellm:m"
    first = asyncio.run(agent.respond([], []))
    assert first.text is None and [c.name for c in first.tool_calls] == ["t", "t"]
    assert first.tool_calls[0].id_generated and first.tool_calls[1].id == "call_0"
    assert first.tool_calls[1].arguments == "{bad"  # as the model sent it
    assert asyncio.run(agent.respond([], [])).text == "done"
    with pytest.raises(TimeoutError):
        asyncio.run(agent.respond([], []))
    assert asyncio.run(user.respond([], [])).text == "help"
    _, ended = replay_sides(transcript, stop_reason="exit")
    asyncio.run(ended.respond([], []))
    with pytest.raises(TranscriptEnded, match="ends the conversation differently"):
        asyncio.run(ended.respond([], []))
    assert differing_tool_results(transcript, [{"role": "tool", "content": "changed"}]) == 1


def _record(folder: str, verdicts: list[dict[str, object]]) -> ScenarioRecord:
    return ScenarioRecord.read({"scenario": folder, "nl_assertion_verdicts": verdicts})


def test_old_against_new_gives_the_numbers_a_two_judge_jury_gives() -> None:
    old = [[True, True], [False, True], [True, False]]
    new = [[True, False], [False, True], [False, False]]

    def plain(labels: list[bool]) -> list[dict[str, object]]:
        return [{"index": i, "assertion": f"a{i}", "passed": p, "reason": ""} for i, p in enumerate(labels)]

    def panel(first: list[bool], second: list[bool]) -> list[dict[str, object]]:
        return combine([f"a{i}" for i in range(len(first))], ["old", "new"], [_outcome(*first), _outcome(*second)])

    saved = [_record(f"d__{k}", plain(labels)) for k, labels in enumerate(old)]
    rescored = [_record(f"d__{k}", plain(labels)) for k, labels in enumerate(new)]
    jury = [_record(f"d__{k}", panel(a, b)) for k, (a, b) in enumerate(zip(old, new, strict=True))]
    versus = agreement.between(saved, rescored, "old", "new")
    together = agreement.document(jury)
    assert versus is not None and together is not None
    assert versus == together
    assert versus["pairs"][0]["agreement"] == round(4 / 6, 4)
