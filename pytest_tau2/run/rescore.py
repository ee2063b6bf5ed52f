"""``pytest-tau2 rescore DIR --into NEW``: score every saved conversation of a results folder again.

No agent or user model is called: each trial's saved transcript is said again by both sides
(conversation/transcript_replay.py) through the one pipeline (run/pipeline.py, by way of
:class:`~pytest_tau2.run.trial.Trial`), so the seeding, the tools, the gold replay, the judge, the
signals and the verdict are the run's own, and the new folder is written by the run's own writers
(report/saving.py, report/views.py). What may change is what scores:

- the scenario definitions as they are now (like ``tau2 evaluate-trajs --fresh-tasks``): an edited
  task is scored against its new gold actions, assertions and reward basis;
- ``--tau2-judge-model`` (one or several), ``--tau2-judge-args``, ``--tau2-judge-prompt``: a new
  judge. Without a judge option the saved verdicts are used again (no judge call) as long as the
  scenario's assertions are the ones they grade;
- ``--tau2-verdict``: the other verdict.

The saved run's settings that shape a conversation (limits, trials, seed, telecom task set,
retrieval) are carried over from its run.json; the new run.json's fingerprint says
``rescored_from`` and ``rescored`` lists what changed. Judge calls go through the trial's cassette
(``--tau2-record-mode``), so a re-score recorded once replays offline.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_tau2 import __version__
from pytest_tau2.conversation.transcript_replay import differing_tool_results, replay_sides, saved_messages
from pytest_tau2.errors import InfrastructureError, SettingsError, Tau2Error
from pytest_tau2.report import agreement, files, uncertainty
from pytest_tau2.report.junit_write import write_junit
from pytest_tau2.report.leaderboard import pass_hat_k_document
from pytest_tau2.report.merge import JUNIT_NAME, ShardFolder, read_folder
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.run_record import RUN_FILE, ErrorEntry, RunInfo, RunMetrics
from pytest_tau2.report.saving import ResultWriter
from pytest_tau2.report.summary import render
from pytest_tau2.report.views import VIEWS, RunFiles, write_views
from pytest_tau2.run.catalog import Catalog
from pytest_tau2.run.participants import validate_settings
from pytest_tau2.run.run_folder import differences, fingerprint
from pytest_tau2.run.session import close_model_clients
from pytest_tau2.run.trial import Trial
from pytest_tau2.scoring.signals import JudgeOutcome
from pytest_tau2.settings import Settings, resolve

CARRIED = (
    "min_agent_turns", "max_turns", "max_duration", "max_tool_errors", "max_user_steps", "max_messages",
    "max_tokens", "max_cost", "price", "trials", "seed",
    "verdict", "telecom_tasks", "retrieval", "allow_unpinned_data", "eval_data_root", "judge_prompt",
    "embedding_model", "reranker_model", "prompts",
)  # fmt: skip
"""Settings taken from the saved run.json (a command-line option given to rescore wins)."""
OPTIONS = (
    "judge_model", "judge_args", "judge_prompt", "verdict", "record_mode", "cassette_dir", "llm_retries",
    "llm_timeout", "llm_transport", "data_dir", "allow_unpinned_data", "eval_data_root", "concurrency",
    "ci_level", "junit_properties",
)  # fmt: skip
"""The ``--tau2-*`` options rescore takes."""
FROM_SAVED_RUN = ("agent", "user", "agent_model", "user_model", "embedding_model", "reranker_model")
"""Fingerprint keys that stay the saved run's: the conversations are its."""


class RescoreError(Tau2Error):
    """The folder cannot be re-scored as asked (the message names it and why)."""


class JudgeUnreachable(RescoreError):
    """The new judge cannot be reached (credentials, nothing at its address, every retry failed):
    the re-score stops at the first such error, as a pytest run does, and writes no folder."""


