"""Upstream runs in: an upstream ``Results`` file (or a folder of them) as saved conversations by task and trial.

``--tau2-agent replay:FILE --tau2-user replay`` replays each simulation of FILE (both sides' saved
turns, no model called) as trial ``trial + 1`` of the scenario of its task: upstream numbers
trials from 0, our items are ``<name>-t<k>`` from 1. FILE is what ``tau2 run`` saves (or what
``pytest-tau2 export`` writes), or a folder of such files (one per domain; ``submission.json`` and
other JSON files without ``simulations`` are left alone).

A file is read once per process and checked whole when pytest starts: a file that is not a
Results document, or that holds one task's trial twice, is refused naming the file and what is
wrong (docs/replay.md).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from pytest_tau2.tau2_format import models


class UpstreamRunsError(ValueError):
    """The upstream results file (or folder) cannot be replayed; names the file and the reason."""


@dataclass(frozen=True)
class SavedRun:
    """One upstream simulation: which task and trial (1-based), its messages, what upstream scored."""

    file: Path
    domain: str
    task_id: str
    trial: int
    simulation: models.SimulationRun

    @property
    def reward(self) -> float | None:
        info = self.simulation.reward_info
        return None if info is None else info.reward

    @property
    def scored(self) -> bool:
        """Whether upstream scored this run at all (it gives 0.0 to every other termination)."""
        return self.simulation.termination_reason in models.SCORED_TERMINATIONS


@dataclass(frozen=True)
class UpstreamRuns:
    path: Path
    runs: dict[tuple[str, str, int], SavedRun]
    """By (upstream domain, task id, trial from 1)."""

    def find(self, domain: str, task_id: str, trial: int) -> SavedRun | None:
        return self.runs.get((domain, str(task_id), trial))

    @property
    def max_trial(self) -> int:
        return max((trial for _, _, trial in self.runs), default=0)


@functools.cache
def is_results(path: str) -> bool:
    """Whether ``path`` (a ``replay:`` argument) is an upstream Results file or a folder of them,
    rather than a JSON Lines replay file of tool calls."""
    target = Path(path)
    if target.is_dir():
        return True
    if not target.is_file():
        return False
    try:
        data = json.loads(target.read_text("utf-8"))
    except (OSError, ValueError):  # JSON Lines of several objects do not parse as one document
        return False
    except RecursionError:  # nested past reading: what its start says; the reader then names the file
        return _looks_like_results(target)
    return isinstance(data, dict) and "simulations" in data and "info" in data


@functools.cache
def load_runs(path: str) -> UpstreamRuns:
    """Every simulation of the file, or of every Results file of the folder, by (domain, task, trial)."""
    target = Path(path)
    if target.is_dir():
        files = [f for f in sorted(target.glob("*.json")) if _looks_like_results(f)]
        if not files:
            raise UpstreamRunsError(f"{target}: no upstream Results file (*.json with 'simulations') in the folder")
    elif target.is_file():
        files = [target]
    else:
        raise UpstreamRunsError(f"{target} does not exist (from --tau2-agent replay:{path})")
    runs: dict[tuple[str, str, int], SavedRun] = {}
    for file in files:
        for run in _read(file):
            key = (run.domain, run.task_id, run.trial)
            if key in runs:
                other = runs[key]
                raise UpstreamRunsError(
                    f"{file}: task {run.task_id!r} trial {run.trial - 1} appears twice (simulations "
                    f"{other.simulation.id!r} and {run.simulation.id!r}); one trial replays one conversation"
                )
            runs[key] = run
    return UpstreamRuns(target, runs)


def _looks_like_results(file: Path) -> bool:
    try:
        head = file.read_text("utf-8")[:4096]
    except OSError:
        return False
    return '"simulations"' in head or '"info"' in head


def _read(file: Path) -> list[SavedRun]:
    try:
        results = models.Results.model_validate_json(file.read_bytes())
    except OSError as exc:
        raise UpstreamRunsError(f"{file}: not readable ({exc.strerror or exc})") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise UpstreamRunsError(
            f"{file}: not an upstream Results file: {where + ': ' if where else ''}{first['msg']} "
            f"({exc.error_count()} problems)"
        ) from None
    out = []
    for index, sim in enumerate(results.simulations):
        if sim.trial is None or sim.trial < 0:
            raise UpstreamRunsError(f"{file}: simulations[{index}] ({sim.id}) has no trial number")
        out.append(SavedRun(file, results.domain, str(sim.task_id), sim.trial + 1, sim))
    return out
