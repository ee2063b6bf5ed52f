"""The results folder of one run: checked before anything runs, locked while the run writes,
and, with ``--tau2-resume``, read back so finished scenarios are not paid for twice.

- ``run.json`` records the settings *fingerprint*: everything that changes a verdict (the
  agent, user and judge and their model arguments minus secrets, the data pin, the limits and
  other verdict options). A resume with another fingerprint is refused, naming the fields.
- ``.tau2.lock`` is held (``flock``) by the process that owns the folder for the whole run; a
  second run into the same folder is refused.
- A folder that already holds results is refused unless resuming.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
import shutil
from dataclasses import fields
from pathlib import Path
from typing import IO, Any

from pytest_tau2 import __version__
from pytest_tau2.data.manifest import PIN_COMMIT
from pytest_tau2.errors import Tau2Error
from pytest_tau2.report import files
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.run_record import RunInfo
from pytest_tau2.settings import Settings

RUN_FILE = "run.json"
LOCK_FILE = ".tau2.lock"
NOT_VERDICT_FIELDS = frozenset(
    {
        "scenarios", "results_dir", "resume", "save_db", "llm_retries", "llm_timeout", "agent_timeout",
        "llm_transport", "concurrency", "record_mode", "cassette_dir", "extra", "data_dir", "agent_url", "shard",
    }
)  # fmt: skip
"""Settings that change how a run is made or where it writes, never a verdict."""


class RunFolderError(Tau2Error):
    """The results folder cannot be used for this run (shown as a usage error before anything runs)."""


def fingerprint(settings: Settings) -> dict[str, Any]:
    """What must be equal for a saved verdict to stand in for a new run (secrets masked)."""
    from pytest_tau2.run import participants

    values: dict[str, Any] = {}
    for field in fields(settings):
        if field.name in NOT_VERDICT_FIELDS or field.name.endswith(("_args", "_model")):
            continue
        values[field.name] = getattr(settings, field.name)
    values["agent"] = participants.describe_agent(settings)
    values["user"] = participants.describe_user(settings)
    for side in ("agent", "user", "judge"):
        config = participants.model_config(settings, side)
        values[f"{side}_model"] = config.safe_dict() if config is not None else None
    values["data_pin"] = PIN_COMMIT
    return json.loads(json.dumps(values, default=str, sort_keys=True))  # type: ignore[no-any-return]


def differences(saved: dict[str, Any], current: dict[str, Any]) -> list[str]:
    keys = sorted(set(saved) | set(current))
    return [f"{k}: {saved.get(k)!r} then, {current.get(k)!r} now" for k in keys if saved.get(k) != current.get(k)]


class RunFolder:
    def __init__(self, path: Path, settings: Settings) -> None:
        self.path = path
        self.settings = settings
        self.resuming = settings.resume is not None
        self.saved: dict[str, dict[str, Any]] = {}
        """Complete saved results by result folder name (the scenario's, or its trial's; resume only),
        as :meth:`ScenarioRecord.document` objects: plain values, so that they travel to xdist workers."""
        self.moved: list[str] = []
        self._lock: IO[str] | None = None

    def open(self) -> None:
        """Check, lock and prepare the folder; raises :class:`RunFolderError` naming the problem."""
        path = self.path
        if path.exists() and not path.is_dir():
            raise RunFolderError(f"results folder {path} is a file, not a folder: choose another --tau2-results-dir")
        try:
            path.mkdir(parents=True, exist_ok=True)
            probe = path / f".tau2-write-check.{os.getpid()}"
            probe.write_text("ok", "utf-8")
            probe.unlink()
        except OSError as exc:
            raise RunFolderError(f"results folder {path} is not writable ({exc.strerror or exc})") from None
        self._take_lock()
        current = fingerprint(self.settings)
        if self.resuming:
            self._load(current)
        elif self._holds_results():
            self.close()
            raise RunFolderError(
                f"results folder {path} already holds results of another run: choose a new --tau2-results-dir, "
                f"or continue that run with --tau2-resume={path} in place of --tau2-results-dir"
            )
        info = RunInfo(
            fingerprint=current,
            pytest_tau2=__version__,
            started=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            resumed=self.resuming,
            shard=self.settings.shard,  # --tau2-shard I/N (pytest-tau2 merge checks the set); not verdict
        )
        files.write_json(path / RUN_FILE, info.document())

    def close(self) -> None:
        if self._lock is not None:
            (self.path / LOCK_FILE).unlink(missing_ok=True)  # while still held: no other run can be in it
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    def _take_lock(self) -> None:
        handle = (self.path / LOCK_FILE).open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise RunFolderError(
                f"results folder {self.path} is in use by another run ({holder}); wait for it to finish "
                "or choose another --tau2-results-dir"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {os.uname().nodename}")
        handle.flush()
        self._lock = handle

    def _holds_results(self) -> bool:
        if (self.path / "all_metrics.json").exists():  # run.json alone: a run that ran no scenario
            return True
        return any(child.is_dir() and (child / "metrics.json").exists() for child in self.path.iterdir())

    def _load(self, current: dict[str, Any]) -> None:
        run_file = self.path / RUN_FILE
        try:
            run = RunInfo.model_validate(files.loads(run_file.read_text("utf-8")))
            saved, saved_shard = run.fingerprint, run.shard
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.close()
            raise RunFolderError(
                f"--tau2-resume {self.path}: no readable {RUN_FILE} there (not a pytest-tau2 results folder, "
                "or one written before resume existed)"
            ) from None
        changed = differences(saved, current)
        if changed:
            self.close()
            raise RunFolderError(
                f"--tau2-resume {self.path}: the settings differ from the saved run's, so its verdicts "
                "would not stand for this one: " + "; ".join(changed)
            )
        if saved_shard != self.settings.shard:
            self.close()
            raise RunFolderError(
                f"--tau2-resume {self.path}: that run was --tau2-shard {saved_shard or '(none)'}, this one is "
                f"--tau2-shard {self.settings.shard or '(none)'}: resume a shard with the same --tau2-shard"
            )
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        for child in sorted(self.path.iterdir()):
            if not child.is_dir() or ".killed." in child.name or ".rerun." in child.name:
                continue
            metrics = _complete(child)
            if metrics is not None and not metrics.infrastructure_error:
                self.saved[child.name] = metrics.document()
                continue
            # In flight when the run stopped (no metrics.json), or errored: run again, keep the old files.
            suffix = "killed" if metrics is None else "rerun"
            target = child.with_name(f"{child.name}.{suffix}.{stamp}")
            shutil.move(str(child), str(target))
            self.moved.append(target.name)


def _complete(folder: Path) -> ScenarioRecord | None:
    """The saved result of one scenario folder when it is whole (metrics.json is written last)."""
    try:
        data = files.loads((folder / "metrics.json").read_bytes())
        record = ScenarioRecord.read(data) if isinstance(data, dict) else None
    except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
        return None
    return record if record is not None and record.written("scenario", "is_successful") else None
