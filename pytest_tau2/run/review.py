"""``pytest-tau2 review DIR``: a model reviews the saved conversations of a results folder.

Each failed trial (every trial with ``--all``) is read from its folder (transcript.json, the
scenario's saved prompts and definition) and reviewed by the ``--tau2-review-model`` model(s)
(scoring/review.py). The review is written beside the trial's results (``review.json``) and into
its record (``review`` in metrics.json); the verdict is never touched. Then the run-level files are
written again from the updated records: all_metrics.json, the summary's "Failure modes" and
"Reviews" sections (the rest of all_summary.txt is kept as the run wrote it), failure_modes.json
and report.html.

Calls go through the cassette layer (``--tau2-record-mode``, ``--tau2-cassette-dir``: one cassette
``review-<trial>``), so a review recorded once replays offline. A reviewer that cannot be called
stops the command at once, naming the model and the cause (exit 2); a reply that is no readable
review is that trial's error, recorded in its review.json, and the others go on (exit 1 at the end).
"""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_tau2.errors import Tau2Error
from pytest_tau2.llm.config import RetryPolicy
from pytest_tau2.llm.usage import UsageMeter
from pytest_tau2.report import failure_modes, files, reviews
from pytest_tau2.report.merge import MergeError, ShardFolder, read_folder
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.run_record import RunMetrics
from pytest_tau2.report.views import VIEWS, RunFiles, write_views
from pytest_tau2.run.judges import judge_labels
from pytest_tau2.run.reviewing import configs_for
from pytest_tau2.scoring.review import MODES, Reviewer, ReviewError, ReviewInput, ReviewMode

REVIEW_FILE = "review.json"


class ReviewCommandError(Tau2Error):
    """The folder or the options cannot be reviewed (the message says which and why)."""


@dataclass
class Reviewed:
    folder: Path
    reviewed: list[str] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    skipped: int = 0
    usage: UsageMeter = field(default_factory=UsageMeter)


def review_input(trial: Path, record: ScenarioRecord) -> ReviewInput:
    """What the reviewer reads about one saved trial; ReviewCommandError naming a missing or bad file."""
    config = trial / "scenario_config"
    try:
        transcript = json.loads((trial / "transcript.json").read_text("utf-8"))
        messages = transcript["messages"] if isinstance(transcript, Mapping) else transcript
        if not isinstance(messages, list):
            raise ValueError("'messages' is not a list")
        metadata = json.loads((config / "metadata.json").read_text("utf-8"))
        policy = (config / "agent_prompt.txt").read_text("utf-8")
        instructions = (config / "user_prompt.txt").read_text("utf-8")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ReviewCommandError(f"{trial}: cannot be reviewed: {type(exc).__name__}: {exc}") from None
    gold = _literal(metadata.get("gold_actions"))
    assertions = _literal(metadata.get("nl_assertions"))
    failed = ", ".join(record.success_breakdown.failed or []) or "none"
    outcome = f"is_successful: {record.is_successful}; failed signals: {failed}; stop reason: {record.stop_reason}" + (
        f"; first divergence from gold: {record.first_divergence.get('summary')}" if record.first_divergence else ""
    )
    return ReviewInput(
        policy=policy,
        user_instructions=instructions,
        gold_actions=[a for a in gold if isinstance(a, Mapping)] if isinstance(gold, list) else [],
        nl_assertions=[str(a) for a in assertions] if isinstance(assertions, list) else [],
        transcript=[m for m in messages if isinstance(m, Mapping)],
        outcome=outcome,
    )


def _literal(value: object) -> object:
    """metadata.json keeps a scenario's attributes as Python literals' text (``"[{'name': ...}]"``)."""
    if not isinstance(value, str):
        return value
    try:
        return ast.literal_eval(value)  # literals only: a results folder is data, never code
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


async def _review_all(
    folder: ShardFolder,
    chosen: list[ScenarioRecord],
    make: Any,
    concurrency: int,
    done: Reviewed,
) -> dict[str, dict[str, Any]]:
    """Review the chosen trials, ``concurrency`` at once; the first reviewer that cannot be called
    stops every review (ReviewError raised), an unreadable reply is that trial's error."""
    slots = asyncio.Semaphore(max(1, concurrency))
    found: dict[str, dict[str, Any]] = {}

    async def one(record: ScenarioRecord) -> None:
        async with slots:
            trial = folder.path / record.folder
            try:
                item = review_input(trial, record)
            except ReviewCommandError as exc:
                found[record.folder] = {"error": str(exc)}
                done.unreadable.append((record.folder, str(exc)))
                return
            reviewer: Reviewer = make(record.folder)
            try:
                review = await reviewer.review(item)
            except ReviewError as exc:
                if exc.raw_reply is None:
                    raise  # the model could not be called: stop, as a pytest run would
                found[record.folder] = {"error": str(exc), "raw_reply": exc.raw_reply}
                done.unreadable.append((record.folder, str(exc)))
                return
            finally:
                if reviewer.cassette is not None:
                    reviewer.cassette.save()
            found[record.folder] = review.to_dict()
            done.reviewed.append(record.folder)

    tasks = [asyncio.ensure_future(one(record)) for record in chosen]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        from pytest_tau2.llm.client import aclose

        await aclose()
    return found