@dataclass
class SavedJudge:
    """The saved run's verdicts, used again when no judge option is given (no model call)."""

    verdicts: list[Mapping[str, Any]]
    model: str | None

    async def judge(self, assertions: list[str], transcript: Sequence[Mapping[str, object]]) -> JudgeOutcome:
        saved = [str(v.get("assertion")) for v in self.verdicts]
        if saved != list(assertions):
            raise InfrastructureError(
                f"the scenario's NL assertions are not the ones the saved judge graded ({len(saved)} saved, "
                f"{len(assertions)} now, or their text changed): re-judge them with --tau2-judge-model"
            )
        return JudgeOutcome([dict(v) for v in self.verdicts], [], None, None, self.model)


@dataclass
class Rescored:
    into: Path
    records: list[ScenarioRecord]
    errors: list[ErrorEntry]
    info: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    new_errors: list[str] = field(default_factory=list)
    """One line per infrastructure error of this re-score (a judge that could not grade), not the saved run's."""

    def count_line(self) -> str:
        """What was re-scored: results scored, infrastructure errors, results without a result."""
        infra = sum(1 for r in self.records if r.infrastructure_error)
        scored = len(self.records) - infra
        return (
            f"re-scored {len(self.records)} results: {scored} scored, {infra} infrastructure errors "
            f"({len(self.new_errors)} of them new in this re-score); {len(self.errors)} without a result"
        )


def settings_for(folder: ShardFolder, cli: Mapping[str, Any], into: Path, environ: Mapping[str, str]) -> Settings:
    """The re-score's settings: the saved run's (CARRIED), then the given options, then the environment."""
    saved = {k: folder.fingerprint[k] for k in CARRIED if folder.fingerprint.get(k) is not None}
    saved.setdefault("prompts", "seed")  # a run from before --tau2-prompts had the seed prompts
    try:
        values = resolve(dict(cli), saved, dict(environ))
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    values.update(results_dir=str(into), resume=None, shard=None, scenarios=None, agent=None, user=None)
    settings = Settings(**{k: v for k, v in values.items() if k in Settings.__dataclass_fields__})
    validate_settings(settings)
    return settings


def _saved_judge_label(folder: ShardFolder) -> str:
    saved = folder.fingerprint.get("judge_model")
    if isinstance(saved, list):
        return ",".join(str(s.get("model")) for s in saved if isinstance(s, Mapping))
    return str(saved.get("model")) if isinstance(saved, Mapping) else "the saved judge"


async def _one(
    record: ScenarioRecord,
    folder: ShardFolder,
    settings: Settings,
    catalog: Catalog,
    writer: ResultWriter,
    keep_verdicts: bool,
) -> tuple[ScenarioRecord | None, ErrorEntry | None, int]:
    """One saved trial scored again: its new record (or why it has none) and its changed tool results."""
    where = folder.path / record.folder
    try:
        scenario = catalog.instance(record.scenario)
    except KeyError:
        broken = catalog.errors.get(f"{record.domain}__unavailable")  # its domain could not be read
        why = f"{type(broken).__name__}: {broken}" if broken is not None else _not_registered(record, where)
        return None, ErrorEntry(scenario=record.folder, reason=why), 0
    except Exception as exc:  # a broken domain or class: this item's error, never the whole re-score's
        return None, ErrorEntry(scenario=record.folder, reason=f"{type(exc).__name__}: {exc}"), 0
    transcript = where / "transcript.json"
    try:
        messages = saved_messages(files.loads(transcript.read_bytes()))
    except (OSError, ValueError, RecursionError) as exc:
        return None, ErrorEntry(scenario=record.folder, reason=f"{transcript} is not readable: {exc}"), 0
    try:
        return await _rescored(record, scenario, messages, settings, writer, keep_verdicts)
    except JudgeUnreachable:
        raise  # every later trial would fail the same way: the re-score stops (rescore())
    except Tau2Error as exc:  # bad data, a malformed gold definition: this item's error
        return None, ErrorEntry(scenario=record.folder, reason=f"{type(exc).__name__}: {exc}"), 0
    except Exception as exc:  # what a saved file the checks above let through made fail: this item's error
        reason = f"{transcript}: could not be re-scored: {type(exc).__name__}: {exc}"
        return None, ErrorEntry(scenario=record.folder, reason=reason), 0


