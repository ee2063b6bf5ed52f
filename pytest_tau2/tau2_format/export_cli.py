"""``pytest-tau2 export DIR --format tau2 --into OUT``: a results folder as tau2-bench's files.

Writes ``OUT/<domain>.json`` (upstream's ``Results``: ``tau2 view``, ``tau2 evaluate-trajs`` and the
leaderboard's verifier read it) per tau2 domain of the run, and ``OUT/submission.json``, a draft of
upstream's leaderboard submission whose unknown fields say ``FILL IN``. A folder that breaks
upstream's submission rules is refused, every problem named (exit status 1); ``--partial`` writes
the Results files all the same, and no submission.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_tau2.data.resolve import resolve_data_dir
from pytest_tau2.report import files
from pytest_tau2.report.merge import MergeError, check_consistent, read_folder
from pytest_tau2.tau2_format import export, submission


def parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n", 1)[0])
    p.add_argument("results_dir", metavar="DIR", type=Path, help="a finished pytest-tau2 results folder")
    p.add_argument("--format", choices=["tau2"], default="tau2", help="the format to write (only tau2)")
    p.add_argument("--into", metavar="OUT", type=Path, required=True, help="folder to write the files into")
    p.add_argument("--data-dir", metavar="PATH", help="the tau2 data folder (default: the run's, $TAU2_DATA_DIR)")
    p.add_argument(
        "--partial",
        action="store_true",
        help="write the Results files even when the run breaks upstream's submission rules (no submission.json)",
    )
    p.add_argument(
        "--allow-seed-prompts",
        action="store_true",
        help="export a run whose model was shown our seed prompts (--tau2-prompts seed), not upstream's",
    )
    return p


def main(argv: Sequence[str] | None = None, *, prog: str = "pytest-tau2 export") -> int:
    args = parser(prog).parse_args(argv)
    try:
        written, notes = run(
            args.results_dir, args.into, data_dir=args.data_dir, partial=args.partial,
            allow_seed_prompts=args.allow_seed_prompts,
        )  # fmt: skip
    except (export.ExportError, MergeError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # a file that cannot be written: one line naming it
        print(f"{prog}: cannot write {exc.filename or args.into}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    for note in notes:
        print(f"note: {note}")
    for path in written:
        print(f"wrote {path}")
    return 0


def run(
    results_dir: Path, into: Path, *, data_dir: str | None = None, partial: bool = False,
    allow_seed_prompts: bool = False,
) -> tuple[list[Path], list[str]]:  # fmt: skip
    """Export one folder; the files written and notes on what was left out. :class:`ExportError`
    (every problem named) when the folder cannot be exported."""
    if into.exists() and not into.is_dir():
        raise export.ExportError(f"--into {into}: exists and is not a folder; export into a folder")
    folder = read_folder(results_dir)
    check_consistent(folder)  # a tampered or half-written folder is refused, as merge refuses it
    runs, other = export.split_domains(folder)
    notes = [f"{len(other)} results are no tau2 task and are not exported: {export._some(other)}"] if other else []
    if not runs:
        raise export.ExportError(f"{results_dir}: no tau2 results to export")
    seeded = export.seed_prompted(runs)
    if seeded and not allow_seed_prompts:
        raise export.ExportError(
            f"{results_dir}: {seeded}; its trajectories were made under prompts upstream's agent and user never "
            "see, so they are not the benchmark as published (run with --tau2-prompts upstream and a tau2 view from "
            "`pytest-tau2 data view`, or pass --allow-seed-prompts to export them all the same)"
        )
    if seeded:
        notes.append(f"exported although {seeded} (--allow-seed-prompts)")
    root = _data_root(data_dir, runs)
    trials = int(folder.fingerprint.get("trials") or 1)
    problems = export.rule_problems(runs, root, trials)
    if problems and not partial:
        listed = "\n".join(f"  - {problem}" for problem in problems)
        raise export.ExportError(
            f"{results_dir} breaks upstream's submission rules, so it cannot be submitted:\n{listed}\n"
            "(--partial writes the Results files all the same, without a submission.json)"
        )
    notes += [f"not a valid submission: {problem}" for problem in problems]
    exported = {
        domain: export.results(run, folder, root, partial=bool(problems)) for domain, run in sorted(runs.items())
    }
    names = {domain: f"{domain}.json" for domain in exported}
    written = []
    for domain, result in exported.items():
        path = into / names[domain]
        files.write_text(path, result.text())
        written.append(path)
    if not problems:
        draft = export.draft_submission(exported, runs, folder, names)
        path = into / "submission.json"
        files.write_text(path, draft.text())
        written.append(path)
        notes.append(f"{path}: fields marked {submission.PLACEHOLDER!r} are yours to fill in")
    return written, notes


def _data_root(data_dir: str | None, runs: dict[str, export.DomainRun]) -> Path:
    recorded = next(
        (r.data_pin.data_dir for run in runs.values() for r in run.records if r.data_pin and r.data_pin.data_dir), None
    )
    root = resolve_data_dir(data_dir) or (Path(recorded) if recorded else None)
    if root is None or not (root / "tau2" / "domains").is_dir():
        raise export.ExportError(
            f"no tau2 data folder at {root} (give --data-dir or set TAU2_DATA_DIR): the tasks are copied from it"
        )
    return root
