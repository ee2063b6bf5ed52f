"""pass^k curves of a run, read from all_metrics.json or computed from the trials' results.

all_metrics.json's ``pass_hat_k`` block (written by ``report/leaderboard.py``) is the
authority: per verdict (``six_signal``, ``tau2_reward``) a ``run`` result and one per domain,
each with ``pass_hat_k`` = {k: value or null above the tasks' valid trials}, and what was left
out (infrastructure errors, tasks short of trials, reward components not evaluated). A block
of another shape still gives curves: every mapping of k to a number in it becomes one, named by
its path. Without a block, runs with several trials per scenario get curves computed here.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_tau2.report.html.loader import Run, ScenarioResult

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
        return _computed_curves(run.scenarios), "computed from the trials' results", {}
    return [], "", {}


def _is_leaderboard_block(block: Any) -> bool:
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


def _k_points(mapping: Any) -> list[tuple[int, float]]:
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


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _computed_curves(results: list[ScenarioResult]) -> list[Curve]:
    """Per task C(c, k) / C(n, k) over its n valid trials (no infrastructure error), averaged over
    the tasks with n >= k; for the six-signal verdict and, where present, the tau2 reward."""
    tasks: dict[str, list[ScenarioResult]] = defaultdict(list)
    for r in results:
        tasks[r.scenario].append(r)
    verdicts: tuple[tuple[str, Callable[[ScenarioResult], bool], Callable[[ScenarioResult], bool]], ...] = (
        ("six-signal verdict", lambda r: r.is_successful is True, lambda r: r.is_successful != "N/A"),
        ("tau2 reward", lambda r: r.signal("tau2_reward") == 1.0, lambda r: r.signal("tau2_reward") is not None),
    )
    curves = []
    for name, ok, counted in verdicts:
        per_task = []
        for trials in tasks.values():
            valid = [t for t in trials if not t.infrastructure_error and counted(t)]
            per_task.append((len(valid), sum(1 for t in valid if ok(t))))
        top = max((n for n, _ in per_task), default=0)
        points = []
        for k in range(1, top + 1):
            values = [math.comb(c, k) / math.comb(n, k) for n, c in per_task if n >= k]
            if values:
                points.append((k, statistics.fmean(values)))
        if points:
            curves.append(Curve(name, points))
    return curves