async def _rescored(
    record: ScenarioRecord,
    scenario: Any,
    messages: list[Mapping[str, object]],
    settings: Settings,
    writer: ResultWriter,
    keep_verdicts: bool,
) -> tuple[ScenarioRecord | None, ErrorEntry | None, int]:
    agent, user = replay_sides(
        messages,
        stop_reason=record.stop_reason,
        error=record.infrastructure_error,
        agent=record.agent,
        user=record.user,
    )
    trial = Trial(scenario, settings, trial=int(record.trial or 1))
    judge: Any = None
    if not keep_verdicts:
        judge = trial.judge
    elif scenario.nl_assertions and agreement.nl_verdicts(record):
        judge = SavedJudge(list(agreement.nl_verdicts(record)), _model_of(record))
    try:
        outcome = await trial.run(agent, user, judge)
    except Tau2Error as exc:  # bad data, a malformed gold definition: this item's error
        return None, ErrorEntry(scenario=record.folder, reason=f"{type(exc).__name__}: {exc}"), 0
    failed = outcome.judge_error
    if failed is not None and getattr(failed, "fatal", False) and not keep_verdicts:
        # Every later judge call would fail the same way: stop here, naming the judge and the cause.
        label = ",".join(role.model for role in settings.roles.judges)
        raise JudgeUnreachable(f"the judge {label} cannot be reached (re-scoring {record.folder}): {failed}")
    result = trial.result(outcome, agent, user)
    failure = writer.save(result.payload)
    if failure is not None:
        return None, ErrorEntry(scenario=record.folder, reason=f"not saved: {failure}"), 0
    return result.metrics, None, differing_tool_results(messages, outcome.conversation.transcript)


def _not_registered(record: ScenarioRecord, where: Path) -> str:
    """Why a saved scenario has no class now: no scenario of that name is registered by this project
    (the saved class is named, never imported)."""
    saved_class = "?"
    try:
        metadata = files.loads((where / "scenario_config" / "metadata.json").read_bytes())
        saved_class = str(metadata["class"]) if isinstance(metadata, Mapping) else "?"
    except (OSError, ValueError, KeyError, RecursionError):
        pass
    return (
        f"{record.scenario} is not a scenario now: no scenario of that name is registered by this project "
        f"(its saved class {saved_class!r} is not imported from a results folder; --import MODULE registers it)"
    )


def _model_of(record: ScenarioRecord) -> str | None:
    judges = record.models.get("judges")
    if isinstance(judges, list):
        return ", ".join(str(j.get("model")) for j in judges if isinstance(j, Mapping))
    judge = record.models.get("judge")
    return str(judge.get("model")) if isinstance(judge, Mapping) else None


def import_scenarios(modules: Sequence[str] = ()) -> list[str]:
    """Register the current project's scenarios, as a pytest run of it does: the extensions'
    entry points, the tau2 ports' sources, the ``scenarios`` package of the current folder when it
    has one (this project's layout, and the bot's), and ``modules`` (``--import``).

    Nothing a results folder says is imported: the folder is data (a CI artifact, a colleague's
    run), and a class name in its metadata.json could name any module. The current folder is
    appended to ``sys.path``, never put first, so it shadows no installed module. Returns one line
    per module that could not be imported (its scenarios then end as errors naming them)."""
    import importlib
    import os
    import sys

    from pytest_tau2.extension.registry import load_entry_points

    problems = []
    try:
        load_entry_points()
    except Exception as exc:
        problems.append(f"could not load the pytest_tau2 entry points: {type(exc).__name__}: {exc}")
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    wanted = ["pytest_tau2.domains.tau2_sources", *dict.fromkeys(modules)]
    if "scenarios" not in modules and (Path.cwd() / "scenarios" / "__init__.py").is_file():
        wanted.insert(1, "scenarios")
    for module in wanted:
        try:
            importlib.import_module(module)
        except (Exception, SystemExit) as exc:  # a module that fails loses its scenarios, never the re-score
            problems.append(f"could not import {module} (its scenarios are not re-scored): {type(exc).__name__}: {exc}")
    return problems