def review_folder(
    source: Path,
    models: Sequence[str],
    *,
    args: str | None = None,
    mode: ReviewMode = "full",
    everything: bool = False,
    record_mode: str = "off",
    cassette_dir: Path | None = None,
    concurrency: int = 8,
    retry: RetryPolicy | None = None,
) -> Reviewed:
    """Review ``source``'s failed (or every) trial in place (module doc)."""
    try:
        folder = read_folder(source)
    except MergeError as exc:
        raise ReviewCommandError(str(exc)) from None
    configs = configs_for(",".join(models), args)
    labels = judge_labels(configs)
    done = Reviewed(source)
    chosen = [r for r in folder.metrics if everything or failure_modes.failed(r)]
    done.skipped = len(folder.metrics) - len(chosen)

    def make(name: str) -> Reviewer:
        cassette = None
        if record_mode != "off":
            from pytest_tau2.llm.cassette import Cassette

            cassette = Cassette.open(cassette_dir or Path("cassettes"), f"review-{name}", record_mode)
        return Reviewer(configs, labels, retry or RetryPolicy(), done.usage, mode, cassette)

    found = asyncio.run(_review_all(folder, chosen, make, concurrency, done))
    records = []
    for record in folder.metrics:
        review = found.get(record.folder)
        if review is None:
            records.append(record)
            continue
        trial = source / record.folder
        files.write_json(trial / REVIEW_FILE, review)
        updated = record.model_copy(update={"review": {k: v for k, v in review.items() if k != "raw_reply"}})
        files.write_json(trial / "metrics.json", updated.document())  # atomic: a complete result either way
        records.append(updated)
    _write_run_files(source, folder, records)
    return done


def _write_run_files(source: Path, folder: ShardFolder, records: list[ScenarioRecord]) -> None:
    document = RunMetrics.of(records, folder.errors, **folder.other)
    summary_path = source / "all_summary.txt"
    old = summary_path.read_text("utf-8") if summary_path.exists() else ""
    summary = with_sections(old, [failure_modes.summary_lines(records), reviews.summary_lines(records)])
    failed = write_views(RunFiles(source, records, folder.errors, document, summary))
    for name, problem in failed:
        if VIEWS[name].required:
            raise ReviewCommandError(f"{source / name} not written: {problem}")


SECTION_HEADS = ("Failure modes (", "Reviews (")


def with_sections(text: str, sections: Sequence[list[str]]) -> str:
    """``text`` (a run's summary) with its failure-modes and reviews sections replaced by ``sections``
    (placed after the headline block); every other line is kept as the run wrote it."""
    blocks = [b for b in text.rstrip("\n").split("\n\n")] if text.strip() else []
    kept = [b for b in blocks if not b.startswith(SECTION_HEADS)]
    new = ["\n".join(lines) for lines in sections if lines]
    merged = kept[:1] + new + kept[1:]
    return "\n\n".join(merged) + "\n"


def main(argv: Sequence[str] | None = None, *, prog: str = "pytest-tau2 review") -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog=prog,
        description="A model reviews the saved conversations of a results folder for the agent's and the "
        "simulated user's errors (tau2 review's vocabulary); written beside each result and into its record, "
        "never changing a verdict (docs/review.md).",
    )
    parser.add_argument("dir", type=Path, metavar="DIR", help="the saved results folder (updated in place)")
    parser.add_argument("--tau2-review-model", dest="models", action="append", default=[], metavar="MODEL",
                        help="the reviewing model (litellm name); several (A,B or repeated) make a jury")  # fmt: skip
    parser.add_argument("--tau2-review-args", dest="args", metavar="JSON", help="model arguments, a JSON object")
    parser.add_argument("--tau2-review-mode", dest="mode", choices=MODES, default="full",
                        help="full: agent and user errors (default); user: the simulated user's only")  # fmt: skip
    parser.add_argument("--all", dest="everything", action="store_true", help="review every trial, not only failures")
    modes = ("off", "none", "once", "new_episodes", "all")
    parser.add_argument("--tau2-record-mode", dest="record_mode", default="off", choices=modes,
                        help="cassettes of the review calls (docs/recording.md)")  # fmt: skip
    parser.add_argument("--tau2-cassette-dir", dest="cassette_dir", type=Path, help="the cassettes' folder")
    parser.add_argument("--concurrency", type=int, default=8, help="reviews in flight at once (default 8)")
    parsed = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if not parsed.models:
        parser.error("--tau2-review-model is required (the model that reviews)")
    try:
        done = review_folder(
            parsed.dir, parsed.models, args=parsed.args, mode=parsed.mode, everything=parsed.everything,
            record_mode=parsed.record_mode, cassette_dir=parsed.cassette_dir, concurrency=parsed.concurrency,
        )  # fmt: skip
    except ReviewError as exc:
        print(f"{prog}: stopped: {exc}", file=sys.stderr)
        return 2
    except Tau2Error as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{prog}: {exc.strerror or exc}: {exc.filename or ''}", file=sys.stderr)
        return 2
    print(f"reviewed {len(done.reviewed)} trials ({done.skipped} not failed, not reviewed: --all reviews them)")
    for name, reason in done.unreadable:
        print(f"  no review for {name}: {reason}")
    lines = reviews.summary_lines(read_folder(parsed.dir).metrics)
    if lines:
        print("\n".join(lines))
    print(f"results: {parsed.dir}")
    return 1 if done.unreadable else 0
