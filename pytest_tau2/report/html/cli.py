"""``pytest-tau2 report DIR [DIR ...] [-o FILE]``: the HTML report of saved results."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from pytest_tau2.report.html.loader import ReportInputError
from pytest_tau2.report.html.render import write_report

COMPARISON_NAME = "tau2-comparison.html"


def main(argv: Sequence[str] | None = None, *, prog: str = "pytest-tau2 report") -> int:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=(
            "Build one self-contained HTML report from saved results folders. One folder: its run "
            "report (default DIR/report.html). Several: a comparison, one row per scenario with "
            f"each run's outcome (default ./{COMPARISON_NAME})."
        ),
    )
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="a results folder (tau2-results/<run>)")
    parser.add_argument("-o", "--output", type=Path, metavar="FILE", help="where to write the HTML file")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    dirs: list[Path] = args.dirs
    output: Path = args.output or (dirs[0] / "report.html" if len(dirs) == 1 else Path(COMPARISON_NAME))
    start = time.perf_counter()
    try:
        written = write_report(dirs, output)
    except ReportInputError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{prog}: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    size_mb = written.stat().st_size / 1e6
    print(f"report: {written} ({size_mb:.1f} MB, {time.perf_counter() - start:.1f} s)")
    return 0