async def _all(
    folder: ShardFolder, settings: Settings, writer: ResultWriter, keep: bool
) -> list[tuple[ScenarioRecord | None, ErrorEntry | None, int]]:
    catalog = Catalog(settings)
    slots = asyncio.Semaphore(max(1, settings.concurrency))

    stopped: list[JudgeUnreachable] = []

    async def one(record: ScenarioRecord) -> tuple[ScenarioRecord | None, ErrorEntry | None, int]:
        async with slots:
            if stopped:  # a trial that was waiting for its slot when the judge was found unreachable
                raise stopped[0]
            try:
                return await _one(record, folder, settings, catalog, writer, keep)
            except JudgeUnreachable as exc:
                stopped.append(exc)
                raise

    tasks = [asyncio.ensure_future(one(record)) for record in folder.metrics]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:  # the first unreachable judge: no later trial starts or finishes
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        await close_model_clients(settings)


def rescore(
    source: Path, into: Path, cli: Mapping[str, Any], environ: Mapping[str, str], *, modules: Sequence[str] = ()
) -> Rescored:
    """Re-score ``source`` into the new folder ``into`` (module doc); RescoreError naming what is wrong."""
    from pytest_tau2.report.merge import MergeError

    try:
        folder = read_folder(source)
    except MergeError as exc:
        raise RescoreError(str(exc)) from None
    if into.exists() and (not into.is_dir() or any(into.iterdir())):
        raise RescoreError(f"--into {into}: exists and is not an empty folder; re-score into a new folder")
    if into.resolve() == source.resolve():
        raise RescoreError("--into must be a new folder, not the folder re-scored")
    settings = settings_for(folder, cli, into, environ)
    warnings = import_scenarios(modules)
    keep = not settings.roles.judges
    into.mkdir(parents=True, exist_ok=True)
    writer = ResultWriter(into)
    started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    try:
        done = asyncio.run(_all(folder, settings, writer, keep))
    except JudgeUnreachable as exc:
        import shutil

        shutil.rmtree(into, ignore_errors=True)  # new or empty before: no half-scored folder is left
        raise JudgeUnreachable(f"{exc} (stopped; {into} not written)") from None
    records = sorted((r for r, _, _ in done if r is not None), key=lambda r: r.folder + "\0")
    errors = [e for _, e, _ in done if e is not None]
    errors += [replace_reason(e, "in the saved run: ") for e in folder.errors]  # never had a conversation
    errors.sort(key=lambda e: e.scenario)
    changed_tools = {r.folder: n for (r, _, n) in done if r is not None and n}
    new_fp = fingerprint(settings)
    for key in FROM_SAVED_RUN:
        if key in folder.fingerprint or key in new_fp:
            new_fp[key] = folder.fingerprint.get(key)
    if keep:
        new_fp["judge_model"] = folder.fingerprint.get("judge_model")
    new_fp["rescored_from"] = str(source)
    saved_fp = {k: v for k, v in folder.fingerprint.items() if k != "rescored_from"}
    new_label = ",".join(role.model for role in settings.roles.judges) or "the saved judge"
    versus = None if keep else agreement.between(folder.metrics, records, _saved_judge_label(folder), new_label)
    rescored = {
        "from": str(source),
        "at": started,
        "changed": differences(saved_fp, {k: v for k, v in new_fp.items() if k != "rescored_from"}),
        "judge": "the saved verdicts (no judge call)" if keep else new_label,
        "tool_results_differ": changed_tools,
        "agreement_with_saved": versus,
    }
    info = RunInfo(fingerprint=new_fp, pytest_tau2=__version__, started=started, rescored=rescored)
    files.write_json(into / RUN_FILE, info.document())
    lost = [e.scenario for e in errors]
    judges = agreement.document(records)
    extra = {agreement.KEY: judges} if judges is not None else {}
    intervals = uncertainty.document(records, lost, settings.ci_level)
    document = RunMetrics.of(records, errors, pass_hat_k_document(records, lost), intervals=intervals, **extra)
    summary = f"Re-scored from {source} ({rescored['judge']})\n" + render(records, errors, level=settings.ci_level)
    lines = agreement.summary_lines(versus, "Saved judge vs new judge")
    if lines:
        summary += "\n" + "\n".join(lines) + "\n"
    if changed_tools:
        shown = ", ".join(f"{name} ({n})" for name, n in sorted(changed_tools.items())[:10])
        warnings.append(
            f"tool results differ from the saved conversation (the scenario's data or tools changed): {shown}"
        )
    failed = write_views(RunFiles(into, records, errors, document, summary))
    for name, problem in failed:
        if VIEWS[name].required:
            raise problem
        warnings.append(f"{name} not written: {type(problem).__name__}: {problem}")
    write_junit(into / JUNIT_NAME, records, errors, suite="pytest-tau2 rescore", mode=settings.junit_properties)
    before = {r.folder: r.infrastructure_error for r in folder.metrics}
    new_errors = [
        f"{r.folder}: {r.infrastructure_error}" for r in records if r.infrastructure_error and not before.get(r.folder)
    ]
    return Rescored(into, records, errors, json.loads(json.dumps(info.document(), default=str)), warnings, new_errors)


