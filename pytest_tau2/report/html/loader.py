"""Read a results folder into typed records for the report: which files, and what the page derives.

The files are read through the result record (:mod:`pytest_tau2.report.record`): every field
has a default, so a folder written by an older or newer version loads, and a field this version
does not know is kept in ``model_extra`` and shown as-is in the scenario panel. A file that is
not valid JSON, or a known field of the wrong type, is a :class:`ReportInputError` naming the
file and the field.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import orjson
from pydantic import PrivateAttr, ValidationError

from pytest_tau2.errors import Tau2Error
from pytest_tau2.report import files
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.run_record import ErrorEntry, RunMetrics
from pytest_tau2.scoring.signals import SuccessSignal, signal_specs
from pytest_tau2.scoring.tau2_signal import TAU2_REWARD

METRICS = "metrics.json"
ALL_METRICS = "all_metrics.json"
SUMMARY = "all_summary.txt"
RUN_INFO = "run.json"
TRANSCRIPT = "transcript.json"
JUDGE = "judge_result.json"
METADATA = "scenario_config/metadata.json"
RAW_FILES = (
    METRICS,
    TRANSCRIPT,
    JUDGE,
    "final_db.json",
    "final_user_db.json",
    METADATA,
    "scenario_config/agent_prompt.txt",
    "scenario_config/user_prompt.txt",
    "call.wav",
    "scenario_config/tools.json",
)
"""The per-scenario files the panel links to, when they exist."""


class ReportInputError(Tau2Error):
    """A results folder the report cannot read (missing, not JSON, a field of the wrong type)."""


class ScenarioResult(ScenarioRecord):
    """One metrics.json (the result record, :mod:`pytest_tau2.report.record`), with what the page
    derives from it: its row key, outcome, markers and totals."""

    replayed: Any = None
    """A marker of model traffic replayed from a cassette, written by earlier versions."""

    _of_several_trials: bool = PrivateAttr(default=True)
    """Set by the loader: False when the run has one trial per scenario (the index is then noise)."""

    @property
    def shown_trial(self) -> int | None:
        """The trial index, when the run has several trials of a scenario."""
        return self.trial if self._of_several_trials else None

    @property
    def key(self) -> str:
        """The row identity: the scenario name, with the trial index when trials were run."""
        trial = self.shown_trial
        return self.scenario if trial is None else f"{self.scenario}-t{trial}"

    @property
    def outcome(self) -> str:
        """``error`` (infrastructure), ``passed``, ``failed`` or ``n/a``."""
        if self.infrastructure_error:
            return "error"
        if self.is_successful is True:
            return "passed"
        if self.is_successful == "N/A":
            return "n/a"
        return "failed"

    @property
    def markers(self) -> list[str]:
        """Tags for the table: ``resumed``, ``replayed`` / ``recorded`` (model traffic), ``stalled``."""
        recording = self.recording
        found = ["resumed"] if self.resumed else []
        if self.replayed or (recording is not None and recording.replayed_calls):
            found.append("replayed")
        if recording is not None and recording.recorded_calls:
            found.append("recorded")
        return [*found, "stalled"] if self.stalled else found

    @property
    def failed_signals(self) -> list[str]:
        """The gating signals that failed, as signal names; ``stalled`` when the agent stalled."""
        key_of = {spec.metric: spec.key for spec in signal_specs()}
        names = [key_of.get(name, name) for name in self.success_breakdown.failed]
        return [*names, "stalled"] if self.stalled else names

    @property
    def cost_usd(self) -> float | None:
        """Cost over every side; None when any side that made calls was unpriced."""
        total = 0.0
        for usage in self.token_usage.values():
            if usage.cost_usd is None:
                if usage.calls:
                    return None
                continue
            total += usage.cost_usd
        return total

    @property
    def total_tokens(self) -> int:
        return sum(u.total_tokens or u.prompt_tokens + u.completion_tokens for u in self.token_usage.values())


def known_fields() -> list[str]:
    """The metrics fields the page shows in their own places; the scenario panel lists the others
    under "Other fields": the record's fixed fields, the six signals' values and evidence, and the
    tau2 reward and its breakdown (the panel's reward block)."""
    shown = set(ScenarioResult.model_fields)
    for spec in signal_specs():
        if spec.key in SuccessSignal.__members__.values():
            shown.update(name for name in (spec.metric, spec.evidence_field) if name)
    shown.update((TAU2_REWARD.metric, "tau2_reward_breakdown"))
    return sorted(shown)


@dataclass
class ErrorWithoutResult:
    """A scenario that ended before writing metrics.json (named in all_metrics.json)."""

    name: str
    reason: str = ""


@dataclass
class Run:
    """One results folder."""

    path: Path
    scenarios: list[ScenarioResult]
    folders: dict[str, Path]
    """Scenario key -> its folder (absent when the folder was not found)."""
    errors_without_result: list[ErrorWithoutResult] = field(default_factory=list)
    summary_text: str = ""
    pass_k: Any = None
    """all_metrics.json's ``pass_hat_k`` block as written (see passk.py)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Other top-level keys of all_metrics.json, shown as-is."""
    info: dict[str, Any] = field(default_factory=dict)
    """run.json when the folder has one: the run's settings fingerprint, version, start time, shard."""


def read_json(path: Path) -> Any:
    try:
        return files.loads(path.read_bytes())
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as exc:  # not JSON, not UTF-8, nested past reading
        raise ReportInputError(f"{path}: cannot be read as JSON ({exc})") from None


def parse_scenario(data: object, where: str) -> ScenarioResult:
    if not isinstance(data, dict):
        raise ReportInputError(f"{where}: expected a metrics object, found {type(data).__name__}")
    try:
        return ScenarioResult.read(data)
    except ValidationError as exc:
        raise ReportInputError(f"{where}: {_problems(exc)}") from exc


def _problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors(include_url=False)
    )


