"""The results folder of one run: checked before anything runs, locked while the run writes,
and, with ``--tau2-resume``, read back so finished scenarios are not paid for twice.

- ``run.json`` records the settings *fingerprint*: everything that changes a verdict (the
  agent, user and judge and their model arguments minus secrets and endpoints, the data pin,
  the limits and other verdict options). A resume with another fingerprint is refused, naming
  the fields. The agent and user are named as the results name them: a conftest's own Python
  agent as ``python:<module>.<class>@<version>`` (report/identity.py), learned when its first
  scenario runs (:meth:`RunFolder.observe`); a resume whose items get another agent than the
  saved results had is refused at the first such item, before its conversation
  (:func:`resume_refusal`).
- The model servers' addresses (``api_base``) are recorded beside the fingerprint
  (``endpoints``), not in it: a local server restarted on another port, or CI shards each with
  their own server, do not change a verdict. A resume notes the change (:attr:`RunFolder.notes`).
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
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import IO, Any

from pytest_tau2 import __version__
from pytest_tau2.data.manifest import PIN_COMMIT
from pytest_tau2.errors import Tau2Error
from pytest_tau2.report import files
from pytest_tau2.report.identity import same_identity
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.run_record import LOCK_FILE, PARTICIPANT_KEYS, RUN_FILE, RunInfo
from pytest_tau2.settings import OPTIONS, Settings, all_options

NOT_VERDICT_FIELDS = frozenset(
    {
        "scenarios", "results_dir", "resume", "save_db", "llm_retries", "llm_timeout", "agent_timeout",
        "llm_transport", "concurrency", "record_mode", "cassette_dir", "extra", "data_dir", "agent_url", "shard",
        "ci_level", "baseline", "fail_on_regression", "alpha", "fail_under", "fail_under_bound",
        "budget", "estimate", "estimate_file", "estimate_from",
        "max_connections", "rpm", "tpm", "rate_limit_timeout", "progress_interval",
    }
)  # fmt: skip
"""Settings that change how a run is made or where it writes, never a verdict."""


class RunFolderError(Tau2Error):
    """The results folder cannot be used for this run (shown as a usage error before anything runs)."""


ENDPOINT_ARGS = ("api_base", "base_url")
"""Model arguments that say where the model server is, not what it answers: recorded in run.json's
``endpoints``, left out of the fingerprint (the cassette matcher treats them as transport too)."""


def fingerprint(settings: Settings) -> dict[str, Any]:
    """What must be equal for a saved verdict to stand in for a new run (secrets masked, the
    model servers' addresses left out: :func:`endpoints`)."""
    from pytest_tau2.run import participants

    values: dict[str, Any] = {}
    for field in fields(settings):
        if field.name in NOT_VERDICT_FIELDS or field.name.endswith(("_args", "_model")) or field.name == "sections":
            continue
        if field.name == "judge_prompt" and settings.judge_prompt == "ours":
            continue  # the default: run.json of a run with our prompt stays as it was before the option
        values[field.name] = getattr(settings, field.name)
    values["agent"] = participants.describe_agent(settings)
    values["user"] = participants.describe_user(settings)
    for side in ("agent", "user", "judge"):
        roles = settings.roles.side(side)
        safe = [_without_endpoint(role.config.safe_dict()) for role in roles]
        values[f"{side}_model"] = (safe if len(safe) > 1 else safe[0]) if safe else None  # a jury: every judge
    for option in all_options()[len(OPTIONS) :]:  # a domain's options (banking's retrieval, telecom's tasks)
        value = settings.option(option.name)
        if option.name.endswith("_args") or (option.name.endswith("_model") and not value):
            continue  # a model unset: the configuration's own; its arguments stay out, as every side's
        values[option.name] = value
    values["data_pin"] = PIN_COMMIT
    return json.loads(json.dumps(values, default=str, sort_keys=True))  # type: ignore[no-any-return]


def _without_endpoint(safe: dict[str, Any]) -> dict[str, Any]:
    return {**safe, "args": {k: v for k, v in safe["args"].items() if k not in ENDPOINT_ARGS}}


def endpoints(settings: Settings) -> dict[str, str]:
    """The model server of each side that names one (``api_base``/``base_url``; credentials masked)."""
    from pytest_tau2.llm.ratelimit import DEFAULT_OPENAI_BASE, endpoint_name

    out: dict[str, str] = {}
    for side in ("agent", "user", "judge"):
        role = settings.roles.first(side)
        if role is not None:
            args = role.config.safe_dict()["args"]
            where = next((args[k] for k in ENDPOINT_ARGS if isinstance(args.get(k), str)), None)
            if where:
                out[side] = where
                continue
            # No api_base: an OpenAI model goes where OPENAI_BASE_URL / OPENAI_API_BASE say (as
            # the wire path and litellm send it), which is worth showing as much as an api_base.
            provider, _, base = endpoint_name(role.config).partition(" ")
            named = next((n for n in ("OPENAI_BASE_URL", "OPENAI_API_BASE") if os.environ.get(n)), None)
            if provider == "openai" and named is not None and base != DEFAULT_OPENAI_BASE:
                out[side] = f"{base} (from {named})"
    return out


def endpoint_changes(saved: Mapping[str, object] | None, current: Mapping[str, object] | None) -> list[str]:
    """``agent model server: URL then, URL now`` for each side whose address differs."""
    saved, current = saved or {}, current or {}
    return [
        f"{side} model server: {saved.get(side) or '(default)'} then, {current.get(side) or '(default)'} now"
        for side in ("agent", "user", "judge")
        if saved.get(side) != current.get(side)
    ]


def differences(saved: Mapping[str, object], current: Mapping[str, object], *, skip: Sequence[str] = ()) -> list[str]:
    keys = sorted((set(saved) | set(current)) - set(skip))
    return [f"{k}: {saved.get(k)!r} then, {current.get(k)!r} now" for k in keys if saved.get(k) != current.get(k)]


def names_python(value: object) -> bool:
    """Whether a fingerprint's agent or user value names a participant a conftest made (``python:...``)."""
    values = value if isinstance(value, list) else [value]
    return any(isinstance(v, str) and v.startswith("python:") for v in values)


def resume_refusal(
    saved: Mapping[str, Mapping[str, object]], folder: str, agent: str, user: str, resumed: str | None
) -> str | None:
    """Why this item may not join the saved run it resumes (None: it may).

    ``saved`` holds the saved results by folder (:attr:`RunFolder.saved`). An item with a saved
    result must have the agent and user that result names; an item without one may not have a
    Python participant whose class made saved results at another version (an edited agent).
    Other agents for items without a result are allowed: a conftest may give scenarios agents of
    their own, and a changed agent is refused at the first item with a saved result. Checked
    before the item's conversation runs, so nothing is spent on a run that mixes two agents.
    """
    if not saved:
        return None
    for side, current in (("agent", agent), ("user", user)):
        own = saved.get(folder, {}).get(side)
        if isinstance(own, str) and own:
            if same_identity(own, current):
                continue
            then = own
        else:
            cls = current.split("@", 1)[0]
            names = {str(r.get(side) or "") for r in saved.values()}
            other = sorted(n for n in names if n.split("@", 1)[0] == cls and "@" in n and n != current)
            if not current.startswith("python:") or not other or current in names:
                continue
            then = other[0]
        return (
            f"--tau2-resume {resumed}: the saved results were made by the {side} {then}, this run's {side} "
            f"for {folder} is {current}: their verdicts would not be of one {side}. Resume with the same "
            f"{side} (a conftest's agent keeps its name while its class's source, or its tau2_version, "
            "is unchanged), or choose a new --tau2-results-dir"
        )
    return None


class RunFolder:
    def __init__(self, path: Path, settings: Settings) -> None:
        self.path = path
        self.settings = settings
        self.resuming = settings.resume is not None
        self.saved: dict[str, dict[str, Any]] = {}
        """Complete saved results by result folder name (the scenario's, or its trial's; resume only),
        as :meth:`ScenarioRecord.document` objects: plain values, so that they travel to xdist workers."""
        self.moved: list[str] = []
        self.notes: list[str] = []
        """What the user should know about the folder (a model server that moved since the saved run)."""
        self.info: RunInfo | None = None
        """run.json as written (its fingerprint's agent and user follow :meth:`observe`)."""
        self.observed: dict[str, set[str]] = {side: set() for side in PARTICIPANT_KEYS}
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
        where = endpoints(self.settings)
        if self.resuming:
            current = self._load(current, where)
        elif self._holds_results():
            self.close()
            raise RunFolderError(
                f"results folder {path} already holds results of another run: choose a new --tau2-results-dir, "
                f"or continue that run with --tau2-resume={path} in place of --tau2-results-dir"
            )
        self.info = RunInfo(
            fingerprint=current,
            pytest_tau2=__version__,
            started=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            resumed=self.resuming,
            shard=self.settings.shard,  # --tau2-shard I/N (pytest-tau2 merge checks the set); not verdict
            **({"endpoints": where} if where else {}),
        )
        files.write_json(path / RUN_FILE, self.info.document())

    def observe(self, agent: str, user: str) -> None:
        """A result of this run names its agent and user: run.json's fingerprint names them too
        (one name, or the sorted names when items had different ones), rewritten when that changes."""
        if self.info is None:
            return
        changed = False
        for side, name in zip(PARTICIPANT_KEYS, (agent, user), strict=True):
            if not name or name in self.observed[side]:
                continue
            self.observed[side].add(name)
            names = sorted(self.observed[side])
            value: str | list[str] = names[0] if len(names) == 1 else names
            if self.info.fingerprint.get(side) != value:
                self.info.fingerprint[side] = value
                changed = True
        if changed:
            files.write_json(self.path / RUN_FILE, self.info.document())

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

    def _load(self, current: dict[str, Any], where: dict[str, str]) -> dict[str, Any]:
        """Check the saved run against this one; the fingerprint run.json keeps (a saved
        conftest agent's name stays until this run's results name theirs)."""
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
        # A saved conftest agent (python:...) is compared item by item, as each item's own agent
        # is known (resume_refusal): the options alone cannot tell which agent this run has.
        named = [side for side in PARTICIPANT_KEYS if names_python(saved.get(side))]
        changed = differences(saved, current, skip=named)
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
        moved = endpoint_changes(run.endpoints, where)
        if moved:
            self.notes.append(
                "the model server moved since the saved run (not part of the fingerprint: its results stand): "
                + "; ".join(moved)
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
        return {**current, **{side: saved[side] for side in named}}


def _complete(folder: Path) -> ScenarioRecord | None:
    """The saved result of one scenario folder when it is whole (metrics.json is written last)."""
    try:
        data = files.loads((folder / "metrics.json").read_bytes())
        record = ScenarioRecord.read(data) if isinstance(data, dict) else None
    except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
        return None
    return record if record is not None and record.written("scenario", "is_successful") else None