def replace_reason(entry: ErrorEntry, prefix: str) -> ErrorEntry:
    return ErrorEntry.model_validate({**entry.document(), "reason": prefix + entry.reason})


def main(argv: Sequence[str] | None = None, *, prog: str = "pytest-tau2 rescore") -> int:
    import argparse
    import os
    import sys

    from pytest_tau2.settings import OPTIONS as ALL_OPTIONS

    parser = argparse.ArgumentParser(
        prog=prog,
        description=(
            "Score every saved conversation of a results folder again, calling no agent or user model: a new "
            "judge (one or several), judge prompt or verdict, and the scenario definitions as they are now. "
            "Writes a new results folder (docs/rescoring.md)."
        ),
    )
    parser.add_argument("dir", type=Path, metavar="DIR", help="the saved results folder")
    parser.add_argument("--into", type=Path, required=True, metavar="NEW", help="the new results folder (new or empty)")
    parser.add_argument(
        "--import",
        dest="modules",
        action="append",
        default=[],
        metavar="MODULE",
        help="a module to import that registers scenarios (besides the current folder's scenarios package)",
    )
    for option in ALL_OPTIONS:
        if option.name not in OPTIONS:
            continue
        if option.kind == "bool":
            parser.add_argument(option.flag, dest=option.name, action="store_true", default=None, help=option.help)
        elif option.repeatable:
            parser.add_argument(option.flag, dest=option.name, action="append", default=None, help=option.help)
        else:
            parser.add_argument(option.flag, dest=option.name, default=None, help=option.help)
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    cli = {name: getattr(args, name) for name in OPTIONS if getattr(args, name, None) is not None}
    try:
        done = rescore(args.dir, args.into, cli, os.environ, modules=args.modules)
    except Tau2Error as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except OSError as oserror:
        print(f"{prog}: {oserror.strerror or oserror}: {oserror.filename or ''}", file=sys.stderr)
        return 2
    for warning in done.warnings:
        print(f"{prog}: warning: {warning}", file=sys.stderr)
    changed = done.info.get("rescored", {}).get("changed") or []
    print(done.count_line())
    for line in changed:
        print(f"  changed: {line}")
    print((done.into / "all_summary.txt").read_text("utf-8").rstrip())
    print(f"results: {done.into}")
    if done.new_errors:  # as a pytest run with an errored item: not a clean re-score
        print(
            f"{prog}: {len(done.new_errors)} infrastructure errors in this re-score; first: {done.new_errors[0]}",
            file=sys.stderr,
        )
        return 1
    return 0