def load_run(path: Path) -> Run:
    """The results of one folder: all_metrics.json when present, else every */metrics.json."""
    path = Path(path)
    if not path.is_dir():
        raise ReportInputError(f"{path}: not a results folder (no such directory)")
    per_folder = _scan_metrics_files(path)  # keyed by (scenario, trial)
    all_metrics = path / ALL_METRICS
    top = RunMetrics()
    if all_metrics.is_file():
        raw = read_json(all_metrics)
        try:
            top = RunMetrics.read(raw, lambda item, i: parse_scenario(item, f"{all_metrics}: scenarios[{i}]"))
        except TypeError:
            raise ReportInputError(f"{all_metrics}: expected an object with a 'scenarios' list") from None
        except ValidationError as exc:
            raise ReportInputError(f"{all_metrics}: {_problems(exc)}") from exc
        scenarios = cast(list[ScenarioResult], top.scenarios)  # made by parse_scenario
    elif per_folder:
        scenarios = [result for result, _ in per_folder.values()]
    else:
        raise ReportInputError(f"{path}: no {ALL_METRICS} and no */{METRICS}: not a results folder")
    _mark_trials(scenarios)
    folders = {s.key: per_folder[(s.scenario, s.trial)][1] for s in scenarios if (s.scenario, s.trial) in per_folder}
    summary = path / SUMMARY
    return _run(
        path, scenarios, folders, top, summary.read_text("utf-8", errors="replace") if summary.is_file() else ""
    )


def run_of(path: Path, metrics: RunMetrics, summary_text: str) -> Run:
    """The run this process has just written into ``path``, from what it holds (all_metrics.json's
    document and the summary's text) instead of reading back the files it wrote: what
    :func:`load_run` would read there, without parsing every metrics.json and all_metrics.json
    again (~40 ms for 114 scenarios at the end of every run)."""
    path = Path(path)
    scenarios = [ScenarioResult.read(record) for record in metrics.scenarios]
    _mark_trials(scenarios)
    folders = {s.key: path / s.folder for s in scenarios if (path / s.folder / METRICS).is_file()}
    return _run(path, scenarios, folders, metrics, summary_text)


def _mark_trials(scenarios: list[ScenarioResult]) -> None:
    several = len({s.scenario for s in scenarios}) < len(scenarios) or any((s.trials or 1) > 1 for s in scenarios)
    for s in scenarios:
        s._of_several_trials = several


