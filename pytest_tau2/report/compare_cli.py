"""``pytest-tau2 compare A B [--json FILE] [--intersect] [--allow-different-rules] [--power P --delta D]``:
is B better than A? The paired comparison of two saved results folders (:mod:`.compare_runs`, docs/statistics.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_tau2.report import files
from pytest_tau2.report.compare_runs import CompareError, RunSide, compare


def load_side(path: Path) -> RunSide:
    """A saved results folder as a side (CompareError naming the folder or file it cannot read)."""
    from pytest_tau2.report.html.loader import ReportInputError, load_run

    try:
        run = load_run(Path(path))
    except ReportInputError as exc:
        raise CompareError(str(exc)) from None
    fingerprint = run.info.get("fingerprint")
    return RunSide(
        str(path),
        list(run.scenarios),
        [e.name for e in run.errors_without_result],
        dict(fingerprint) if isinstance(fingerprint, dict) else None,
    )


def main(argv: Sequence[str] | None = None, *, prog: str = "pytest-tau2 compare") -> int:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Is B better than A? The paired comparison of two saved results folders over the same "
        "scenarios (docs/statistics.md). Exit status 0 whatever the verdict; 2 when they cannot be compared.",
    )
    parser.add_argument("a", type=Path, metavar="A", help="the reference results folder (e.g. main's run)")
    parser.add_argument("b", type=Path, metavar="B", help="the results folder of the change")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the comparison as JSON")
    parser.add_argument("--intersect", action="store_true", help="compare the scenarios both runs have")
    parser.add_argument(
        "--allow-different-rules",
        action="store_true",
        help="compare runs scored under different rules (min agent turns, judges, judge prompt, verdict, "
        "limits) and note each difference, instead of refusing",
    )
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--ci-level", type=float, default=0.95, help="interval level (default 0.95)")
    parser.add_argument("--power", type=float, metavar="P", help="runs needed to detect --delta with power P")
    parser.add_argument("--delta", type=float, metavar="D", help="the difference to detect (0.05: 5 points)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if (args.power is None) != (args.delta is None):
        parser.error("--power and --delta go together (e.g. --power 0.8 --delta 0.05)")
    try:
        if args.power is not None:
            from pytest_tau2.stats.noise import check_effect

            check_effect(args.delta, args.alpha, args.power)
        power = None if args.power is None else (args.power, args.delta)
        result = compare(load_side(args.a), load_side(args.b), intersect=args.intersect, alpha=args.alpha,
                         level=args.ci_level, power=power, different_rules=args.allow_different_rules)  # fmt: skip
    except (CompareError, ValueError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    print("\n".join(result.lines()))
    if args.json is not None:
        try:
            files.write_json(args.json, result.to_dict())
        except OSError as exc:
            print(f"{prog}: cannot write {args.json}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    return 0
