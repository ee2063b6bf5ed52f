"""ACTION_MATCH: does what the agent did match the scenario's ``reference_answer``?

Recorded actions are flattened to ``{"name": action_name, **arguments}`` and compared with
the reference recursively:

- dict vs dict: every reference key must be present and match (extra keys are allowed);
- dict vs list of dicts: the reference is compared with the *last* one (the final order);
- list vs list: every reference item must match a distinct predicted item, in any order;
  with ``disallow_extra_items`` the lengths must also be equal;
- strings are compared after the scenario's text normalisation flags;
- numbers (or numeric strings) are compared with an absolute tolerance of 1e-6, so the
  reference ``"11.49"`` matches the recorded ``11.49``.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

_PUNCT = str.maketrans("", "", string.punctuation)
_SPACES = re.compile(r"\s+")
TOLERANCE = 1e-6
_LEADING_ZERO = re.compile(r"^-?0\d")


@dataclass(frozen=True)
class TextFlags:
    ignore_capitalization: bool = True
    ignore_punctuation: bool = True
    clean_text: bool = True
    disallow_extra_items: bool = False


@dataclass(frozen=True)
class MatchResult:
    matched: bool
    reason: str = ""
    """Where and why the first mismatch happened (empty when matched)."""


def flatten_actions(actions: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
    """``[{"name", "arguments"}]`` -> ``[{"name": ..., **arguments}]``."""
    return [{"name": a["name"], **cast("Mapping[str, object]", a.get("arguments", {}))} for a in actions]


def match_reference(reference: object, actions: Sequence[Mapping[str, object]], flags: TextFlags) -> MatchResult:
    """Compare a scenario's reference answer with the recorded actions."""
    predicted = flatten_actions(actions)
    if isinstance(reference, dict) and not predicted:
        return MatchResult(False, "no action was recorded (expected one matching the reference)")
    return _compare(reference, predicted, "reference", flags)


def _compare(ref: object, pred: object, path: str, flags: TextFlags) -> MatchResult:
    if isinstance(ref, dict):
        if isinstance(pred, list) and pred and all(isinstance(p, dict) for p in pred):
            return _compare(ref, pred[-1], path, flags)
        if not isinstance(pred, dict):
            return MatchResult(False, f"{path}: expected an object, found {_show(pred)}")
        for key, ref_value in ref.items():
            if key not in pred:
                return MatchResult(False, f"{path}.{key}: missing (expected {_show(ref_value)})")
            result = _compare(ref_value, pred[key], f"{path}.{key}", flags)
            if not result.matched:
                return result
        return MatchResult(True)
    if isinstance(ref, list):
        if not isinstance(pred, list):
            return MatchResult(False, f"{path}: expected a list, found {_show(pred)}")
        if flags.disallow_extra_items and len(ref) != len(pred):
            return MatchResult(False, f"{path}: expected {len(ref)} items, found {len(pred)}")
        return _match_lists(ref, pred, path, flags)
    if _scalar_equal(ref, pred, flags):
        return MatchResult(True)
    return MatchResult(False, f"{path}: expected {_show(ref)}, found {_show(pred)}")


def _match_lists(ref: list[object], pred: list[object], path: str, flags: TextFlags) -> MatchResult:
    """Order-independent matching: each reference item to a distinct prediction (backtracking)."""
    candidates = [[j for j, p in enumerate(pred) if _compare(r, p, path, flags).matched] for r in ref]
    assignment: dict[int, int] = {}

    def assign(i: int, seen: set[int]) -> bool:  # augmenting path (Kuhn's algorithm)
        for j in candidates[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in assignment or assign(assignment[j], seen):
                assignment[j] = i
                return True
        return False

    for i, r in enumerate(ref):
        if not assign(i, set()):
            if not candidates[i]:
                nearest = _nearest_reason(r, pred, f"{path}[{i}]", flags)
                return MatchResult(False, nearest)
            return MatchResult(False, f"{path}[{i}]: {_show(r)} has no distinct match among the recorded items")
    return MatchResult(True)


def _nearest_reason(ref: object, pred: list[object], path: str, flags: TextFlags) -> str:
    if not pred:
        return f"{path}: expected {_show(ref)}, but nothing was recorded"
    # Report against the candidate that matched the most reference keys (ties: the first).
    best = max(range(len(pred)), key=lambda j: _agreement(ref, pred[j], flags))
    return _compare(ref, pred[best], path, flags).reason


def _agreement(ref: object, pred: object, flags: TextFlags) -> int:
    if isinstance(ref, dict) and isinstance(pred, dict):
        return sum(1 for k, v in ref.items() if k in pred and _compare(v, pred[k], k, flags).matched)
    return 0


def _scalar_equal(ref: object, pred: object, flags: TextFlags) -> bool:
    if isinstance(ref, bool) or isinstance(pred, bool):
        return ref is pred  # True never matches 1
    ref_num, pred_num = _as_number(ref), _as_number(pred)
    if ref_num is not None and pred_num is not None:
        return math.isclose(ref_num, pred_num, rel_tol=0.0, abs_tol=TOLERANCE)
    if isinstance(ref, str) and isinstance(pred, str):
        return normalize_text(ref, flags) == normalize_text(pred, flags)
    return bool(ref == pred)


def _as_number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip().lstrip("$").replace(",", "")
        if _LEADING_ZERO.match(text):
            return None  # "02134" is a code (zip, id), not the number 2134
        try:
            return float(text)
        except ValueError:
            return None
    return None


def normalize_text(text: str, flags: TextFlags) -> str:
    if flags.ignore_capitalization:
        text = text.casefold()
    if flags.ignore_punctuation:
        text = text.translate(_PUNCT)
    if flags.clean_text:
        text = _SPACES.sub(" ", text).strip()
    return text


def _show(value: object, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