def _run(path: Path, scenarios: list[ScenarioResult], folders: dict[str, Path], top: RunMetrics, summary: str) -> Run:
    scenarios.sort(key=lambda s: (s.scenario, s.trial or 0))
    info = _optional_json(path / RUN_INFO)
    return Run(
        path=path,
        scenarios=scenarios,
        folders=folders,
        errors_without_result=[_error_entry(e) for e in top.errors_without_result],
        summary_text=summary,
        pass_k=top.pass_k_block(),
        extra={k: v for k, v in (top.model_extra or {}).items() if k != "pass_k"},
        info=info if isinstance(info, dict) else {},
    )


def _scan_metrics_files(path: Path) -> dict[tuple[str, int | None], tuple[ScenarioResult, Path]]:
    found: dict[tuple[str, int | None], tuple[ScenarioResult, Path]] = {}
    for metrics in sorted(path.glob(f"*/{METRICS}")):
        result = parse_scenario(read_json(metrics), str(metrics))
        found[(result.scenario, result.trial)] = (result, metrics.parent)
    return found


def _error_entry(entry: ErrorEntry) -> ErrorWithoutResult:
    return ErrorWithoutResult(entry.scenario, entry.why)


def load_details(folder: Path | None, *, text_limit: int = 20_000) -> dict[str, Any]:
    """What the scenario panel shows beyond metrics.json: transcript, judge, scenario definition.

    Long texts (a tool result dumping a whole table) are cut at ``text_limit`` characters with
    a marker; the raw file stays one click away.
    """
    if folder is None:
        return {}
    details: dict[str, Any] = {}
    transcript = _optional_json(folder / TRANSCRIPT)
    if isinstance(transcript, dict):
        details["messages"] = [_clip_message(m, text_limit) for m in transcript.get("messages") or []]
        details["initialization"] = transcript.get("initialization") or []
    judge = _optional_json(folder / JUDGE)
    if isinstance(judge, dict):
        details["judge"] = {
            "model": judge.get("model"),
            "error": judge.get("error"),
            "raw_reply": _clip(judge.get("raw_reply"), text_limit),
        }
    metadata = _optional_json(folder / METADATA)
    if isinstance(metadata, dict):
        keep = ("gold_actions", "reference_answer", "nl_assertions", "db_state_assertions", "max_turns")
        details["definition"] = {k: metadata[k] for k in keep if metadata.get(k) is not None}
    return details


def raw_files(folder: Path | None) -> list[str]:
    """The raw files of a scenario folder that exist, relative to it (two directory listings, not
    a look at each possible file)."""
    if folder is None:
        return []
    present: set[str] = set()
    for sub in {name.rpartition("/")[0] for name in RAW_FILES}:
        try:
            with os.scandir(folder / sub if sub else folder) as entries:
                present.update(f"{sub}/{e.name}" if sub else e.name for e in entries if e.is_file())
        except OSError:  # no such folder (no scenario_config/), or not readable: none of its files
            continue
    return [name for name in RAW_FILES if name in present]


SHOWN_DEPTH = 256
"""A saved file nested deeper than this is not shown (its raw file stays one click away): the
report's page could not be written with it."""


def _optional_json(path: Path) -> Any:
    """A scenario's optional file; None when it is missing, unreadable or nested past showing."""
    try:
        value = read_json(path)
    except (OSError, ValueError, RecursionError, ReportInputError):
        return None
    return value if _shallow(value, SHOWN_DEPTH) else None


def _shallow(value: object, limit: int) -> bool:
    """Whether ``value`` nests lists and objects at most ``limit`` deep (without recursing).

    orjson encodes at most 255 levels: a value it encodes is shallow enough for any ``limit`` from
    255 on, found at C speed (the walk below took ~20 ms of every report's 114 transcripts); a value
    it refuses (deeper, or an integer past 64 bits) is walked."""
    if limit >= 255:
        try:
            orjson.dumps(value)
        except (TypeError, orjson.JSONEncodeError):
            pass
        else:
            return True
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return True


def _clip(value: object, limit: int) -> object:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"\n… [{len(value) - limit} more characters in the raw file]"
    return value


def _clip_message(message: object, limit: int) -> object:
    if not isinstance(message, dict):
        return message
    return {k: _clip(v, limit) for k, v in message.items()}
