"""The run's phone-call figures (report/calls.py): all_metrics.json's voice block, all_latencies.csv
and the summary's line, from the results' ``voice`` objects."""

from __future__ import annotations

import csv
import io
from typing import Any

from pytest_tau2.report import calls
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.summary import render


def turn(side: str, spoken: str, heard: str, start: float, *, interrupted: bool = False) -> dict[str, Any]:
    return {"side": side, "spoken": spoken, "heard": heard, "audio_s": 1.0, "start_s": start,
            "end_s": start + 1.0, "interrupted": interrupted}  # fmt: skip


def record(name: str, trial: int, voice: dict[str, Any] | None) -> ScenarioRecord:
    return ScenarioRecord.read({"scenario": name, "domain": name.split("__")[0], "trial": trial, "voice": voice})


def voice(latencies: list[float], wer_user: float, *, interruptions: int = 0) -> dict[str, Any]:
    turns = [turn("agent", "Hello", "hello", 0.4)]
    for i, _ in enumerate(latencies):
        turns += [turn("user", "one two three four", "one two", 2.0 + 3 * i),
                  turn("agent", "Sure thing", "sure", 3.5 + 3 * i, interrupted=i < interruptions)]  # fmt: skip
    return {"complexity": "control", "latencies_s": latencies, "turns": turns, "audio_s": 5.0,
            "wer": {"user": wer_user, "agent": 0.5}, "interruptions": interruptions,
            "overlap_s": 0.5 * interruptions,
            "misheard_identifiers": [{"side": "user", "turn": 1, "identifier": "4"}]}  # fmt: skip


RECORDS = [
    record("shop__a", 1, voice([1.0, 2.0, 3.0], 0.5, interruptions=1)),
    record("shop__b", 2, voice([4.0], 0.0)),
    record("shop__text", 1, None),  # a text conversation in the same run
]


def test_the_run_block_is_over_every_turn_of_every_call() -> None:
    block = calls.document(RECORDS)
    assert block is not None
    assert block["calls"] == 2 and block["turns"] == 4 and block["complexity"] == ["control"]
    assert block["latency_s"] == {"p50": 2.5, "p90": 3.7, "p95": 3.85}  # numpy's linear percentiles of 1..4
    # the user said 12 words in call a (rate 0.5) and 4 in call b (rate 0): 6 errors in 16 words
    assert block["wer"] == {"user": 0.375, "agent": 0.5}
    assert (block["interruptions"], block["overlap_s"], block["misheard_identifiers"]) == (1, 0.5, 2)
    assert calls.document([record("shop__text", 1, None)]) is None


def test_the_latency_csv_has_a_row_per_answered_turn() -> None:
    rows = list(csv.DictReader(io.StringIO(calls.latencies_csv(RECORDS) or "")))
    assert [(r["scenario"], r["trial"], r["turn"], r["latency_s"]) for r in rows] == [
        ("shop__a", "1", "1", "1.0"), ("shop__a", "1", "2", "2.0"), ("shop__a", "1", "3", "3.0"),
        ("shop__b", "2", "1", "4.0"),
    ]  # fmt: skip
    first = rows[0]
    assert (first["agent_turn_index"], first["agent_start_s"], first["interrupted"]) == ("2", "3.5", "True")
    assert (first["user_heard_as"], first["agent_said"]) == ("one two", "Sure thing")
    bare = record("shop__ws", 1, {"complexity": "control", "latencies_s": [0.7]})  # a bot's latencies, no turns
    assert calls.latencies_csv([bare]) == (
        ",".join(calls.CSV_COLUMNS) + "\nshop__ws,shop,1,control,1,0.7" + "," * 7 + "\n"
    )
    assert calls.latencies_csv(RECORDS[2:]) is None


def test_the_summary_gives_the_latency_beside_the_success_rate() -> None:
    lines = render(RECORDS).splitlines()
    assert lines[0].startswith("Success rate:")
    assert lines[1] == (
        "  voice: 2 calls, agent response latency p50 2.50 s, p90 3.70 s, p95 3.85 s over 4 turns; "
        "WER user 0.38, agent 0.50; 1 interruptions (0.5 s of overlap)"
    )
    assert "voice:" not in render(RECORDS[2:])
