"""pass^k curves of a run, read from all_metrics.json or computed from the trials' results.

all_metrics.json's ``pass_hat_k`` block (written by ``report/leaderboard.py``) is the
authority: per verdict (``six_signal``, ``tau2_reward``) a ``run`` result and one per domain,
each with ``pass_hat_k`` = {k: value or null above the tasks' valid trials}, and what was left
out (infrastructure errors, tasks short of trials, reward components not evaluated). A block
of another shape still gives curves: every mapping of k to a number in it becomes one, named by
its path. Without a block, runs with several trials per scenario get the run's curves computed
by ``report/pass_k.py`` from the trials' results, with the rules that wrote the block (up to the
smallest number of valid trials of a task, infrastructure errors and "N/A" verdicts left out):
the page never has a pass^k of its own.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from pytest_tau2.report.html.loader import Run, ScenarioResult
from pytest_tau2.report.leaderboard import REWARD_TOLERANCE
from pytest_tau2.report.pass_k import Trial, pass_k
from pytest_tau2.scenario.trial_ids import split_trial_id

VERDICTS = {"six_signal": "six-signal verdict", "is_successful": "six-signal verdict", "tau2_reward": "tau2 reward"}
CAVEATS = ("infrastructure_errors", "not_applicable", "short_tasks", "lost_tasks")
_K_KEY = re.compile(r"^(?:k\s*=\s*|pass\^|pass_)?(\d+)$", re.IGNORECASE)


@dataclass
class Curve:
    """One pass^k line: ``points`` are (k, value) pairs; ``overall`` is False for a domain's."""

    name: str
    points: list[tuple[int, float]]
    overall: bool = True


def pass_k_curves(run: Run) -> tuple[list[Curve], str, dict[str, Any]]:
    """The curves, where they come from, and notes (what was left out, other values of the block)."""
    if run.pass_k is not None:
        curves: list[Curve] = []
        notes: dict[str, Any] = {}
        if _is_leaderboard_block(run.pass_k):
            _read_leaderboard_block(run.pass_k, curves, notes)
        else:
            _find_curves(run.pass_k, [], curves, notes)
        return curves, "all_metrics.json", notes
    if any(r.shown_trial is not None for r in run.scenarios):
        curves, notes = [], {}
        _read_leaderboard_block(_computed_block(run), curves, notes)
        return curves, "computed from the trials' results", notes
    return [], "", {}


def _is_leaderboard_block(block: object) -> bool:
    return isinstance(block, dict) and any(
        isinstance(part, dict) and ("run" in part or "domains" in part) for part in block.values()
    )


def _read_leaderboard_block(block: dict[str, Any], curves: list[Curve], notes: dict[str, Any]) -> None:
    for key, part in block.items():
        if not isinstance(part, dict):
            if part is not None:
                notes[key.replace("_", " ")] = part
            continue
        label = VERDICTS.get(key, key.replace("_", " "))
        run = part.get("run")
        if isinstance(run, dict):
            points = _k_points(run.get("pass_hat_k") or run.get("pass_k") or {})
            if points:
                curves.append(Curve(label, points))
            for caveat in CAVEATS:
                value = run.get(caveat)
                if value:
                    notes[f"{label}, {caveat.replace('_', ' ')}"] = len(value) if isinstance(value, list) else value
        for domain, result in sorted((part.get("domains") or {}).items()):
            points = (
                _k_points(result.get("pass_hat_k") or result.get("pass_k") or {}) if isinstance(result, dict) else []
            )
            if points:
                curves.append(Curve(f"{domain}: {label}", points, overall=False))
        if part.get("not_evaluated"):
            notes[f"{label}, components not evaluated"] = part["not_evaluated"]


def _find_curves(node: Any, path: list[str], curves: list[Curve], notes: dict[str, Any]) -> None:
    name = " / ".join(path) or "pass^k"
    if isinstance(node, dict):
        points = _k_points(node)
        if points:
            curves.append(Curve(name, points))
            return
        for key, value in node.items():
            _find_curves(value, [*path, str(key)], curves, notes)
    elif isinstance(node, list) and node and all(_is_number(v) for v in node):
        curves.append(Curve(name, [(i + 1, float(v)) for i, v in enumerate(node)]))
    elif isinstance(node, list) and node and all(isinstance(v, dict) and "k" in v for v in node):
        points = []
        for item in node:
            value = next((item[k] for k in ("value", "pass_k", "rate", "score") if _is_number(item.get(k))), None)
            if _is_number(item["k"]) and value is not None:
                points.append((int(item["k"]), float(value)))
        if points:
            curves.append(Curve(name, sorted(points)))
    elif path and not isinstance(node, dict | list):
        notes[name] = node


def _k_points(mapping: object) -> list[tuple[int, float]]:
    """``{"1": 0.8, "2": 0.6, "3": null}`` -> [(1, 0.8), (2, 0.6)]; [] when a key is not a k."""
    if not isinstance(mapping, dict) or not mapping:
        return []
    points = []
    for key, value in mapping.items():
        match = _K_KEY.match(str(key).strip())
        if not match or not (value is None or _is_number(value)):
            return []
        if value is not None:
            points.append((int(match[1]), float(value)))
    return sorted(points)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _computed_block(run: Run) -> dict[str, Any]:
    """The run's part of a ``pass_hat_k`` block, from :func:`~pytest_tau2.report.pass_k.pass_k` over
    the trials as ``report/leaderboard.py`` reads them: the six-signal verdict of every result, and
    tau2's reward of the tau2 tasks (a missing reward is not a valid trial). A scenario that left
    no result is a lost trial of its task. K is the trials each task was meant to have (or, in a
    folder that does not say, the most any task got)."""
    results = run.scenarios
    per_task = Counter(r.scenario for r in results)
    k = max([r.trials or 1 for r in results] + list(per_task.values()), default=1)
    lost = [
        Trial(split_trial_id(e.name)[0], e.name.split("__", 1)[0], None, infrastructure_error=True)
        for e in run.errors_without_result
    ]
    six_signal = [_six_signal_trial(r) for r in results] + lost
    tau2 = [_tau2_reward_trial(r) for r in results if r.tau2_id is not None or r.signal("tau2_reward") is not None]
    tau2 += [trial for trial in lost if trial.domain.startswith("tau2_")]
    return {
        "six_signal": {"run": pass_k(six_signal, k).to_dict()},
        "tau2_reward": {"run": pass_k(tau2, k).to_dict() if tau2 else None},
    }


def _domain(result: ScenarioResult) -> str:
    return result.domain or result.scenario.split("__", 1)[0]


def _six_signal_trial(result: ScenarioResult) -> Trial:
    verdict = result.is_successful if isinstance(result.is_successful, bool) else None
    return Trial(result.scenario, _domain(result), verdict, bool(result.infrastructure_error))


def _tau2_reward_trial(result: ScenarioResult) -> Trial:
    reward = result.signal("tau2_reward")
    if result.infrastructure_error or reward is None:
        return Trial(result.scenario, _domain(result), None, infrastructure_error=True)
    return Trial(result.scenario, _domain(result), abs(float(reward) - 1.0) <= REWARD_TOLERANCE)
