"""The run's phone calls (``--tau2-speech-complexity``, docs/voice.md), from each result's ``voice``
object: all_metrics.json's ``voice`` block, ``all_latencies.csv`` (one row per answered turn)
and the summary's line beside the success rate. A run without calls gets none of them.

The figures are over every turn of every call of the run, not means of each call's figures: the
latency percentiles over all the turns' latencies, each side's word error rate over all the words
that side said (each call's rate weighted by its words).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TypedDict, cast

from pytest_tau2.report.record import ScenarioRecord

KEY = "voice"
"""all_metrics.json's key."""
CSV_NAME = "all_latencies.csv"
CSV_COLUMNS = (
    "scenario",
    "domain",
    "trial",
    "complexity",
    "turn",
    "latency_s",
    "agent_turn_index",
    "agent_start_s",
    "user_audio_s",
    "agent_audio_s",
    "interrupted",
    "user_heard_as",
    "agent_said",
)


class Turn(TypedDict, total=False):
    """One utterance of a call as metrics.json's ``voice.turns`` holds it (speech/line.py)."""

    side: str
    spoken: str
    heard: str
    audio_s: float
    start_s: float
    interrupted: bool


class Call(TypedDict, total=False):
    """The fields of a scenario's ``voice`` object this module reads (docs/voice.md, Metrics)."""

    complexity: str
    latencies_s: list[float]
    turns: list[Turn]
    wer: dict[str, float | None]
    audio_s: float
    interruptions: int
    overlap_s: float
    misheard_identifiers: list[object]


class RunCalls(TypedDict):
    """all_metrics.json's ``voice`` block."""

    calls: int
    complexity: list[str]
    turns: int
    latency_s: dict[str, float | None]
    wer: dict[str, float | None]
    audio_s: float
    interruptions: int
    overlap_s: float
    misheard_identifiers: int


_WORD = re.compile(r"[a-z0-9']+")
_CONTROL = re.compile(r"#{2,}[A-Z_]+#{2,}")


def calls(records: Sequence[ScenarioRecord]) -> list[tuple[ScenarioRecord, Call]]:
    """The records that are phone calls, with their ``voice`` object (JSON: each value is checked
    where it is read)."""
    return [(r, cast(Call, r.voice)) for r in records if isinstance(r.voice, Mapping)]


def percentile(values: Sequence[float], q: float) -> float:
    """numpy's default (linear) percentile, without importing numpy into every run's summary."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _percentiles(values: Sequence[float]) -> dict[str, float | None]:
    return {f"p{q}": round(percentile(values, q), 4) if values else None for q in (50, 90, 95)}


def _words(text: object) -> int:
    return len(_WORD.findall(_CONTROL.sub(" ", str(text or "")).lower()))


def _wer(found: Sequence[Call], side: str) -> float | None:
    """``side``'s word error rate over every call: each call's rate weighted by the words spoken."""
    errors = words = 0.0
    for voice in found:
        rate = (voice.get("wer") or {}).get(side)
        spoken = sum(_words(t.get("spoken")) for t in voice.get("turns") or [] if t.get("side") == side)
        if isinstance(rate, (int, float)) and spoken:
            errors, words = errors + rate * spoken, words + spoken
    return round(errors / words, 4) if words else None


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


def document(records: Sequence[ScenarioRecord]) -> RunCalls | None:
    """all_metrics.json's ``voice`` block (None: no call in the run)."""
    found = [voice for _, voice in calls(records)]
    if not found:
        return None
    latencies = [float(v) for voice in found for v in voice.get("latencies_s") or [] if isinstance(v, (int, float))]
    return {
        "calls": len(found),
        "complexity": sorted({str(v.get("complexity")) for v in found}),
        "turns": len(latencies),
        "latency_s": _percentiles(latencies),
        "wer": {side: _wer(found, side) for side in ("user", "agent")},
        "audio_s": round(sum(_number(v.get("audio_s")) for v in found), 3),
        "interruptions": int(sum(_number(v.get("interruptions")) for v in found)),
        "overlap_s": round(sum(_number(v.get("overlap_s")) for v in found), 3),
        "misheard_identifiers": sum(len(v.get("misheard_identifiers") or []) for v in found),
    }


def summary_lines(block: RunCalls | None) -> list[str]:
    """The summary's line about the calls, shown under the success rate."""
    if not block:
        return []
    latency = block["latency_s"]
    figures = (
        ", ".join(f"{q} {latency[q]:.2f} s" for q in ("p50", "p90", "p95"))
        if latency.get("p50") is not None
        else "none measured"
    )
    wer = ", ".join(f"{side} {rate:.2f}" for side, rate in block["wer"].items() if rate is not None) or "n/a"
    calls_ = f"{block['calls']} call{'' if block['calls'] == 1 else 's'}"
    line = f"  voice: {calls_}, agent response latency {figures} over {block['turns']} turns; WER {wer}"
    if block.get("interruptions"):
        line += f"; {block['interruptions']} interruptions ({block['overlap_s']:.1f} s of overlap)"
    return [line]


def _rows(record: ScenarioRecord, voice: Call) -> Iterator[dict[str, object]]:
    """One row per latency: the agent turn that answered a user turn (paired as the line pairs
    them, speech/line.py); a call with latencies but no turns (a WebSocket bot's) gets bare rows."""
    latencies = [v for v in voice.get("latencies_s") or [] if isinstance(v, (int, float))]
    turns = list(voice.get("turns") or [])
    pairs: list[tuple[int, Turn, Turn]] = []
    last_user: Turn | None = None
    for index, turn in enumerate(turns):
        if turn.get("side") == "user":
            last_user = turn
        elif last_user is not None:
            pairs.append((index, last_user, turn))
            last_user = None
    aligned = len(pairs) == len(latencies)
    for n, latency in enumerate(latencies):
        row: dict[str, object] = {
            "scenario": record.scenario,
            "domain": record.domain,
            "trial": record.trial if record.trial is not None else 1,
            "complexity": voice.get("complexity"),
            "turn": n + 1,
            "latency_s": latency,
        }
        if aligned:
            index, user, agent = pairs[n]
            row.update(
                agent_turn_index=index,
                agent_start_s=agent.get("start_s"),
                user_audio_s=user.get("audio_s"),
                agent_audio_s=agent.get("audio_s"),
                interrupted=bool(agent.get("interrupted")),
                user_heard_as=user.get("heard"),
                agent_said=agent.get("spoken"),
            )
        yield row


def latencies_csv(records: Sequence[ScenarioRecord]) -> str | None:
    """``all_latencies.csv``'s text: every answered turn of every call (None: no call in the run)."""
    found = calls(records)
    if not found:
        return None
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for record, voice in sorted(found, key=lambda pair: (pair[0].scenario, pair[0].trial or 0)):
        writer.writerows(_rows(record, voice))
    return out.getvalue()
