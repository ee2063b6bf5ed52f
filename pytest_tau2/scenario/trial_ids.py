"""Trials: how one scenario becomes K items, and the seed each trial passes to the models.

- The item id (and results folder) of trial k of K is ``<scenario>-t<k>``; with K = 1 it is the
  scenario name alone, so a one-trial run looks exactly as before trials existed.
- Trial k's seed is the k-th draw of ``random.Random(base_seed).randint(0, 1_000_000)``: the
  derivation upstream tau2's runner uses, so the default base seed 300 gives its trial seeds
  (626729, 373753, 361454, 1567, ...). The seed of a trial never depends on K or on which other
  trials run, so trial 3 of a 4-trial run and trial 3 of an 8-trial run are the same trial.
"""

from __future__ import annotations

import functools
import random
import re

DEFAULT_SEED = 300
SEED_RANGE = (0, 1_000_000)
_TRIAL_SUFFIX = re.compile(r"^(?P<name>.+)-t(?P<trial>[1-9][0-9]*)$")


@functools.cache
def _draws(base_seed: int, count: int) -> tuple[int, ...]:
    rng = random.Random(base_seed)
    return tuple(rng.randint(*SEED_RANGE) for _ in range(count))


def trial_seed(base_seed: int, trial: int) -> int:
    """The seed of trial ``trial`` (1-based) under ``base_seed``."""
    if trial < 1:
        raise ValueError(f"trials are numbered from 1; got trial {trial}")
    return _draws(base_seed, trial)[trial - 1]


def trial_id(name: str, trial: int, trials: int) -> str:
    """The item id and results-folder name of one trial: ``name`` alone when there is one trial."""
    if not 1 <= trial <= max(trials, 1):
        raise ValueError(f"trial {trial} is outside 1..{trials} for {name}")
    return name if trials == 1 else f"{name}-t{trial}"


def split_trial_id(item_id: str) -> tuple[str, int | None]:
    """``("tau2_retail__0", 2)`` for ``"tau2_retail__0-t2"``; ``(item_id, None)`` without a suffix."""
    match = _TRIAL_SUFFIX.match(item_id)
    if match is None:
        return item_id, None
    return match["name"], int(match["trial"])
